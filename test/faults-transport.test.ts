// Each network fault's effect on requests (src/faults/fault-transport.ts), on a fake transport, a
// fake clock and fake timers: only in its window, only on its devices, and counted.

import { describe, expect, it } from 'vitest';
import { TransportError, type TransportRequest, type TransportResponse } from '../src/device/ports.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import { FaultPlan } from '../src/faults/fault-plan.js';
import type { FaultAction } from '../src/faults/fault-spec.js';
import { FaultTransport, type FaultTimers } from '../src/faults/fault-transport.js';
import type { GroupSpec } from '../src/scenario/scenario-types.js';
import type { ConnectionLossHow } from '../src/transport/worker-transport.js';

const START = 1_000_000;

class FakeTimers implements FaultTimers {
  private seq = 0;
  readonly pending = new Map<number, { at: number; fn: () => void }>();
  constructor(private readonly clock: { t: number }) {}
  set(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { at: this.clock.t + ms, fn });
    return id;
  }
  clear(h: unknown): void {
    this.pending.delete(h as number);
  }
  /** Advances the clock, firing what falls due. */
  async advance(ms: number): Promise<void> {
    this.clock.t += ms;
    for (const [id, w] of [...this.pending]) {
      if (w.at <= this.clock.t) {
        this.pending.delete(id);
        w.fn();
      }
    }
    await new Promise((r) => setImmediate(r));
  }
}

class FakeInner {
  readonly seen: TransportRequest[] = [];
  /** Devices whose connection a fault broke, in order, and how. */
  readonly lost: number[] = [];
  readonly lostHow: (ConnectionLossHow | undefined)[] = [];
  destroyed = false;
  /** When set, requests wait for it before they are answered. */
  gate: Promise<void> | undefined;
  connectionLost(deviceIndex: number, how?: ConnectionLossHow): void {
    this.lost.push(deviceIndex);
    this.lostHow.push(how);
  }
  async request(req: TransportRequest): Promise<TransportResponse> {
    this.seen.push(req);
    if (this.gate) await this.gate;
    return { status: 200, headers: {}, body: new Uint8Array(0) };
  }
  async destroy(): Promise<void> {
    this.destroyed = true;
  }
}

function setup(faults: FaultAction[], timeoutMs = 5000) {
  const clock = { t: START };
  const timers = new FakeTimers(clock);
  const inner = new FakeInner();
  const plan = FaultPlan.of({ seed: 1, groups: [{ name: 'g', count: 10 }] as GroupSpec[], timeline: faults });
  const t = new FaultTransport(inner, plan, { clock: { now: () => clock.t }, startAtMs: START, rng: SeededRng.create(1, 0, 'test'), requestTimeoutMs: timeoutMs, timers });
  return { clock, timers, inner, t, plan };
}

const req = (deviceIndex: number): TransportRequest => ({ endpoint: 'config', method: 'POST', path: '/api/v2/edgedevice/id/x/config', headers: {}, dueAt: 0, deviceIndex });

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'answered';
  } catch (e) {
    if (e instanceof TransportError) return e.code;
    throw e;
  }
}

describe('FaultTransport', () => {
  it('partition: fails at once with ENETUNREACH inside its window, on its devices only', async () => {
    const { clock, t, inner } = setup([{ atMs: 10_000, action: 'partition', devices: [1, 2], forMs: 5_000 }]);
    expect(await codeOf(t.request(req(1)))).toBe('answered'); // before the window
    clock.t = START + 10_000;
    expect(await codeOf(t.request(req(1)))).toBe('ENETUNREACH');
    expect(await codeOf(t.request(req(2)))).toBe('ENETUNREACH');
    expect(await codeOf(t.request(req(3)))).toBe('answered'); // not one of its devices
    clock.t = START + 15_000;
    expect(await codeOf(t.request(req(1)))).toBe('answered'); // window over
    expect(inner.seen.map((r) => r.deviceIndex)).toEqual([1, 3, 1]);
    expect(t.requestsAffected).toEqual([2]);
    expect([...t.devicesAffected[0]!].sort()).toEqual([1, 2]);
  });

  it('dns-failure and tls-failure fail at once with their own codes, never reaching the server', async () => {
    const { t, inner } = setup([
      { atMs: 0, action: 'dns-failure', devices: [0] },
      { atMs: 0, action: 'tls-failure', devices: [1] },
    ]);
    expect(await codeOf(t.request(req(0)))).toBe('ENOTFOUND');
    expect(await codeOf(t.request(req(1)))).toBe('ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE');
    expect(inner.seen).toEqual([]);
  });

  it('blackhole: hangs until the request timeout, then fails with timeout; nothing reaches the server', async () => {
    const { t, timers, inner } = setup([{ atMs: 0, action: 'blackhole' }], 5000);
    let settled = '';
    void codeOf(t.request(req(4))).then((c) => (settled = c));
    await timers.advance(4999);
    expect(settled).toBe('');
    await timers.advance(1);
    expect(settled).toBe('timeout');
    expect(inner.seen).toEqual([]);
  });

  it('latency: the request goes out after delay ± jitter', async () => {
    const { t, timers, inner } = setup([{ atMs: 0, action: 'latency', delayMs: 300, jitterMs: 100 }]);
    let settled = '';
    void codeOf(t.request(req(0))).then((c) => (settled = c));
    await timers.advance(199);
    expect(inner.seen).toHaveLength(0);
    await timers.advance(201);
    expect(inner.seen).toHaveLength(1);
    expect(settled).toBe('answered');
    expect(t.requestsAffected).toEqual([1]);
  });

  it('loss: about its share of requests time out, the rest go through', async () => {
    const { t, timers, inner } = setup([{ atMs: 0, action: 'loss', lossShare: 0.3 }], 1000);
    const outcomes = Array.from({ length: 1000 }, (_, i) => codeOf(t.request(req(i % 10))));
    await timers.advance(1000);
    const codes = await Promise.all(outcomes);
    const lost = codes.filter((c) => c === 'timeout').length;
    expect(lost).toBeGreaterThan(240);
    expect(lost).toBeLessThan(360);
    expect(codes.filter((c) => c === 'answered').length).toBe(1000 - lost);
    expect(inner.seen).toHaveLength(1000 - lost);
    expect(t.requestsAffected).toEqual([lost]);
  });

  it('reset: the request reaches the server, the device gets ECONNRESET instead of the answer', async () => {
    const { t, inner } = setup([{ atMs: 0, action: 'reset', devices: [5] }]);
    expect(await codeOf(t.request(req(5)))).toBe('ECONNRESET');
    expect(inner.seen.map((r) => r.deviceIndex)).toEqual([5]);
  });

  it('recovery: a hit device is current again at its first configuration answer after the window', async () => {
    const { clock, t } = setup([{ atMs: 0, action: 'partition', devices: [1, 2], forMs: 10_000 }]);
    expect(await codeOf(t.request(req(1)))).toBe('ENETUNREACH');
    expect(await codeOf(t.request(req(2)))).toBe('ENETUNREACH');
    clock.t = START + 13_000;
    expect(await codeOf(t.request({ ...req(1), endpoint: 'info' }))).toBe('answered'); // not a configuration answer
    expect([...t.recovered[0]!]).toEqual([]);
    clock.t = START + 14_000;
    expect(await codeOf(t.request(req(1)))).toBe('answered');
    expect(await codeOf(t.request(req(3)))).toBe('answered'); // never hit: not counted
    expect([...t.recovered[0]!]).toEqual([1]);
    expect(t.recoveryMs[0]).toBe(4_000);
    clock.t = START + 19_000;
    expect(await codeOf(t.request(req(2)))).toBe('answered');
    expect(await codeOf(t.request(req(1)))).toBe('answered'); // already current: the first answer counts
    expect([...t.recovered[0]!].sort()).toEqual([1, 2]);
    expect(t.recoveryMs[0]).toBe(9_000);
  });

  it('power-loss recovery: current again at the first configuration answer to a request sent after the power came back', async () => {
    const { clock, inner, t, plan } = setup([{ atMs: 0, action: 'power-loss', devices: [1, 2], forMs: 10_000 }]);
    const loss = plan.faults[0]!;
    // Device 1's poll went out before the loss and is answered after it: the device never saw that answer.
    t.powerLost(loss, 2);
    let answer!: () => void;
    inner.gate = new Promise((r) => (answer = r));
    const early = t.request(req(1));
    t.powerLost(loss, 1);
    clock.t = START + 12_000;
    answer();
    expect(await codeOf(early)).toBe('answered');
    expect([...t.recovered[0]!]).toEqual([]);
    inner.gate = undefined;
    expect(await codeOf(t.request(req(3)))).toBe('answered'); // not hit: not counted
    expect(await codeOf(t.request(req(1)))).toBe('answered'); // a power loss does not touch requests
    expect([...t.recovered[0]!]).toEqual([1]);
    expect(t.recoveryMs[0]).toBe(2_000);
    clock.t = START + 16_500;
    expect(await codeOf(t.request(req(2)))).toBe('answered');
    expect([...t.recovered[0]!].sort()).toEqual([1, 2]);
    expect(t.recoveryMs[0]).toBe(6_500);
    expect(t.requestsAffected[0]).toBe(0);
  });

  it('a request a fault fails costs its device the connection; a delayed or untouched one does not', async () => {
    const { t, timers, inner } = setup(
      [
        { atMs: 0, action: 'partition', devices: [1] },
        { atMs: 0, action: 'blackhole', devices: [2] },
        { atMs: 0, action: 'reset', devices: [3] },
        { atMs: 0, action: 'latency', devices: [4], delayMs: 10 },
        { atMs: 0, action: 'tls-failure', devices: [6] },
      ],
      1000,
    );
    expect(await codeOf(t.request(req(1)))).toBe('ENETUNREACH');
    const hung = codeOf(t.request(req(2)));
    expect(inner.lost).toEqual([1]); // the blackholed request has not failed yet
    await timers.advance(1000);
    expect(await hung).toBe('timeout');
    expect(await codeOf(t.request(req(3)))).toBe('ECONNRESET');
    const delayed = codeOf(t.request(req(4)));
    await timers.advance(10);
    expect(await delayed).toBe('answered');
    expect(await codeOf(t.request(req(5)))).toBe('answered');
    expect(await codeOf(t.request(req(6)))).toBe('ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE');
    expect(inner.lost).toEqual([1, 2, 3, 6]);
    // What the controller sees of the old connection: nothing while the network is cut, a reset, a FIN.
    expect(inner.lostHow).toEqual(['unreachable', 'unreachable', 'reset', 'closed']);
  });

  it('destroy() ends hung requests with closed and destroys the inner transport', async () => {
    const { t, inner } = setup([{ atMs: 0, action: 'blackhole' }]);
    const hung = codeOf(t.request(req(0)));
    expect(t.stats().running).toBe(1);
    await t.destroy();
    expect(await hung).toBe('closed');
    expect(inner.destroyed).toBe(true);
  });
});
