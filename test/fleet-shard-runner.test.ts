import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { arrivalOffsetsMs, planShards, shardIndex, shardLocal } from '../src/fleet/arrival-schedule.js';
import { FleetLayout } from '../src/fleet/fleet-layout.js';
import { ShardRunner, serverOf, type FleetDevice } from '../src/fleet/shard-runner.js';
import type { DeviceOptions } from '../src/device/device-options.js';
import type { Transport, TransportRequest, TransportResponse } from '../src/device/ports.js';
import type { ShardResult, ShardTask, WorkerToMain } from '../src/fleet/worker-protocol.js';
import type { GroupSpec, Scenario } from '../src/scenario/scenario-types.js';
import { FleetAggregate } from '../src/runner/aggregate.js';
import { testGroup } from './fixtures/test-group.js';

const group = (name: string, count: number, preRegistered = false): GroupSpec => testGroup(name, count, { preRegistered });

function scenario(over: Partial<Scenario> = {}): Scenario {
  return {
    file: 'test.yaml',
    name: 'test',
    seed: 42,
    durationMs: 600,
    target: { kind: 'embedded' },
    groups: [group('a', 4), group('b', 4, true)],
    arrival: { model: 'uniform', ratePerSec: 40 }, // 25 ms apart: the last of 8 at 175 ms
    timeline: [{ atMs: 400, action: 'reboot', group: 'b' }],
    thresholds: [],
    ...over,
  };
}

describe('arrival schedule and shards', () => {
  it('uniform, all-at-once and seeded poisson offsets do not depend on the shard split', () => {
    const all = Array.from({ length: 100 }, (_, i) => i);
    expect([...arrivalOffsetsMs({ model: 'uniform', ratePerSec: 10 }, 1, [0, 3, 7])]).toEqual([0, 300, 700]);
    expect([...arrivalOffsetsMs({ model: 'all-at-once', ratePerSec: 0 }, 1, [0, 5])]).toEqual([0, 0]);
    const whole = arrivalOffsetsMs({ model: 'poisson', ratePerSec: 50 }, 9, all);
    const odd = arrivalOffsetsMs({ model: 'poisson', ratePerSec: 50 }, 9, all.filter((i) => i % 2 === 1));
    expect([...odd]).toEqual(all.filter((i) => i % 2 === 1).map((i) => whole[i]));
    for (let i = 1; i < whole.length; i++) expect(whole[i]!).toBeGreaterThanOrEqual(whole[i - 1]!);
    // Mean gap near 1/rate = 20 ms.
    expect(whole[99]! / 99).toBeGreaterThan(12);
    expect(whole[99]! / 99).toBeLessThan(30);
    // A different seed gives a different schedule.
    expect(arrivalOffsetsMs({ model: 'poisson', ratePerSec: 50 }, 10, all)[50]).not.toBe(whole[50]);
  });

  it('stride shards cover every device exactly once', () => {
    for (const [total, workers] of [
      [10, 3],
      [2, 4],
      [0, 2],
      [10_001, 2],
    ] as const) {
      const shards = planShards(total, workers);
      expect(shards.length).toBe(Math.min(workers, Math.max(1, total)));
      const seen = new Set<number>();
      for (const s of shards)
        for (let k = 0; k < s.count; k++) {
          seen.add(shardIndex(s, k));
          expect(shardLocal(s, shardIndex(s, k))).toBe(k);
        }
      expect(seen.size).toBe(total);
      expect(Math.max(-1, ...seen)).toBe(total - 1);
    }
    expect(() => planShards(5, 0)).toThrow(/workers/);
  });

  it('maps fleet indices to groups in file order', () => {
    const l = FleetLayout.of({ groups: [group('a', 2), group('b', 0), group('c', 3)] });
    expect([0, 1, 2, 3, 4].map((i) => l.groupOf(i))).toEqual([0, 0, 2, 2, 2]);
    expect(() => l.groupOf(5)).toThrow(/outside the fleet/);
    expect(() => l.groupNamed('zz')).toThrow(/no group named "zz"/);
  });
});

/** A stand-in device: one request per 50 ms after it starts, onboarded after its first answer. */
class FakeDevice implements FleetDevice {
  static log: { index: number; event: string; at: number }[] = [];
  private timer: number | undefined;
  private running = false;
  constructor(private readonly o: DeviceOptions) {
    if (o.index === 5) throw new Error('device 5 cannot be built');
  }
  start(): void {
    FakeDevice.log.push({ index: this.o.index, event: 'start', at: this.o.clock.now() });
    this.running = true;
    this.o.onStateChange?.('idle', 'fetching-certs', this.o.index);
    this.tick(this.o.clock.now());
  }
  private tick(dueAt: number): void {
    if (!this.running) return;
    this.o.transport
      .request({ endpoint: 'config', method: 'POST', path: '/c', headers: {}, dueAt, deviceIndex: this.o.index })
      .then((res) => {
        if (res.status === 200 && this.running) this.o.onStateChange?.('fetching-certs', 'onboarded', this.o.index);
        if (this.o.index === 2) this.o.onFinding?.({ deviceIndex: 2, endpoint: 'config', kind: 'bad-signature', detail: 'test' });
      })
      .catch(() => {});
    this.timer = this.o.scheduler.at(dueAt + 50, (d) => this.tick(d));
  }
  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.o.scheduler.cancel(this.timer);
  }
  rebootNow(): void {
    FakeDevice.log.push({ index: this.o.index, event: 'reboot', at: this.o.clock.now() });
  }
  get tally() {
    return { undeliveredInfo: this.o.index === 1 ? 2 : 0, undeliveredLogs: 0, undeliveredFlowlog: 0 };
  }
  backlog() {
    return { info: 1, logs: 0, flowlog: 0 };
  }
}

/** A device whose one queued message is delivered on a scheduler wake-up after drain() is called. */
class DrainingDevice extends FakeDevice {
  private queued = 1;
  private draining = false;
  constructor(private readonly opts: DeviceOptions) {
    super(opts);
  }
  drain(): void {
    this.draining = true;
    this.opts.scheduler.at(this.opts.clock.now() + 20, () => {
      this.queued = 0;
    });
  }
  get drained(): boolean {
    return this.draining && this.queued === 0;
  }
  override backlog() {
    return { info: this.queued, logs: 0, flowlog: 0 };
  }
}

class FakeTransport implements Transport {
  requests = 0;
  destroyed = false;
  async request(req: TransportRequest): Promise<TransportResponse> {
    this.requests++;
    await new Promise((r) => setTimeout(r, 3));
    return { status: req.deviceIndex === 3 ? 503 : 200, headers: {}, body: new Uint8Array(0) };
  }
  stats() {
    return { running: 0 };
  }
  async destroy() {
    this.destroyed = true;
  }
}

/** A device factory that keeps the options each device was built with. */
function capturingFactory(make: (o: DeviceOptions) => FleetDevice): { seen: DeviceOptions[]; createDevice: (o: DeviceOptions) => FleetDevice } {
  const seen: DeviceOptions[] = [];
  return {
    seen,
    createDevice: (o) => {
      seen.push(o);
      return make(o);
    },
  };
}

describe('ShardRunner', () => {
  it('prepares identities, starts devices on schedule, applies reboots, reports deltas and survives device errors', async () => {
    FakeDevice.log = [];
    const sc = scenario({ durationMs: 120_000 });
    const task: ShardTask = {
      workerId: 0,
      scenario: sc,
      shard: { firstIndex: 0, count: 8, stride: 1 },
      target: { url: 'https://127.0.0.1:1', rootCaPem: 'PEM', insecure: false },
      deltaIntervalMs: 100,
    };
    const posted: WorkerToMain[] = [];
    const transport = new FakeTransport();
    const runner = new ShardRunner(task, {
      createDevice: (o) => new FakeDevice(o),
      createTransport: () => transport,
      post: (m) => posted.push(m),
    });
    const prep = await runner.prepare();
    expect(prep.devices.map((d) => d.group)).toEqual(['a', 'a', 'a', 'a', 'b', 'b', 'b', 'b']);
    expect(prep.devices.every((d) => /^SIM[0-9A-Z]{12}$/.test(d.serial))).toBe(true);
    // Device certificates go to the controller only for the pre-registered group.
    expect(prep.devices.slice(0, 4).every((d) => d.deviceCertPem === undefined)).toBe(true);
    expect(prep.devices.slice(4).every((d) => d.deviceCertPem?.includes('BEGIN CERTIFICATE'))).toBe(true);

    const startAt = Date.now() + 50;
    // The run phase ends once the reboot at 400 ms went out and more than 60 requests did (the
    // scenario's 600 ms are stretched to an upper bound of 120 s), so a loaded machine that runs
    // the wake-ups late gets more time instead of fewer requests.
    const enough = () => FakeDevice.log.filter((e) => e.event === 'reboot').length === 3 && transport.requests > 60;
    const watch = setInterval(() => {
      if (enough()) runner.endRunPhase();
    }, 20);
    let result: ShardResult;
    try {
      result = await runner.run(startAt);
    } finally {
      clearInterval(watch);
    }
    expect(enough(), 'the run phase reached its 120 s bound before the reboot and 60 requests').toBe(true);

    // Arrivals: 25 ms apart in index order, never early (device 5 failed to build).
    const starts = FakeDevice.log.filter((e) => e.event === 'start');
    expect(starts.map((e) => e.index)).toEqual([0, 1, 2, 3, 4, 6, 7]);
    for (const s of starts) expect(s.at).toBeGreaterThanOrEqual(startAt + s.index * 25 - 0.001);
    // The reboot at 400 ms hit the started devices of group b only.
    const reboots = FakeDevice.log.filter((e) => e.event === 'reboot');
    expect(reboots.map((e) => e.index)).toEqual([4, 6, 7]);
    expect(reboots[0]!.at).toBeGreaterThanOrEqual(startAt + 400);

    // Every answered request is in exactly one delta.
    const agg = new FleetAggregate();
    for (const m of posted) if (m.type === 'delta') agg.merge(m.delta);
    agg.merge(result.finalDelta);
    expect(result.finalDelta.final).toBe(true);
    expect(agg.totalRequests).toBeGreaterThan(50);
    expect(agg.totalRequests).toBeLessThanOrEqual(transport.requests);
    // Every error, the run's and the drain's (these stand-ins do not drain: they poll on past the end).
    expect(agg.totalErrors).toBe((agg.requests.get('config|503') ?? 0) + (agg.drain.requests.get('config|503') ?? 0));
    expect(agg.findings.get('bad-signature')).toBeGreaterThan(0);
    expect(agg.deviceErrors).toBe(1);
    expect(agg.findingSamples.some((f) => f.detail.includes('device 5 cannot be built'))).toBe(true);
    expect(agg.onboardedEver()).toBe(6); // 7 started, device 3 only ever got 503s
    expect(agg.started()).toBe(7);
    expect(result.undelivered).toEqual({ info: 2, logs: 0, flowlog: 0 });
    expect(result.finalDelta.queueBacklog).toEqual({ info: 7, logs: 0, flowlog: 0 });
    expect(result.totals.deviceErrors).toBe(1);
    expect(transport.destroyed).toBe(true);
    expect(result.loop.p99Ms).toBeGreaterThanOrEqual(0);
    expect(result.finalDelta.pendingTimers).toBe(0);
  }, 180_000);

  it('tells the transport when a device goes down, by fleet index, so its own connection goes with it', async () => {
    FakeDevice.log = [];
    /** Reports going down on a reboot and stopping, as VirtualDevice does through setLifecycle. */
    class DownReportingDevice extends FakeDevice {
      constructor(private readonly opts: DeviceOptions) {
        super(opts);
      }
      override rebootNow(): void {
        super.rebootNow();
        this.opts.onStateChange?.('onboarded', 'idle', this.opts.index);
      }
      override stop(): void {
        super.stop();
        this.opts.onStateChange?.('onboarded', 'stopped', this.opts.index);
      }
    }
    const down: number[] = [];
    const transport = Object.assign(new FakeTransport(), { deviceDown: (i: number) => down.push(i) });
    const task: ShardTask = {
      workerId: 1,
      scenario: scenario({ durationMs: 60_000 }),
      // Fleet devices 1, 3, 5 and 7: local 3 is fleet device 7 (group b, rebooted at 400 ms); 5 fails to build.
      shard: { firstIndex: 1, count: 4, stride: 2 },
      target: { url: 'https://127.0.0.1:1', rootCaPem: 'PEM', insecure: false },
    };
    const runner = new ShardRunner(task, { createDevice: (o) => new DownReportingDevice(o), createTransport: () => transport, post: () => {} });
    await runner.prepare();
    const watch = setInterval(() => {
      if (FakeDevice.log.some((e) => e.event === 'reboot')) runner.endRunPhase();
    }, 10);
    try {
      await runner.run(Date.now());
    } finally {
      clearInterval(watch);
    }
    expect(FakeDevice.log.filter((e) => e.event === 'reboot').map((e) => e.index)).toEqual([7]);
    // Stopping at the end is not going down: the transport closes every connection then.
    expect(down).toEqual([7]);
  });

  it('stop() ends a run early and still returns figures', async () => {
    const task: ShardTask = {
      workerId: 1,
      scenario: scenario({ durationMs: 60_000, groups: [group('a', 2)], timeline: [] }),
      shard: { firstIndex: 0, count: 2, stride: 1 },
      target: { url: 'https://127.0.0.1:1', rootCaPem: 'PEM', insecure: false },
    };
    const runner = new ShardRunner(task, { createDevice: (o) => new FakeDevice(o), createTransport: () => new FakeTransport(), post: () => {} });
    await runner.prepare();
    const t0 = Date.now();
    setTimeout(() => runner.stop(), 150);
    const result = await runner.run(t0);
    // Far below the 60 s duration, with room for a loaded machine.
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(result.totals.requests).toBeGreaterThan(0);
  });

  it('endRunPhase() ends the run phase early, and the graceful stop still runs its timers', async () => {
    const task: ShardTask = {
      workerId: 1,
      scenario: scenario({ durationMs: 600_000, gracefulStopMs: 60_000, groups: [group('a', 2)], timeline: [] }),
      shard: { firstIndex: 0, count: 2, stride: 1 },
      target: { url: 'https://127.0.0.1:1', rootCaPem: 'PEM', insecure: false },
    };
    const runner = new ShardRunner(task, { createDevice: (o) => new DrainingDevice(o), createTransport: () => new FakeTransport(), post: () => {} });
    await runner.prepare();
    setTimeout(() => runner.endRunPhase(), 150);
    const result = await runner.run(Date.now());
    // The drain ended because both devices delivered (their wake-ups fired), not at its limit.
    expect(result.drain?.complete).toBe(true);
    expect(result.drain?.leftAtStop).toEqual({ info: 0, logs: 0, flowlog: 0 });
    expect(result.drain!.ms).toBeLessThan(60_000);
  });

  it("ends the worker's loop figures with the drain: the shutdown's stall is not the run's", async () => {
    // A device whose stop() holds the thread, as 200,000 waiting requests failed at once did after
    // fleet-100k overloaded its machine (a 28 s stall reported as the run's longest).
    const STALL_MS = 1500;
    class SlowStopDevice extends FakeDevice {
      override stop(): void {
        super.stop();
        const until = performance.now() + STALL_MS;
        while (performance.now() < until) {
          // holds the event loop, as a long synchronous shutdown does
        }
      }
    }
    const task: ShardTask = {
      workerId: 1,
      scenario: scenario({ durationMs: 300, gracefulStopMs: 0, groups: [group('a', 1)], timeline: [] }),
      shard: { firstIndex: 0, count: 1, stride: 1 },
      target: { url: 'https://127.0.0.1:1', rootCaPem: 'PEM', insecure: false },
    };
    // Closing a real pool takes I/O, so the loop's timers run (and would record the stall) before the worker reports.
    class PoolLikeTransport extends FakeTransport {
      override async destroy() {
        await new Promise((r) => setTimeout(r, 50));
        this.destroyed = true;
      }
    }
    const runner = new ShardRunner(task, { createDevice: (o) => new SlowStopDevice(o), createTransport: () => new PoolLikeTransport(), post: () => {} });
    await runner.prepare();
    const t0 = Date.now();
    const result = await runner.run(t0);
    // The stall did happen (the run took it), but after the loop's figures were taken.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(STALL_MS);
    expect(result.loop.maxMs).toBeLessThan(STALL_MS / 2);
    expect(result.finalDelta.loop.maxMs).toBeLessThan(STALL_MS / 2);
  });

  it('hands --log-memory and the spill file to every device, and sums their waiting log files at the memory sample', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'evesim-shard-logmem-'));
    try {
      /** Device i has 1000 + i bytes of log files waiting, 10 of them in memory. */
      class KeepingDevice extends DrainingDevice {
        private readonly index: number;
        constructor(o: DeviceOptions) {
          super(o);
          this.index = o.index;
        }
        logKeeping() {
          return { keptBytes: 1000 + this.index, memoryBytes: 10 };
        }
      }
      const task: ShardTask = {
        workerId: 0,
        scenario: scenario({ durationMs: 600_000, gracefulStopMs: 60_000, groups: [group('a', 3)], timeline: [] }),
        shard: { firstIndex: 0, count: 3, stride: 1 },
        target: { url: 'https://127.0.0.1:1', rootCaPem: 'PEM', insecure: false },
        stateDir,
        logMemoryBytes: 0,
      };
      const { seen, createDevice } = capturingFactory((o) => new KeepingDevice(o));
      const runner = new ShardRunner(task, { createDevice, createTransport: () => new FakeTransport(), post: () => {} });
      await runner.prepare();
      setTimeout(() => runner.endRunPhase(), 150);
      const result = await runner.run(Date.now());
      expect(seen.map((o) => o.logMemoryBytes)).toEqual([0, 0, 0]);
      expect(seen.every((o) => o.logSpill !== undefined)).toBe(true);
      expect(result.memory.atSample?.logFiles).toEqual({ keptBytes: 3003, memoryBytes: 30 });
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('leaves the devices\' log memory budget at its default without --log-memory', async () => {
    const task: ShardTask = {
      workerId: 0,
      scenario: scenario({ durationMs: 600_000, groups: [group('a', 1)], timeline: [] }),
      shard: { firstIndex: 0, count: 1, stride: 1 },
      target: { url: 'https://127.0.0.1:1', rootCaPem: 'PEM', insecure: false },
    };
    const { seen, createDevice } = capturingFactory((o) => new FakeDevice(o));
    const runner = new ShardRunner(task, { createDevice, createTransport: () => new FakeTransport(), post: () => {} });
    await runner.prepare();
    setTimeout(() => runner.stop(), 100);
    await runner.run(Date.now());
    expect(seen.length).toBe(1);
    expect('logMemoryBytes' in seen[0]!).toBe(false);
  });
});

describe('the controller a device names in its metrics', () => {
  it('is the host:port of the URL its group talks to, as /config/server holds it', async () => {
    const task: ShardTask = {
      workerId: 0,
      scenario: scenario({ durationMs: 600_000, groups: [group('a', 2), testGroup('old', 1, { api: 'v1' })], timeline: [] }),
      shard: { firstIndex: 0, count: 3, stride: 1 },
      target: { url: 'https://127.0.0.1:8443/', v1Url: 'https://[::1]:8445', rootCaPem: 'PEM', insecure: false },
    };
    const { seen, createDevice } = capturingFactory((o) => new FakeDevice(o));
    const runner = new ShardRunner(task, { createDevice, createTransport: () => new FakeTransport(), post: () => {} });
    await runner.prepare();
    const started = setInterval(() => seen.length === 3 && runner.stop(), 10);
    await runner.run(Date.now());
    clearInterval(started);
    expect(seen.map((o) => o.server)).toEqual(['127.0.0.1:8443', '127.0.0.1:8443', '[::1]:8445']);
  });

  it('keeps the port as the URL gives it, default or not', () => {
    expect(serverOf('https://ctrl.example.com')).toBe('ctrl.example.com');
    expect(serverOf('https://ctrl.example.com:443/api')).toBe('ctrl.example.com:443');
    expect(serverOf('http://10.0.0.1:8080?x')).toBe('10.0.0.1:8080');
  });
});
