// The runner's graceful stop: after the planned duration each worker tells its devices to drain,
// waits until their queues are empty or gracefulStop passes, then stops them. Shard level with
// stand-in devices, then end to end through the compiled runner with real devices and the embedded
// controller (needs `npm run build` first, as test/runner-run-scenario.test.ts).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DeviceOptions } from '../src/device/device-options.js';
import type { Millis, Transport, TransportRequest, TransportResponse } from '../src/device/ports.js';
import { ShardRunner, type FleetDevice } from '../src/fleet/shard-runner.js';
import { drainStartOffsetMs } from '../src/device/core/graceful-drain.js';
import type { ShardTask } from '../src/fleet/worker-protocol.js';
import type { Scenario } from '../src/scenario/scenario-types.js';
import type { FleetAggregate } from '../src/runner/aggregate.js';
import type { FleetDelta } from '../src/fleet/fleet-delta.js';
import { testGroup as group } from './fixtures/test-group.js';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';


/** Holds 3 info messages; sends them only once told to drain, one every 20 ms, until delivered. */
class QueueDevice implements FleetDevice {
  static drainCalls: { index: number; at: Millis; deliverFrom: Millis | undefined }[] = [];
  queued = 3;
  private draining = false;
  private stopped = false;
  readonly tally = { undeliveredInfo: 0, undeliveredLogs: 0, undeliveredFlowlog: 0 };
  constructor(private readonly o: DeviceOptions) {}
  start(): void {}
  rebootNow(): void {}
  drain(deliverFrom?: Millis): void {
    QueueDevice.drainCalls.push({ index: this.o.index, at: this.o.clock.now(), deliverFrom });
    this.draining = true;
    this.sendNext(this.o.clock.now());
  }
  get drained(): boolean {
    return this.draining && this.queued === 0;
  }
  private sendNext(dueAt: Millis): void {
    if (this.stopped || this.queued === 0) return;
    void this.o.transport
      .request({ endpoint: 'info', method: 'POST', path: '/info', headers: {}, dueAt, deviceIndex: this.o.index })
      .then((res) => {
        if (res.status === 200) this.queued--;
        this.o.scheduler.at(this.o.clock.now() + 20, (d) => this.sendNext(d));
      });
  }
  stop(): void {
    this.stopped = true;
    this.tally.undeliveredInfo += this.queued;
  }
  backlog() {
    return { info: this.queued, logs: 0, flowlog: 0 };
  }
}

/** Device 1 is always refused (503); the others are accepted. */
const transport: Transport = {
  request: async (req: TransportRequest): Promise<TransportResponse> => ({
    status: req.deviceIndex === 1 ? 503 : 200,
    headers: {},
    body: new Uint8Array(0),
  }),
};

function task(gracefulStopMs: number, count: number): ShardTask {
  const scenario: Scenario = {
    file: 'drain.yaml',
    name: 'drain',
    seed: 3,
    durationMs: 300,
    gracefulStopMs,
    target: { kind: 'embedded' },
    groups: [group('a', count)],
    arrival: { model: 'uniform', ratePerSec: 8 }, // 0, 125, 250 ms, then 375 … (after the end: never started)
    timeline: [],
    thresholds: [],
  };
  return { workerId: 0, scenario, shard: { firstIndex: 0, count, stride: 1 }, target: { url: 'https://127.0.0.1:1', rootCaPem: 'PEM', insecure: false } };
}

describe('ShardRunner graceful stop', () => {
  it('drains after the duration, waits for the queues, records drain requests, and counts what a refusing controller kept back', async () => {
    QueueDevice.drainCalls = [];
    const runner = new ShardRunner(task(600, 6), { createDevice: (o) => new QueueDevice(o), createTransport: () => transport, post: () => {} });
    await runner.prepare();
    const startAt = Date.now() + 20;
    const result = await runner.run(startAt);
    // Devices due after the end never started; the three started ones were told to drain at the end.
    expect(result.finalDelta.started).toBe(3);
    expect(QueueDevice.drainCalls.map((c) => c.index)).toEqual([0, 1, 2]);
    for (const c of QueueDevice.drainCalls) expect(c.at).toBeGreaterThanOrEqual(startAt + 300 - 1);
    // Each is told its own seeded start in the first third of the 600 ms window (the same instant
    // of the drain's start plus drainStartOffsetMs(seed 3, its index)).
    const base = QueueDevice.drainCalls[0]!.deliverFrom! - drainStartOffsetMs(3, 0, 600);
    for (const c of QueueDevice.drainCalls) {
      expect(c.deliverFrom).toBe(base + drainStartOffsetMs(3, c.index, 600));
      expect(c.deliverFrom! - base).toBeLessThan(200);
    }
    expect(base).toBeGreaterThanOrEqual(startAt + 300 - 1);
    expect(base).toBeLessThanOrEqual(QueueDevice.drainCalls[0]!.at);
    expect(new Set(QueueDevice.drainCalls.map((c) => c.deliverFrom)).size).toBe(3);
    // Device 1 never got through: the drain ran to its limit and left its 3 messages.
    expect(result.drain).toBeDefined();
    expect(result.drain!.complete).toBe(false);
    expect(result.drain!.ms).toBeGreaterThanOrEqual(590);
    // Ended at its limit, not at the 15 s default (with room for a loaded machine).
    expect(result.drain!.ms).toBeLessThan(10_000);
    expect(result.drain!.leftAtStop).toEqual({ info: 3, logs: 0, flowlog: 0 });
    expect(result.undelivered).toEqual({ info: 3, logs: 0, flowlog: 0 });
    // Requests made during the drain were recorded: 3 + 3 delivered, and device 1's refusals as errors.
    expect(result.totals.requests).toBeGreaterThanOrEqual(6 + 10);
    expect(result.totals.errors).toBe(result.totals.requests - 6);
  });

  it('ends the run\'s last interval at the drain\'s start: no delta holds both the run and the drain', async () => {
    QueueDevice.drainCalls = [];
    const deltas: FleetDelta[] = [];
    const post = (m: unknown) => {
      const msg = m as { type?: string; delta?: FleetDelta };
      if (msg.type === 'delta' && msg.delta) deltas.push(msg.delta);
    };
    const runner = new ShardRunner(task(600, 6), { createDevice: (o) => new QueueDevice(o), createTransport: () => transport, post });
    await runner.prepare();
    const startAt = Date.now() + 20;
    const result = await runner.run(startAt);
    const drainAt = QueueDevice.drainCalls[0]!.at;
    // A delta ends between the run's end and the first device's drain call (the 300 ms run is
    // shorter than the 1 s delta interval, so without the cut none does unless timers ran very late).
    const ended = deltas.filter((d) => !d.final && d.atMs >= startAt + 300 - 1 && d.atMs <= drainAt);
    expect(ended.length).toBeGreaterThanOrEqual(1);
    const cut = ended[ended.length - 1]!;
    // It holds none of the drain's requests, and the next delta starts where it ended.
    expect(cut.drain).toBeUndefined();
    // (The last one is the result's, not posted.)
    const next = deltas[deltas.indexOf(cut) + 1] ?? result.finalDelta;
    expect(next.atMs - next.intervalMs).toBe(cut.atMs);
  });

  it('ends as soon as every queue is empty', async () => {
    const healthy: Transport = { request: async () => ({ status: 200, headers: {}, body: new Uint8Array(0) }) };
    // A limit far above the ~60 ms the queues take, and above the bounds below: a drain that ran
    // to its limit fails them instead of passing on a fast machine.
    const runner = new ShardRunner(task(45_000, 3), { createDevice: (o) => new QueueDevice(o), createTransport: () => healthy, post: () => {} });
    await runner.prepare();
    const t0 = Date.now();
    const result = await runner.run(t0);
    expect(result.drain!.complete).toBe(true);
    expect(result.drain!.ms).toBeLessThan(20_000);
    expect(result.drain!.leftAtStop).toEqual({ info: 0, logs: 0, flowlog: 0 });
    expect(result.undelivered).toEqual({ info: 0, logs: 0, flowlog: 0 });
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  it('waits for answers already awaited; one that comes after the limit is unfinished, and counted once', async () => {
    // The answer is held until the test lets it go, relative to the drain's start (device.drain()),
    // so the outcome does not depend on how fast a loaded machine turns its timers.
    let answer: (() => void) | undefined;
    let onDrain: () => void = () => {};
    /** Sends one request as it starts; nothing queued. */
    class SlowPollDevice implements FleetDevice {
      readonly tally = { undeliveredInfo: 0, undeliveredLogs: 0, undeliveredFlowlog: 0 };
      constructor(private readonly o: DeviceOptions) {}
      start(dueAt?: Millis): void {
        void this.o.transport.request({ endpoint: 'config', method: 'POST', path: '/config', headers: {}, dueAt: dueAt ?? this.o.clock.now(), deviceIndex: this.o.index }).catch(() => {});
      }
      rebootNow(): void {}
      drain(): void {
        onDrain();
      }
      readonly drained = true;
      stop(): void {}
      backlog() {
        return { info: 0, logs: 0, flowlog: 0 };
      }
    }
    const held: Transport = { request: () => new Promise((resolve) => (answer = () => resolve({ status: 200, headers: {}, body: new Uint8Array(0) }))) };
    const one = (gracefulStopMs: number): ShardTask => {
      const t = task(gracefulStopMs, 1);
      return { ...t, scenario: { ...t.scenario, groups: [group('a', 1)] } };
    };
    // Answered 100 ms into a 5 s drain: the drain waits for it.
    onDrain = () => setTimeout(() => answer!(), 100);
    const patient = new ShardRunner(one(5_000), { createDevice: (o) => new SlowPollDevice(o), createTransport: () => held, post: () => {} });
    await patient.prepare();
    const answered = await patient.run(Date.now() + 20);
    expect(answered.drain!.complete).toBe(true);
    expect(answered.drain!.ms).toBeGreaterThanOrEqual(50);
    expect(answered.totals).toMatchObject({ requests: 1, errors: 0 });
    expect(answered.finalDelta.requests).toEqual([{ endpoint: 'config', api: 'v2', status: '200', count: 1 }]);

    // Answered only after a 20 ms drain is over: unfinished.
    answer = undefined;
    onDrain = () => {};
    const hasty = new ShardRunner(one(20), { createDevice: (o) => new SlowPollDevice(o), createTransport: () => held, post: () => {} });
    await hasty.prepare();
    const cut = await hasty.run(Date.now() + 20);
    expect(cut.drain!.complete).toBe(false);
    expect(cut.totals).toMatchObject({ requests: 1, errors: 1 });
    expect(cut.finalDelta.errors).toEqual([{ endpoint: 'config', api: 'v2', status: 'unfinished', count: 1 }]);
    // Its answer arrives now: not counted again (the worker's recorder, live).
    const live = (hasty as unknown as { recorder: { totals: { requests: number } } }).recorder.totals;
    expect(answer).toBeDefined();
    answer!();
    await new Promise((r) => setTimeout(r, 50));
    expect(live.requests).toBe(1);
  });

  it('gracefulStop 0 stops at once and counts the queues as undelivered', async () => {
    const runner = new ShardRunner(task(0, 3), { createDevice: (o) => new QueueDevice(o), createTransport: () => transport, post: () => {} });
    await runner.prepare();
    const result = await runner.run(Date.now());
    // No wait (a loaded machine may still take a while over the drain's own steps) ...
    expect(result.drain!.ms).toBeLessThan(1000);
    expect(result.undelivered.info).toBeGreaterThan(0);
    // ... and none for the queues: devices 0 and 2, which the transport accepts, need 40 ms and
    // scheduler wake-ups to deliver theirs, and kept them too (device 1 is refused: 3).
    expect(result.undelivered.info).toBeGreaterThan(3);
  });
});

// ---- end to end ----

const dir = mkdtempSync(join(tmpdir(), 'evesim-drain-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The duration is only an upper bound: the run phase ends (endRunPhase) once every device is
// onboarded, was refused its config before attestation (expected) and has written log lines for a
// while (enoughHappened below). The graceful stop ends as soon as the queues are delivered.
const SCENARIO = `
name: drain-e2e
seed: 23
duration: 120s
gracefulStop: 20s
target: embedded
arrival:
  model: uniform
  over: 1s
groups:
  - name: a
    count: 4
    logs:
      linesPerSec: 3
thresholds:
  - errors.count == 0
  - undelivered.count == 0
  - newlogs.count == 0
  - drain.newlogs.count >= 4
  - drain.newlogs.p99 < 20s
  - expected.count >= 4
`;

/**
 * Every device onboarded and had its config poll before attestation refused (expected), and the
 * run has lasted 2 s since the first delta (which comes after the start): with arrivals over 1 s
 * every device has been writing lines at 3/s for over a second, which the drain delivers.
 */
function enoughHappened(aggregate: FleetAggregate, firstDeltaAtMs: number): boolean {
  let configExpected = 0;
  for (const [key, n] of aggregate.expected) if (key.startsWith('config|403|')) configExpected += n;
  return aggregate.onboardedEver() === 4 && configExpected >= 4 && Date.now() - firstDeltaAtMs >= 2000;
}

describe('runScenario graceful stop (compiled runner, real devices, embedded controller)', () => {
  it('delivers every queued message after a short run: undelivered 0, config 403 before attestation expected, drain reported', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const file = join(dir, 'drain.yaml');
    writeFileSync(file, SCENARIO);
    let outText = '';
    const end = new AbortController();
    let firstDeltaAtMs: number | undefined;
    const result = await run.runScenario({
      scenarioFile: file,
      workers: 2,
      endRunPhase: end.signal,
      onProgress: (aggregate) => {
        firstDeltaAtMs ??= Date.now();
        if (!end.signal.aborted && enoughHappened(aggregate, firstDeltaAtMs)) end.abort();
      },
      stateDir: join(dir, 'state'),
      quiet: true,
      startEmbeddedController: ctl.startControllerInThread,
      out: (t) => (outText += t),
      err: () => {},
    });
    expect(end.signal.aborted, 'the run phase reached its 120 s bound before every device onboarded and was refused its first config').toBe(true);
    const s = result.summary!;
    // Log files only exist as lines written since start: EVE's first upload tick is 90 s away, so
    // every newlogs request here was made by the drain: the run's figures hold none (thresholds
    // judge the run without its drain), the drain's hold them all.
    expect(s.endpoints.newlogs?.count ?? 0).toBe(0);
    expect(s.drain!.endpoints!.newlogs!.count).toBeGreaterThanOrEqual(4);
    expect(s.thresholds.map((t) => `${t.passed ? 'ok' : 'FAIL'} ${t.source} (${t.detail})`)).toEqual(
      s.thresholds.map((t) => `ok ${t.source} (${t.detail})`),
    );
    expect(result.exitCode).toBe(0);
    expect(s.drain).toBeDefined();
    expect(s.drain!.gracefulStopMs).toBe(20_000);
    expect(s.drain!.complete).toBe(true);
    expect(s.drain!.durationMs).toBeLessThan(20_000);
    expect(s.drain!.leftAtStop).toEqual({ info: 0, logs: 0, flowlog: 0 });
    expect(s.undelivered.total).toBe(0);
    expect(s.endpoints.config!.expected).toBeGreaterThanOrEqual(4);
    // Run + drain = every request: the time series (which counts every request) agrees per endpoint.
    const intervals = s.series!.intervals;
    const drainEndpoints = s.drain!.endpoints ?? {};
    for (const endpoint of new Set([...Object.keys(s.endpoints), ...Object.keys(drainEndpoints)])) {
      const inSeries = intervals.reduce((n, i) => n + (i.endpoints[endpoint]?.requests ?? 0), 0);
      expect(inSeries, endpoint).toBe((s.endpoints[endpoint]?.count ?? 0) + (drainEndpoints[endpoint]?.count ?? 0));
    }
    const total = intervals.reduce((n, i) => n + Object.values(i.endpoints).reduce((m, e) => m + e.requests, 0), 0);
    expect(s.overall.count + s.drain!.overall!.count).toBe(total);
    // The drain's requests all lie in the drain's intervals, and they are spread (each device starts
    // at its own seeded instant in the first third of the window), not one burst at the end.
    const runNewlogs = intervals.filter((i) => i.phase === 'run').reduce((n, i) => n + (i.endpoints.newlogs?.requests ?? 0), 0);
    expect(runNewlogs).toBe(0);
    const drainLogTimes = intervals.filter((i) => i.phase === 'drain' && (i.endpoints.newlogs?.requests ?? 0) > 0).map((i) => i.tMs);
    expect(drainLogTimes.length).toBeGreaterThanOrEqual(2);
    expect(drainLogTimes[drainLogTimes.length - 1]! - drainLogTimes[0]!).toBeGreaterThanOrEqual(1000);
    expect(outText).toMatch(/drain {8}\d+\.\d s of up to 20\.0 s .*every queued reliable message delivered/);
    expect(outText).toMatch(/expected rejections: config 403 ×\d+ — before attestation, as EVE does/);
  }, 120_000);
});
