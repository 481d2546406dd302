import { describe, expect, it } from 'vitest';
import {
  InfoQueue,
  endpointForKind,
  isRetriableStatus,
  itemRetryDelayMs,
  type QueuedItem,
  type SendOutcome,
} from '../src/device/telemetry/info-queue.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';

const MIN = 60_000;
const b = (s: string) => new TextEncoder().encode(s);
const ok: SendOutcome = { kind: 'http', status: 201 };
const http = (status: number): SendOutcome => ({ kind: 'http', status });
const noAnswer: SendOutcome = { kind: 'transport', code: 'ECONNREFUSED' };

function newQueue(seed = 1) {
  return new InfoQueue(SeededRng.create(seed, 0, 'queue'));
}

/** Sends a whole batch, answering each item with `answer(item)`, like the device does. */
function runPass(q: InfoQueue, now: number, answer: (it: QueuedItem) => SendOutcome) {
  const sent: string[] = [];
  const results = [];
  for (const it of q.takeBatch(now)) {
    sent.push(it.key);
    const r = q.report(it, answer(it), now);
    results.push(r);
    if (r.stopPass) break;
  }
  return { sent, results };
}

describe('InfoQueue', () => {
  it('keeps one item per key: a newer message replaces the older one in place', () => {
    const q = newQueue();
    q.enqueue('dev', 'device', b('d1'), 0);
    q.enqueue('app1', 'app', b('a1'), 0);
    q.enqueue('dev', 'device', b('d2'), 10);
    expect(q.size).toBe(2);
    expect(q.keys()).toEqual(['dev', 'app1']);
    const batch = q.takeBatch(20);
    const dev = batch.find((i) => i.key === 'dev')!;
    expect(new TextDecoder().decode(dev.bytes)).toBe('d2');
    expect(dev.enqueuedAt).toBe(10);
    expect(q.stats.replaced).toBe(1);
  });

  it('sends attestation first, then ZiApp, then ZiHardware, then the rest in insertion order', () => {
    const q = newQueue();
    q.enqueue('dev', 'device', b('1'), 0);
    q.enqueue('ni1', 'network-instance', b('2'), 0);
    q.enqueue('hw', 'hardware', b('3'), 0);
    q.enqueue('app2', 'app', b('4'), 0);
    q.enqueue('attest:dev', 'attest', b('5'), 0, { discardOnFailure: true });
    q.enqueue('app1', 'app', b('6'), 0);
    q.enqueue('vol1', 'volume', b('7'), 0);
    const { sent } = runPass(q, 1, () => ok);
    expect(sent).toEqual(['attest:dev', 'app2', 'app1', 'hw', 'dev', 'ni1', 'vol1']);
    expect(q.size).toBe(0);
    expect(q.stats.delivered).toBe(7);
    expect(endpointForKind('attest')).toBe('attest');
    expect(endpointForKind('app')).toBe('info');
  });

  it('backs off an item refused with 503: 1, 2, 4, 8, 15, 15 minutes', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => itemRetryDelayMs(n) / MIN)).toEqual([1, 2, 4, 8, 15, 15, 15]);
    const q = newQueue();
    q.enqueue('dev', 'device', b('x'), 0);
    let now = 0;
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 6; attempt++) {
      const batch = q.takeBatch(now);
      expect(batch.map((i) => i.key)).toEqual(['dev']);
      const r = q.report(batch[0]!, http(503), now);
      expect(r.disposition).toBe('retry');
      expect(r.attempts).toBe(attempt);
      expect(r.stopPass).toBe(false);
      delays.push((r.retryAt! - now) / MIN);
      // Just before retryAt the item is not offered; at retryAt it is.
      expect(q.takeBatch(r.retryAt! - 1)).toEqual([]);
      now = r.retryAt!;
    }
    expect(delays).toEqual([1, 2, 4, 8, 15, 15]);
    expect(q.size).toBe(1);
    expect(q.stats.retried).toBe(6);
  });

  it.each([401, 403, 407, 408, 429, 500, 502, 503, 504])('keeps an item refused with %i', (status) => {
    expect(isRetriableStatus(status)).toBe(true);
    const q = newQueue();
    q.enqueue('k', 'device', b('x'), 0);
    const { results } = runPass(q, 0, () => http(status));
    expect(results[0]!.disposition).toBe('retry');
    expect(q.size).toBe(1);
    expect(q.stats.dropped).toBe(0);
  });

  it.each([400, 404, 409, 413, 422])('drops an item refused with %i and counts it with key and status', (status) => {
    expect(isRetriableStatus(status)).toBe(false);
    const q = newQueue();
    q.enqueue('app:gone', 'app', b('x'), 0);
    q.enqueue('dev', 'device', b('y'), 0);
    const { sent, results } = runPass(q, 5, (it) => (it.key === 'app:gone' ? http(status) : ok));
    expect(sent).toEqual(['app:gone', 'dev']); // a refusal does not stop the pass
    expect(results[0]).toMatchObject({ disposition: 'dropped', key: 'app:gone', kind: 'app', status, stopPass: false });
    expect(q.size).toBe(0);
    expect(q.stats.dropped).toBe(1);
    expect(q.lastDrop).toEqual({ key: 'app:gone', kind: 'app', status, at: 5 });
  });

  it('a transport error stops the pass and keeps everything', () => {
    const q = newQueue();
    q.enqueue('a1', 'app', b('1'), 0);
    q.enqueue('a2', 'app', b('2'), 0);
    q.enqueue('dev', 'device', b('3'), 0);
    const batch = q.takeBatch(0);
    expect(batch.length).toBe(3);
    const r = q.report(batch[0]!, noAnswer, 0);
    expect(r).toMatchObject({ disposition: 'stopped', stopPass: true, attempts: 0 });
    expect(q.passInProgress).toBe(false);
    expect(q.size).toBe(3);
    expect(q.keys()).toEqual(['a1', 'a2', 'dev']);
    // No backoff after a transport error: the next pass offers everything again.
    expect(q.takeBatch(1).map((i) => i.key)).toEqual(['a1', 'a2', 'dev']);
    expect(q.stats.transportErrors).toBe(1);
    // Reporting an item of a finished pass is a programming error with a clear message.
    const q2 = newQueue();
    q2.enqueue('x', 'device', b('1'), 0);
    const [x] = q2.takeBatch(0);
    q2.report(x!, ok, 0);
    expect(() => q2.report(x!, ok, 0)).toThrow(/x is not part of the pass/);
  });

  it('discard-on-failure items are dropped on any failure, including no answer', () => {
    const q = newQueue();
    q.enqueue('attest:dev', 'attest', b('certs'), 0, { discardOnFailure: true });
    q.enqueue('location:dev', 'location', b('loc'), 0, { discardOnFailure: true });
    q.enqueue('dev', 'device', b('d'), 0);
    const { sent, results } = runPass(q, 0, (it) => (it.key === 'attest:dev' ? http(503) : it.key === 'location:dev' ? noAnswer : ok));
    expect(sent).toEqual(['attest:dev', 'location:dev', 'dev']);
    expect(results.map((r) => r.disposition)).toEqual(['discarded', 'discarded', 'delivered']);
    expect(results.every((r) => !r.stopPass)).toBe(true);
    expect(q.size).toBe(0);
    expect(q.stats.discarded).toBe(2);
  });

  it('keeps the attempt count and backoff only if the re-enqueued bytes are identical', () => {
    const q = newQueue();
    q.enqueue('dev', 'device', b('same'), 0);
    const r = runPass(q, 0, () => http(500)).results[0]!;
    expect(r.attempts).toBe(1);
    q.enqueue('dev', 'device', b('same'), 10);
    expect(q.undelivered()[0]).toMatchObject({ attempts: 1, retryAt: r.retryAt, lastStatus: 500 });
    expect(q.takeBatch(20)).toEqual([]); // still waiting out its backoff
    q.enqueue('dev', 'device', b('changed'), 30);
    expect(q.undelivered()[0]).toMatchObject({ attempts: 0, retryAt: 0 });
    expect(q.takeBatch(40).map((i) => i.key)).toEqual(['dev']);
  });

  it('moves items in backoff behind their peers after a pass', () => {
    const q = newQueue();
    q.enqueue('n1', 'network-instance', b('1'), 0);
    q.enqueue('n2', 'network-instance', b('2'), 0);
    q.enqueue('n3', 'network-instance', b('3'), 0);
    runPass(q, 0, (it) => (it.key === 'n1' ? http(429) : noAnswer));
    // n1 refused (backoff), n2 had no answer (pass stopped), n3 never tried.
    expect(q.keys()).toEqual(['n2', 'n3', 'n1']);
  });

  it('a message enqueued while its predecessor is in flight survives the old one being delivered', () => {
    const q = newQueue();
    q.enqueue('app1', 'app', b('v1'), 0);
    const [old] = q.takeBatch(0);
    q.enqueue('app1', 'app', b('v2'), 1);
    q.enqueue('app2', 'app', b('w'), 1);
    const r = q.report(old!, ok, 2);
    expect(r.disposition).toBe('superseded');
    expect(q.keys()).toEqual(['app1', 'app2']);
    expect(new TextDecoder().decode(q.takeBatch(3)[0]!.bytes)).toBe('v2');
  });

  it('tells the caller when to wake up: now after an enqueue, else the 1 → 15 min re-run timer', () => {
    const q = newQueue(7);
    expect(q.nextDue(0)).toBeUndefined(); // empty: nothing to do
    q.enqueue('dev', 'device', b('x'), 1000);
    expect(q.nextDue(1000)).toBe(1000); // kicked immediately
    const firstTick = q.timerDueAt!;
    expect(firstTick - 1000).toBeGreaterThanOrEqual(MIN - 30_000);
    expect(firstTick - 1000).toBeLessThanOrEqual(MIN + 30_000);
    const batch = q.takeBatch(1000);
    expect(q.nextDue(1000)).toBeUndefined(); // pass running
    q.report(batch[0]!, http(503), 1000);
    expect(q.nextDue(1000)).toBe(firstTick); // no kick pending: the timer
    // Successive timer ticks double up to 15 min, each ±30 s.
    let now = firstTick;
    const gaps: number[] = [];
    for (let i = 0; i < 7; i++) {
      const due = q.nextDue(now)!;
      now = due;
      for (const it of q.takeBatch(now)) q.report(it, http(503), now);
      gaps.push(q.timerDueAt! - now);
    }
    const expected = [2, 4, 8, 15, 15, 15, 15].map((m) => m * MIN);
    gaps.forEach((g, i) => {
      expect(Math.abs(g - expected[i]!)).toBeLessThanOrEqual(30_000);
    });
    // Delivery empties the queue and stops the timer.
    now += 15 * MIN;
    for (const it of q.takeBatch(now)) q.report(it, ok, now);
    expect(q.size).toBe(0);
    expect(q.nextDue(now)).toBeUndefined();
    expect(q.timerDueAt).toBeUndefined();
  });

  it('an enqueue during a pass makes the next pass due right after it', () => {
    const q = newQueue();
    q.enqueue('a', 'device', b('1'), 0);
    const [a] = q.takeBatch(0);
    q.enqueue('b', 'volume', b('2'), 5);
    expect(q.nextDue(5)).toBeUndefined();
    q.report(a!, ok, 6);
    expect(q.nextDue(6)).toBe(6);
    expect(q.takeBatch(6).map((i) => i.key)).toEqual(['b']);
  });

  it('lists undelivered items and their sizes', () => {
    const q = newQueue();
    q.enqueue('dev', 'device', b('12345'), 100);
    q.enqueue('app1', 'app', b('12'), 200);
    runPass(q, 300, (it) => (it.key === 'app1' ? http(503) : noAnswer));
    const list = q.undelivered();
    expect(list).toEqual([
      { key: 'dev', kind: 'device', bytes: 5, enqueuedAt: 100, attempts: 0, retryAt: 0, lastStatus: 0, discardOnFailure: false },
      { key: 'app1', kind: 'app', bytes: 2, enqueuedAt: 200, attempts: 1, retryAt: 300 + MIN, lastStatus: 503, discardOnFailure: false },
    ]);
    expect(q.backlogBytes).toBe(7);
    expect(q.remove('dev')).toBe(true);
    expect(q.remove('dev')).toBe(false);
    q.clear();
    expect(q.size).toBe(0);
  });

  it('stores a view into a larger buffer as an exact-size copy (no pool slab kept alive)', () => {
    const q = newQueue();
    const slab = new Uint8Array(8192).fill(7);
    const view = slab.subarray(100, 150);
    const it = q.enqueue('dev', 'device', view, 0);
    expect(it.bytes.length).toBe(50);
    expect(it.bytes.buffer.byteLength).toBe(50);
    expect([...it.bytes]).toEqual([...view]);
    const own = new Uint8Array([1, 2, 3]);
    expect(q.enqueue('app', 'app', own, 0).bytes).toBe(own);
  });

  it('is deterministic for the same seed', () => {
    const ticks = (seed: number) => {
      const q = newQueue(seed);
      q.enqueue('k', 'device', b('x'), 0);
      return q.timerDueAt;
    };
    expect(ticks(3)).toBe(ticks(3));
  });
});
