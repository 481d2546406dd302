// The in-flight gate on its own: worker and per-device caps hold (measured by the fake transport,
// not read back from the config), waiting requests go first come first served until the queue is
// overloaded and newest first while it is, a device over its own cap lets others pass, and a
// request whose deadline passes while it waits fails as 'timeout' and is never sent.

import { describe, expect, it } from 'vitest';
import type { Transport, TransportRequest, TransportResponse } from '../src/device/ports.js';
import { TransportError } from '../src/device/ports.js';
import { InFlightGate, NEWEST_FIRST_AT_DEADLINE_SHARE } from '../src/transport/in-flight-gate.js';

/** When a queue of requests with the tests' 60 s deadline flips to newest first. */
const FLIP_MS = 60_000 * NEWEST_FIRST_AT_DEADLINE_SHARE;

/** Holds every request until answer() is called; counts what it has at once. */
class HeldTransport implements Transport {
  readonly held: { req: TransportRequest; resolve: (r: TransportResponse) => void }[] = [];
  readonly order: string[] = [];
  now = 0;
  peak = 0;
  readonly byDevice = new Map<number, number>();
  peakPerDevice = 0;
  request(req: TransportRequest): Promise<TransportResponse> {
    this.order.push(req.path);
    this.now++;
    this.peak = Math.max(this.peak, this.now);
    const mine = (this.byDevice.get(req.deviceIndex) ?? 0) + 1;
    this.byDevice.set(req.deviceIndex, mine);
    this.peakPerDevice = Math.max(this.peakPerDevice, mine);
    return new Promise((resolve) => this.held.push({ req, resolve }));
  }
  answer(): void {
    const h = this.held.shift()!;
    this.now--;
    this.byDevice.set(h.req.deviceIndex, this.byDevice.get(h.req.deviceIndex)! - 1);
    h.resolve({ status: 200, headers: {}, body: new Uint8Array(0) });
  }
  /** Answers what it holds, oldest first, each answer's next hand-on included, until it holds none. */
  async answerAll(): Promise<void> {
    while (this.held.length > 0) {
      this.answer();
      await tick();
    }
  }
}

const req = (device: number, path: string, timeoutMs?: number): TransportRequest => ({
  endpoint: 'info',
  method: 'POST',
  path,
  headers: {},
  dueAt: 0,
  deviceIndex: device,
  ...(timeoutMs !== undefined ? { timeoutMs } : {}),
});

const tick = () => new Promise((r) => setImmediate(r));

describe('InFlightGate', () => {
  it('never hands on more than the worker cap; the rest go in order as answers come', async () => {
    const inner = new HeldTransport();
    let t = 1000;
    const gate = new InFlightGate(inner, { now: () => t }, { maxInFlight: 3, maxPerDevice: 8, timeoutMs: 60_000 });
    const done = Array.from({ length: 10 }, (_, i) => gate.request(req(i, `/r${i}`)));
    await tick();
    expect(inner.now).toBe(3);
    expect(gate.waiting).toBe(7);
    t += 500;
    await inner.answerAll();
    await Promise.all(done);
    expect(inner.order).toEqual(Array.from({ length: 10 }, (_, i) => `/r${i}`));
    expect(inner.peak).toBe(3);
    expect(gate.stats()).toMatchObject({ peak: 3, waited: 7, queuePeak: 7, worstWaitMs: 500, timedOutWaiting: 0 });
    expect(gate.inFlight).toBe(0);
  });

  it('measures the wait for a slot apart from the time on the wire, requests still in flight counted up to now', async () => {
    const inner = new HeldTransport();
    let t = 1000;
    const gate = new InFlightGate(inner, { now: () => t }, { maxInFlight: 1, maxPerDevice: 8, timeoutMs: 60_000 });
    const done = [gate.request(req(0, '/a')), gate.request(req(1, '/b')), gate.request(req(2, '/c'))];
    t += 10; // /a answered after 10 ms; /b then waited 10 ms
    inner.answer();
    await tick();
    t += 20; // /b answered after 20 ms; /c waited 30 ms
    inner.answer();
    await tick();
    t += 5; // /c on the wire for 5 ms so far
    expect(gate.stats()).toMatchObject({ requests: 3, waited: 2, waitMsTotal: 40, handedOn: 3, handedOnMsTotal: 35 });
    t += 5;
    inner.answer();
    await Promise.all(done);
    expect(gate.stats()).toMatchObject({ requests: 3, waitMsTotal: 40, handedOn: 3, handedOnMsTotal: 40 });
  });

  it('a device at its own cap waits while other devices pass', async () => {
    const inner = new HeldTransport();
    const gate = new InFlightGate(inner, { now: () => 0 }, { maxInFlight: 10, maxPerDevice: 2, timeoutMs: 60_000 });
    const done = [gate.request(req(1, '/a1')), gate.request(req(1, '/a2')), gate.request(req(1, '/a3')), gate.request(req(2, '/b1'))];
    await tick();
    expect(inner.order).toEqual(['/a1', '/a2', '/b1']);
    inner.answer(); // a1
    await tick();
    expect(inner.order).toEqual(['/a1', '/a2', '/b1', '/a3']);
    await inner.answerAll();
    await Promise.all(done);
    expect(inner.peakPerDevice).toBe(2);
    expect(gate.stats()).toMatchObject({ peakPerDevice: 2, waited: 1 });
  });

  it('a request whose deadline passes while it waits fails as timeout and is never sent; a late one gets what is left', async () => {
    const inner = new HeldTransport();
    let t = 0;
    const gate = new InFlightGate(inner, { now: () => t }, { maxInFlight: 1, maxPerDevice: 8, timeoutMs: 60_000 });
    const first = gate.request(req(1, '/first'));
    const short = gate.request(req(2, '/short', 30));
    const long = gate.request(req(3, '/long', 10_000));
    await expect(short).rejects.toSatisfy((e: unknown) => e instanceof TransportError && e.code === 'timeout' && /in-flight slots/.test(e.message));
    t = 4000;
    inner.answer();
    await first;
    await tick();
    expect(inner.order).toEqual(['/first', '/long']);
    expect(inner.held[0]!.req.timeoutMs).toBe(6000);
    inner.answer();
    await long;
    expect(gate.stats()).toMatchObject({ timedOutWaiting: 1, waited: 2 });
  });

  it('once the oldest waiting request has used half its deadline, hands on the newest first; oldest first again once the queue is young', async () => {
    const inner = new HeldTransport();
    let t = 0;
    const gate = new InFlightGate(inner, { now: () => t }, { maxInFlight: 1, maxPerDevice: 8, timeoutMs: 60_000 });
    const done = [gate.request(req(1, '/first')), gate.request(req(2, '/a')), gate.request(req(3, '/b')), gate.request(req(4, '/c'))];
    const next = async () => {
      inner.answer();
      await tick();
    };
    t = FLIP_MS - 1;
    await next(); // the oldest has not yet used half its deadline: first come first served
    expect(inner.order).toEqual(['/first', '/a']);
    t = FLIP_MS + 500;
    done.push(gate.request(req(5, '/d')));
    await next(); // /b has waited past the limit: the newest goes first
    await next();
    await next();
    expect(inner.order).toEqual(['/first', '/a', '/d', '/c', '/b']);
    expect(gate.stats().handedOnNewestFirst).toBe(3);
    // The backlog is gone: a short queue is served in order again.
    done.push(gate.request(req(6, '/e')), gate.request(req(7, '/f')));
    t += 100;
    await next();
    await next();
    await next();
    expect(inner.order).toEqual(['/first', '/a', '/d', '/c', '/b', '/e', '/f']);
    expect(gate.stats().handedOnNewestFirst).toBe(3);
    await Promise.all(done);
  });

  it('newest first keeps no handed-on entry under the requests that come after it', async () => {
    const inner = new HeldTransport();
    let t = 0;
    const gate = new InFlightGate(inner, { now: () => t }, { maxInFlight: 1, maxPerDevice: 8, timeoutMs: 60_000 });
    const done = [gate.request(req(1, '/first'))];
    for (let i = 0; i < 100; i++) done.push(gate.request(req(2 + i, `/backlog-${i}`)));
    t = FLIP_MS * 1.5;
    // Overloaded and staying so: a new request comes before every answer, and the newest goes out.
    for (let i = 0; i < 2000; i++) {
      done.push(gate.request(req(1000 + i, `/new-${i}`)));
      inner.answer();
      await tick();
      expect(inner.order.at(-1)).toBe(`/new-${i}`);
    }
    expect(gate.waiting).toBe(100);
    expect(gate.entriesHeld).toBe(100);
    gate.close();
    inner.answer();
    await Promise.allSettled(done);
  });

  it('newest first still skips a device at its own cap', async () => {
    const inner = new HeldTransport();
    let t = 0;
    const gate = new InFlightGate(inner, { now: () => t }, { maxInFlight: 2, maxPerDevice: 1, timeoutMs: 60_000 });
    const done = [gate.request(req(2, '/p1')), gate.request(req(1, '/p2')), gate.request(req(3, '/old'))];
    t = FLIP_MS * 1.5;
    done.push(gate.request(req(4, '/n2')), gate.request(req(1, '/n1')));
    inner.answer(); // /p1: device 2's slot frees; the newest, /n1, is device 1's, which has /p2 out
    await tick();
    expect(inner.order).toEqual(['/p1', '/p2', '/n2']);
    inner.answer(); // /p2: device 1 is free again
    await tick();
    expect(inner.order).toEqual(['/p1', '/p2', '/n2', '/n1']);
    await inner.answerAll();
    await Promise.all(done);
    expect(inner.order.at(-1)).toBe('/old');
  });

  it('a request whose deadline passed before its sweep ran fails as the slot frees, never sent with no time left', async () => {
    const inner = new HeldTransport();
    const gate = new InFlightGate(inner, { now: () => performance.now() }, { maxInFlight: 1, maxPerDevice: 8, timeoutMs: 60_000 });
    const first = gate.request(req(1, '/first'));
    const late = gate.request(req(2, '/late', 20)).catch((e: unknown) => e);
    const next = gate.request(req(3, '/next'));
    // The loop is busy past /late's deadline, so its sweep has not run when the slot frees.
    const until = performance.now() + 40;
    while (performance.now() < until);
    inner.answer();
    await first;
    await tick();
    expect(await late).toSatisfy((e: unknown) => e instanceof TransportError && e.code === 'timeout' && /in-flight slots/.test(e.message));
    expect(inner.order).toEqual(['/first', '/next']);
    expect(gate.stats()).toMatchObject({ timedOutWaiting: 1, waited: 2 });
    inner.answer();
    await next;
  });

  it('one deadline timer serves the queue: a shorter deadline behind a longer one still fails on time, none fails early', async () => {
    const inner = new HeldTransport();
    const gate = new InFlightGate(inner, { now: () => 0 }, { maxInFlight: 1, maxPerDevice: 8, timeoutMs: 60_000 });
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    void gate.request(req(1, '/sent'));
    const long = gate.request(req(2, '/long', 20_000));
    const asked = performance.now();
    const shortOnes = [80, 40, 55].map((ms, i) => gate.request(req(3 + i, `/short-${ms}`, ms)).catch((e: unknown) => ({ e, at: performance.now() - asked })));
    // One timer for every waiting request, not one each.
    expect(timers() - before).toBe(1);
    const failed = await Promise.all(shortOnes);
    [80, 40, 55].forEach((ms, i) => {
      const f = failed[i] as { e: unknown; at: number };
      expect(f.e).toSatisfy((e: unknown) => e instanceof TransportError && e.code === 'timeout');
      // Never before its deadline (1 ms for the timer's rounding); the 20 s one did not hold them up.
      expect(f.at).toBeGreaterThanOrEqual(ms - 1);
      expect(f.at).toBeLessThan(10_000);
    });
    expect(gate.stats()).toMatchObject({ timedOutWaiting: 3, waited: 4 });
    // The long one is handed on when the slot frees, and the queue's timer goes with the queue.
    const withQueue = timers();
    inner.answer();
    await tick();
    expect(inner.order).toEqual(['/sent', '/long']);
    expect(gate.waiting).toBe(0);
    expect(timers()).toBe(withQueue - 1);
    inner.answer();
    await long;
  });

  it('refuses caps that are not whole numbers >= 1', () => {
    const inner = new HeldTransport();
    expect(() => new InFlightGate(inner, { now: () => 0 }, { maxInFlight: 0, maxPerDevice: 1, timeoutMs: 1 })).toThrow(/maxInFlight must be a whole number >= 1, got 0/);
  });
});

describe('InFlightGate.close', () => {
  it('fails every waiting request as closed, never sending it', async () => {
    const inner = new HeldTransport();
    const gate = new InFlightGate(inner, { now: () => 0 }, { maxInFlight: 1, maxPerDevice: 8, timeoutMs: 60_000 });
    void gate.request(req(1, '/sent'));
    const waiting = gate.request(req(2, '/waiting'));
    const alsoWaiting = gate.request(req(3, '/also-waiting'));
    gate.close();
    const closed = (e: unknown) => e instanceof TransportError && e.code === 'closed' && /in-flight slot \(closed, 2 waiting\)/.test(e.message);
    await expect(waiting).rejects.toSatisfy(closed);
    await expect(alsoWaiting).rejects.toSatisfy(closed);
    expect(gate.waiting).toBe(0);
    expect(inner.order).toEqual(['/sent']);
  });

  it('makes a body from build() as it hands the request on, never while it waits or for one that times out waiting', async () => {
    const inner = new HeldTransport();
    let t = 0;
    const gate = new InFlightGate(inner, { now: () => t }, { maxInFlight: 1, maxPerDevice: 8, timeoutMs: 60_000 });
    expect(gate.buildsBodiesLate).toBe(true);
    const built: string[] = [];
    const lazy = (path: string, timeoutMs?: number): TransportRequest => ({
      ...req(1, path, timeoutMs),
      build: () => {
        built.push(path);
        return new TextEncoder().encode(`sealed ${path}`);
      },
    });
    const first = gate.request(lazy('/first'));
    const waiting = lazy('/waiting');
    const second = gate.request(waiting);
    const expiring = gate.request(lazy('/expiring', 20));
    await tick();
    // Handed on at once: built then. Waiting: no body yet.
    expect(built).toEqual(['/first']);
    expect(new TextDecoder().decode(inner.held[0]!.req.body)).toBe('sealed /first');
    expect(inner.held[0]!.req.build).toBeUndefined();
    expect(waiting.body).toBeUndefined();
    await expect(expiring).rejects.toSatisfy((e: unknown) => e instanceof TransportError && e.code === 'timeout');
    inner.answer();
    await first;
    await tick();
    expect(built).toEqual(['/first', '/waiting']);
    expect(new TextDecoder().decode(inner.held[0]!.req.body)).toBe('sealed /waiting');
    inner.answer();
    await second;
    // A build that throws fails its own request, and frees its slot for the next.
    const broken = gate.request({ ...req(2, '/broken'), build: () => { throw new Error('no key'); } });
    await expect(broken).rejects.toThrow('no key');
    const after = gate.request(req(3, '/after'));
    await tick();
    expect(inner.order).toEqual(['/first', '/waiting', '/after']);
    inner.answer();
    await after;
    expect(gate.inFlight).toBe(0);
  });
});
