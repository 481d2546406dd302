// Log files kept as EVE keeps them on disk (telemetry/log-uploader.ts, log-quota.ts): a controller
// outage loses no file, memory per device stays within its budget (the rest waits in the worker's
// spill file, fleet/log-spill-file.ts), and only EVE's own quota deletes files — the oldest app
// files first, then the oldest device files — counted apart from undelivered.

import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readNewlogsFile } from '../src/protocol/newlogs.js';
import type { TransportRequest } from '../src/device/ports.js';
import { LOG_MEMORY_BUDGET_BYTES, type LogSpill } from '../src/device/telemetry/log-spill-port.js';
import { EVE_LOG_QUOTA_MB, logQuota } from '../src/device/telemetry/log-quota.js';
import { LogSpillFile } from '../src/fleet/log-spill-file.js';
import { decodeSpillRecords } from '../src/fleet/log-spill-record.js';
import { GROUP_DEFAULTS } from '../src/scenario/scenario-defaults.js';
import { onboard, payloadOf, rig, type Rig } from './device-harness.js';

const APP = 'a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61';
const NI = 'c0ffee00-0000-4000-8000-000000000001';

const dirs: string[] = [];
function stateDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'evesim-logkeep-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Reads from a spill file under way: real file I/O, which the fake clock cannot wait for. */
let spillReadsInFlight = 0;

/** `store` with its reads done by `read` instead. */
function withRead(store: LogSpill, read: LogSpill['read']): LogSpill {
  return { put: (device, bytes) => store.put(device, bytes), release: (ref) => store.release(ref), read };
}

/** `store` with its reads counted in spillReadsInFlight. */
function counted(store: LogSpill): LogSpill {
  return withRead(store, (ref) => {
    spillReadsInFlight++;
    return store.read(ref).finally(() => spillReadsInFlight--);
  });
}

/**
 * Between fake-clock steps: lets the spill's reads finish, and what they set off, before the clock
 * moves on. It waits for them, not for a set time: a loaded machine's reads once outlasted the
 * 1 ms this used to give them, and the upload ticks fell behind the clock.
 */
async function realTick(): Promise<void> {
  do await new Promise<void>((r) => setTimeout(r, 1));
  while (spillReadsInFlight > 0);
}

interface Outage {
  down: boolean;
  delivered: { endpoint: string; req: TransportRequest }[];
}

/** Newlogs (device and app) refused with no answer while `down`; delivered ones recorded in order. */
function controllerOutage(r: Rig): Outage {
  const o: Outage = { down: false, delivered: [] };
  r.controller.hook = (q) => {
    if (q.endpoint !== 'newlogs' && q.endpoint !== 'appnewlogs') return undefined;
    if (o.down) return 'transport-error';
    o.delivered.push({ endpoint: q.endpoint, req: q });
    return undefined;
  };
  return o;
}

/** msgid of every line of the delivered files of `endpoint`, in delivery order (an absent msgid is 0). */
function msgids(r: Rig, o: Outage, endpoint: string): number[] {
  return o.delivered
    .filter((d) => d.endpoint === endpoint)
    .flatMap((d) => readNewlogsFile(payloadOf(r, d.req)).rawLines.map((l) => (JSON.parse(l) as { msgid?: number }).msgid ?? 0));
}

/** Advances `ms` in 15 s steps, sampling the device's log keeping after each. */
async function run(r: Rig, ms: number, sample: (k: { keptBytes: number; memoryBytes: number }) => void = () => {}): Promise<void> {
  const end = r.time.now() + ms;
  while (r.time.now() < end) {
    await r.time.advance(15_000);
    await realTick();
    sample(r.device.logKeeping());
  }
}

/**
 * After the outage: `ms` on EVE's upload cadence (one device and one app file per tick), then the
 * end-of-run drain closes the lines written since the last file and delivers what is left, so every
 * line is accounted for.
 */
async function recoverAndDrain(r: Rig, ms: number): Promise<void> {
  await run(r, ms);
  r.device.drain();
  for (let i = 0; i < 200 && !r.device.drained; i++) {
    await r.time.advance(5_000);
    await realTick();
  }
  if (!r.device.drained) throw new Error(`log backlog not drained: ${r.device.backlog().logs} files`);
}

/** Delivered lines were sent in order (msgids ascend) and none twice. */
function ascending(ids: number[]): boolean {
  return ids.every((id, i) => i === 0 || id > ids[i - 1]!);
}

describe('EVE log quota (eve-wire-facts §3.5, §8.3)', () => {
  it("is EVE's newlog.gzipfiles.ondisk.maxmegabytes: 2048 MB and quota / 50,000 files by default", () => {
    expect(EVE_LOG_QUOTA_MB).toBe(2048);
    expect(logQuota()).toEqual({ bytes: 2_048_000_000, files: 40_960 });
    expect(GROUP_DEFAULTS.logQuotaMB).toBe(2048);
  });
});

describe('a controller outage of many minutes', () => {
  it('keeps every log file, delivers them in order afterwards, and holds no more than the memory budget', async () => {
    const spill = new LogSpillFile(stateDir(), 0);
    const r = rig({ behaviour: { logLinesPerSec: 10 }, logSpill: counted(spill) });
    const o = controllerOutage(r);
    await onboard(r);
    await run(r, 200_000);
    const before = msgids(r, o, 'newlogs').length;
    expect(before).toBeGreaterThan(0);

    o.down = true;
    let peakMemory = 0;
    let peakKept = 0;
    await run(r, 20 * 60_000, (k) => {
      peakMemory = Math.max(peakMemory, k.memoryBytes);
      peakKept = Math.max(peakKept, k.keptBytes);
    });
    // Far more than the budget was kept, and the budget held: the rest went to the spill file.
    expect(peakKept).toBeGreaterThan(2 * LOG_MEMORY_BUDGET_BYTES);
    expect(peakMemory).toBeLessThanOrEqual(LOG_MEMORY_BUDGET_BYTES);
    expect(spill.figures().liveRecords).toBeGreaterThan(0);

    o.down = false;
    await run(r, 60 * 60_000);
    // On EVE's cadence alone, within the hour after the outage, every line written up to its end
    // arrived (about 10 lines/s × 1400 s), in order, with no gap: msgids 0, 1, 2, ...
    const recovered = msgids(r, o, 'newlogs');
    expect(recovered.length).toBeGreaterThan(before + 20 * 60 * 10);
    expect(recovered).toEqual(recovered.map((_, i) => i));
    await recoverAndDrain(r, 0);
    const ids = msgids(r, o, 'newlogs');
    expect(ids).toEqual(ids.map((_, i) => i));
    expect(r.device.backlog().logs).toBe(0);
    r.device.stop();
    const s = r.device.stats();
    expect(s.undelivered.logs).toBe(0);
    expect(s.droppedByQuota).toEqual({ logs: 0, logEntries: 0 });
    expect(spill.figures().liveRecords).toBe(0);
    spill.close();
  }, 60_000);

  it('with a memory budget of 0 (--log-memory 0) holds no file in memory: every waiting file is on disk, and all arrive', async () => {
    const spill = new LogSpillFile(stateDir(), 0);
    const r = rig({ behaviour: { logLinesPerSec: 10 }, logSpill: counted(spill), options: { logMemoryBytes: 0 } });
    const o = controllerOutage(r);
    await onboard(r);
    o.down = true;
    let peakMemory = 0;
    let peakKept = 0;
    let peakSpilled = 0;
    await run(r, 10 * 60_000, (k) => {
      peakMemory = Math.max(peakMemory, k.memoryBytes);
      peakKept = Math.max(peakKept, k.keptBytes);
      peakSpilled = Math.max(peakSpilled, spill.figures().liveRecords);
    });
    expect(peakKept).toBeGreaterThan(0);
    expect(peakSpilled).toBeGreaterThan(1);
    expect(peakMemory).toBe(0);
    o.down = false;
    await recoverAndDrain(r, 30 * 60_000);
    // Read back from the spill, every line arrived once and in order: msgids 0, 1, 2, ...
    const ids = msgids(r, o, 'newlogs');
    expect(ids.length).toBeGreaterThan(10 * 60 * 10 * 0.9);
    expect(ids).toEqual(ids.map((_, i) => i));
    r.device.stop();
    expect(r.device.stats().undelivered.logs).toBe(0);
    expect(spill.figures().liveRecords).toBe(0);
    spill.close();
  }, 60_000);

  it('a drain that begins while an upload awaits its read from the spill waits for it: no file is sent twice', async () => {
    const file = new LogSpillFile(stateDir(), 0);
    const store = counted(file);
    // Reads are held until released (and not counted as under way), as a slow disk would hold them.
    const held: (() => void)[] = [];
    let reads = 0;
    const spill = withRead(store, (ref) => {
      reads++;
      return new Promise<void>((go) => held.push(go)).then(() => store.read(ref));
    });
    const r = rig({ behaviour: { logLinesPerSec: 10 }, logSpill: spill, options: { logMemoryBytes: 0 } });
    const o = controllerOutage(r);
    await onboard(r);
    o.down = true;
    await run(r, 5 * 60_000);
    o.down = false;
    // Until an upload tick is waiting for its file's bytes.
    for (let i = 0; i < 100 && reads === 0; i++) {
      await r.time.advance(5_000);
      await realTick();
    }
    expect(reads).toBe(1);
    r.device.drain();
    // The drain's first tick is due now; the tick before it still awaits its read.
    for (let i = 0; i < 6; i++) {
      await r.time.advance(5_000);
      await realTick();
    }
    expect(reads).toBe(1);
    // Reads go through from now on, and the drain delivers the rest.
    spill.read = (ref) => store.read(ref);
    held.splice(0).forEach((go) => go());
    for (let i = 0; i < 400 && !r.device.drained; i++) {
      await r.time.advance(5_000);
      await realTick();
    }
    expect(r.device.drained).toBe(true);
    const ids = msgids(r, o, 'newlogs');
    expect(ids.length).toBeGreaterThan(5 * 60 * 10 * 0.9);
    expect(ids).toEqual(ids.map((_, i) => i));
    r.device.stop();
    expect(r.device.stats().undelivered.logs).toBe(0);
    file.close();
  }, 60_000);

  it('counts a kept file that cannot be read back as undelivered, as a device error, and goes on uploading the rest', async () => {
    const store = new LogSpillFile(stateDir(), 0);
    // The first read of a kept file fails, as a damaged disk would; every other read is the store's.
    let failedReads = 0;
    const readable = counted(store);
    const spill = withRead(store, (ref) => {
      if (failedReads > 0) return readable.read(ref);
      failedReads++;
      return Promise.reject(new Error('EIO: the kept copy is unreadable'));
    });
    const r = rig({ behaviour: { logLinesPerSec: 10 }, logSpill: spill, options: { logMemoryBytes: 0 } });
    const o = controllerOutage(r);
    await onboard(r);
    o.down = true;
    await run(r, 10 * 60_000);
    expect(store.figures().liveRecords).toBeGreaterThan(1);
    o.down = false;
    await recoverAndDrain(r, 30 * 60_000);
    expect(failedReads).toBe(1);
    r.device.stop();
    const s = r.device.stats();
    // Exactly the one unreadable file is lost, counted; the upload loop kept going and delivered the rest.
    expect(s.undelivered.logs).toBe(1);
    expect(s.internalErrors).toBe(1);
    expect(o.delivered.filter((d) => d.endpoint === 'newlogs' || d.endpoint === 'appnewlogs').length).toBeGreaterThan(2);
    expect(r.device.backlog().logs).toBe(0);
    expect(store.figures().liveRecords).toBe(0);
    store.close();
  }, 60_000);

  it('drains the backlog an outage left on EVE\'s cadence, as newlogd rotates its raw file at most every 300 s', async () => {
    const r = rig({ behaviour: { logLinesPerSec: 2 } });
    const o = controllerOutage(r);
    await onboard(r);
    await run(r, 200_000);
    o.down = true;
    await run(r, 12 * 60_000);
    const left = r.device.backlog().logs;
    expect(left).toBeGreaterThanOrEqual(2);
    o.down = false;
    // A new file closed at every upload tick would keep the backlog level for ever; closed only when
    // none waits (or 300 s after the last), it empties within a few ticks (90 s apart at this size).
    let lowest = left;
    await run(r, 15 * 60_000, () => (lowest = Math.min(lowest, r.device.backlog().logs)));
    expect(lowest).toBe(0);
    // Nothing was lost on the way: every line in order.
    await recoverAndDrain(r, 0);
    const ids = msgids(r, o, 'newlogs');
    expect(ids).toEqual(ids.map((_, i) => i));
    r.device.stop();
    expect(r.device.stats().undelivered.logs).toBe(0);
  }, 60_000);

  it('over the quota drops the oldest waiting files, counted as dropped by the quota, not undelivered', async () => {
    const spill = new LogSpillFile(stateDir(), 0);
    // 100,000 bytes: at most 2 files and 100,000 bytes kept.
    const r = rig({ behaviour: { logLinesPerSec: 10, logQuotaBytes: 100_000 }, logSpill: counted(spill) });
    const o = controllerOutage(r);
    await onboard(r);
    await run(r, 200_000);
    const before = msgids(r, o, 'newlogs');
    o.down = true;
    let peakKept = 0;
    await run(r, 20 * 60_000, (k) => (peakKept = Math.max(peakKept, k.keptBytes)));
    expect(peakKept).toBeLessThanOrEqual(100_000);
    const droppedInOutage = r.device.stats().droppedByQuota.logEntries;
    expect(droppedInOutage).toBeGreaterThan(0);
    o.down = false;
    await recoverAndDrain(r, 10 * 60_000);
    r.device.stop();
    const s = r.device.stats();
    expect(s.droppedByQuota.logs).toBeGreaterThan(0);
    expect(s.undelivered.logs).toBe(0);
    // Delivered in order; every line either delivered or counted as dropped by the quota.
    const ids = msgids(r, o, 'newlogs');
    expect(ascending(ids)).toBe(true);
    expect(ids.length + s.droppedByQuota.logEntries).toBe(ids[ids.length - 1]! + 1);
    // The oldest went: right after the lines delivered before the outage comes a gap, and the
    // newest lines of the outage (its last minute) were kept and delivered.
    expect(ids.slice(0, before.length)).toEqual(before.map((_, i) => i));
    expect(ids[before.length]! - before.length).toBeGreaterThan(0);
    expect(ids[before.length]! - before.length).toBeLessThanOrEqual(s.droppedByQuota.logEntries);
    expect(spill.figures().liveRecords).toBe(0);
    spill.close();
  }, 60_000);

  it('deletes app files before device files, as newlogd does', async () => {
    const r = rig({
      behaviour: { logLinesPerSec: 1, logQuotaBytes: 1_000_000, apps: [{ name: 'nginx-gateway', logLinesPerSec: 60, flowsPerMessage: 1 }] },
    });
    r.controller.config = {
      apps: [{ uuidandversion: { uuid: APP, version: '3' }, displayname: 'nginx-gateway', activate: true, interfaces: [{ name: 'eth0', networkId: NI }] }],
      networkInstances: [{ uuidandversion: { uuid: NI, version: '1' }, displayname: 'default', activate: true, instType: 2 }],
    };
    const o = controllerOutage(r);
    await onboard(r);
    await run(r, 200_000);
    o.down = true;
    // Long enough for newlogd's 300 s rotations to put more than the 1 MB quota into files.
    await run(r, 30 * 60_000);
    expect(r.device.stats().droppedByQuota.logs).toBeGreaterThan(0);
    o.down = false;
    await recoverAndDrain(r, 10 * 60_000);
    r.device.stop();
    const s = r.device.stats();
    expect(s.undelivered.logs).toBe(0);
    // Every device line arrived; only app lines were deleted (and every one is accounted for).
    const dev = msgids(r, o, 'newlogs');
    expect(dev).toEqual(dev.map((_, i) => i));
    const app = msgids(r, o, 'appnewlogs');
    expect(ascending(app)).toBe(true);
    expect(app.length + s.droppedByQuota.logEntries).toBe(app[app.length - 1]! + 1);
  }, 60_000);
});

describe('the log spill file (fleet/log-spill-file.ts)', () => {
  it('gives back what was put, in records of (device, bytes), in a 0600 file', async () => {
    const dir = stateDir();
    const spill = new LogSpillFile(dir, 3);
    const files = [0, 1, 2, 3, 4].map((i) => Uint8Array.from({ length: 1000 + i * 777 }, (_, j) => (i * 31 + j) & 0xff));
    const refs = files.map((f, i) => spill.put(100 + i, f));
    for (let i = files.length - 1; i >= 0; i--) expect(Buffer.from(await spill.read(refs[i]!))).toEqual(Buffer.from(files[i]!));
    const names = readdirSync(spill.dir);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^worker-3-\d+-0\.spill$/);
    const path = join(spill.dir, names[0]!);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const records = decodeSpillRecords(readFileSync(path));
    expect(records.map((x) => x.device)).toEqual([100, 101, 102, 103, 104]);
    expect(records.map((x) => Buffer.from(x.bytes))).toEqual(files.map((f) => Buffer.from(f)));
    expect(records.map((x) => x.offset)).toEqual(refs.map((x) => x.offset));
    spill.close();
    expect(() => statSync(spill.dir)).toThrow();
  });

  it('refuses a damaged segment, naming the offset', () => {
    const bad = new Uint8Array(20);
    expect(() => decodeSpillRecords(bad)).toThrow(/bad record magic 0x0 at offset 0/);
  });

  it('deletes a segment once every record in it is released, and everything at close', async () => {
    const spill = new LogSpillFile(stateDir(), 0, 4096);
    const chunk = new Uint8Array(1500).fill(7);
    const refs = Array.from({ length: 9 }, (_, i) => spill.put(i, chunk));
    // 3 records (1512 bytes each) fill a 4096-byte segment: 3 segments.
    expect(spill.figures().segments).toBe(3);
    for (const ref of refs.slice(0, 3)) spill.release(ref);
    expect(spill.figures().segments).toBe(2);
    expect(readdirSync(spill.dir)).toHaveLength(2);
    // A read in flight keeps its segment until it completes.
    const reading = spill.read(refs[4]!);
    for (const ref of refs.slice(3, 6)) spill.release(ref);
    expect(Buffer.from(await reading)).toEqual(Buffer.from(chunk));
    expect(spill.figures().segments).toBe(1);
    expect(spill.figures().liveRecords).toBe(3);
    spill.close();
    expect(() => readdirSync(spill.dir)).toThrow();
  });
});
