import { randomBytes } from 'node:crypto';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRecording, readRecordingMeta, type RecordedExchange } from '../src/transport/record-reader.js';
import { RecordWriter } from '../src/transport/record-writer.js';
import type { RequestOutcome } from '../src/transport/request-observer.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'evesim-record-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function outcome(i: number): RequestOutcome {
  const failed = i % 7 === 3;
  const o: RequestOutcome = {
    endpoint: i % 2 ? 'metrics' : 'config',
    deviceIndex: i % 13,
    method: i % 5 === 0 ? 'GET' : 'POST',
    path: `/api/v2/edgedevice/id/dev-${i}/x`,
    status: failed ? 0 : 200,
    dueAt: 1000 + i,
    sentAt: 1001 + i,
    doneAt: 1010 + i * 2,
    requestBody: i % 5 === 0 ? undefined : randomBytes(1 + ((i * 97) % 3000)),
    requestHeaders: { 'x-request-id': `req-${i}` },
  };
  if (failed) o.error = 'timeout';
  else {
    o.responseBody = i % 4 === 0 ? new Uint8Array(0) : randomBytes((i * 31) % 5000);
    o.responseHeaders = { 'content-type': 'application/x-proto-binary', 'set-cookie': ['a', 'b'] };
  }
  return o;
}

async function collect(d: string): Promise<RecordedExchange[]> {
  const out: RecordedExchange[] = [];
  for await (const x of readRecording(d)) out.push(x);
  return out;
}

function same(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return Buffer.compare(Buffer.from(a ?? new Uint8Array(0)), Buffer.from(b)) === 0;
}

describe('record writer and reader', () => {
  it('round-trips every exchange with its bodies, across many flushes', async () => {
    // Small flush threshold: many batches; 1500 exchanges: one batch can exceed IOV_MAX bodies.
    const w = await RecordWriter.open(dir, { flushBytes: 64 * 1024 });
    const sent = Array.from({ length: 1500 }, (_, i) => outcome(i));
    for (const o of sent) w.onOutcome(o);
    const stats = await w.close();
    expect(stats.exchanges).toBe(1500);
    expect(stats.dropped).toBe(0);

    const got = await collect(dir);
    expect(got).toHaveLength(1500);
    got.forEach((x, i) => {
      const o = sent[i]!;
      expect(x.seq).toBe(i);
      expect(x).toMatchObject({
        deviceIndex: o.deviceIndex,
        endpoint: o.endpoint,
        method: o.method,
        path: o.path,
        status: o.status,
        dueAt: o.dueAt,
        sentAt: o.sentAt,
        doneAt: o.doneAt,
        latencyMs: o.doneAt - o.dueAt,
        requestHeaders: o.requestHeaders,
      });
      expect(x.error).toBe(o.error);
      expect(x.responseHeaders).toEqual(o.responseHeaders);
      expect(same(o.requestBody, x.requestBody)).toBe(true);
      expect(same(o.responseBody, x.responseBody)).toBe(true);
    });

    const meta = await readRecordingMeta(dir);
    expect(meta).toMatchObject({ format: 'evesim-record', version: 1, exchanges: 1500, dropped: 0 });
    expect(meta.closedAt).toBeDefined();
  });

  it('bounds its memory: drops and counts what does not fit, leaving gaps in seq', async () => {
    const w = await RecordWriter.open(dir, { maxBufferedBytes: 20_000, flushBytes: 1 << 30, flushIntervalMs: 60_000 });
    for (let i = 0; i < 50; i++) {
      w.onOutcome({ ...outcome(1), requestBody: randomBytes(3000), responseBody: undefined });
    }
    expect(w.stats().dropped).toBeGreaterThan(0);
    const { exchanges, dropped } = await w.close();
    expect(exchanges + dropped).toBe(50);
    expect(exchanges).toBeLessThan(10);
    const got = await collect(dir);
    expect(got).toHaveLength(exchanges);
    expect((await readRecordingMeta(dir)).dropped).toBe(dropped);
  });

  it('flushes in the background before close', async () => {
    const w = await RecordWriter.open(dir, { flushIntervalMs: 20 });
    w.onOutcome(outcome(1));
    // Wait for the background flush (due after 20 ms) with a generous bound, not a fixed 100 ms.
    const indexLines = async () => (await readFile(path.join(dir, 'index.ndjson'), 'utf8').catch(() => '')).split('\n').length;
    const end = Date.now() + 30_000;
    while ((w.stats().exchanges < 1 || (await indexLines()) < 2) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(w.stats().exchanges, 'no background flush within 30 s').toBe(1);
    expect((await readFile(path.join(dir, 'index.ndjson'), 'utf8')).split('\n')).toHaveLength(2);
    await w.close();
  });

  it('refuses to overwrite an earlier recording', async () => {
    const w = await RecordWriter.open(dir);
    await w.close();
    await expect(RecordWriter.open(dir)).rejects.toThrow(/already holds a recording/);
  });

  it('ignores a partial last line and detects damaged bodies', async () => {
    const w = await RecordWriter.open(dir);
    for (let i = 1; i < 4; i++) w.onOutcome(outcome(i));
    await w.close();
    await appendFile(path.join(dir, 'index.ndjson'), '{"seq":3,"device"');
    expect(await collect(dir)).toHaveLength(3);

    const bodies = await readFile(path.join(dir, 'bodies.bin'));
    bodies[0] = bodies[0]! ^ 0xff;
    await writeFile(path.join(dir, 'bodies.bin'), bodies);
    await expect(collect(dir)).rejects.toThrow(/index.ndjson line 1 request body: sha256 prefix .* does not match/);
  });

  it('names the line of a malformed index entry', async () => {
    const w = await RecordWriter.open(dir);
    w.onOutcome(outcome(1));
    await w.close();
    await appendFile(path.join(dir, 'index.ndjson'), '{"seq":1}\n');
    await expect(collect(dir)).rejects.toThrow(/index.ndjson line 2: field "device" missing/);
  });
});
