// Late starts count as latency: a device started after its scheduled arrival (a busy generator, a
// storm started in batches) sends its first requests due at the arrival time, so the lateness is
// measured (open model) instead of hidden.

import { describe, expect, it } from 'vitest';
import type { DeviceOptions } from '../src/device/device-options.js';
import type { Millis, Transport, TransportRequest, TransportResponse } from '../src/device/ports.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import { VirtualDevice } from '../src/device/virtual-device.js';
import { MetricRecorder } from '../src/fleet/metric-recorder.js';
import { ShardRunner, type FleetDevice } from '../src/fleet/shard-runner.js';
import type { ShardTask } from '../src/fleet/worker-protocol.js';
import { TimedTransport } from '../src/transport/timed-transport.js';
import type { RequestOutcome } from '../src/transport/request-observer.js';
import type { Scenario } from '../src/scenario/scenario-types.js';
import { BEHAVIOUR, FakeController, FakeTime, T0, fixtures } from './device-harness.js';
import { LateScheduler } from './fakes/late-scheduler.js';
import { testGroup as group } from './fixtures/test-group.js';

describe('VirtualDevice.start(dueAt)', () => {
  it('with a scheduler that fires 2 s late, the first request is due at the arrival time and its latency includes the lateness', async () => {
    const { pki, identity } = fixtures();
    const time = new FakeTime();
    const controller = new FakeController(time, pki, identity);
    const outcomes: RequestOutcome[] = [];
    const recorder = new MetricRecorder();
    const transport = new TimedTransport(controller, time, [recorder, { onOutcome: (o) => outcomes.push(o) }]);
    const late = new LateScheduler(time, 2_000);
    const opts: DeviceOptions = {
      index: 0,
      identity,
      behaviour: BEHAVIOUR,
      rootCertPem: pki.root.certPem,
      clock: time,
      scheduler: late,
      transport,
      rng: SeededRng.create(7, 0, 'device'),
    };
    const device = new VirtualDevice(opts);
    // The arrival is due at T0; the generator's scheduler gets to it 2 s late.
    late.at(T0, (dueAt) => device.start(dueAt));
    await time.advance(3_000);
    const first = outcomes[0]!;
    expect(first.endpoint).toBe('certs');
    expect(first.dueAt).toBe(T0);
    expect(first.sentAt).toBeGreaterThanOrEqual(T0 + 2_000);
    expect(first.doneAt - first.dueAt).toBeGreaterThanOrEqual(2_000);
    const delta = recorder.takeDelta();
    const certs = delta.series.find((s) => s.endpoint === 'certs')!;
    expect(certs.sumMs).toBeGreaterThanOrEqual(2_000);
  });

  it('a due time later than the start is clamped to the start', async () => {
    const { pki, identity } = fixtures();
    const time = new FakeTime();
    const controller = new FakeController(time, pki, identity);
    const device = new VirtualDevice({
      index: 0,
      identity,
      behaviour: BEHAVIOUR,
      rootCertPem: pki.root.certPem,
      clock: time,
      scheduler: time,
      transport: controller,
      rng: SeededRng.create(7, 0, 'device'),
    });
    device.start(T0 + 60_000);
    await time.advance(10);
    expect(controller.requests[0]!.dueAt).toBe(T0);
  });
});

// ---- the shard passes each device its scheduled arrival time ----


class StartRecordingDevice implements FleetDevice {
  static starts: { index: number; dueAt: Millis | undefined; at: Millis }[] = [];
  readonly tally = { undeliveredInfo: 0, undeliveredLogs: 0, undeliveredFlowlog: 0 };
  constructor(private readonly o: DeviceOptions) {}
  start(dueAt?: Millis): void {
    StartRecordingDevice.starts.push({ index: this.o.index, dueAt, at: this.o.clock.now() });
    // Some work per start, so a storm really is spread over several scheduler slices.
    const until = performance.now() + 2;
    while (performance.now() < until);
  }
  stop(): void {}
  rebootNow(): void {}
  backlog() {
    return { info: 0, logs: 0, flowlog: 0 };
  }
}

const idleTransport: Transport = {
  request: async (_req: TransportRequest): Promise<TransportResponse> => ({ status: 200, headers: {}, body: new Uint8Array(0) }),
};

describe('ShardRunner arrivals', () => {
  it('starts a storm in batches and hands every device its scheduled time, not the time it got to it', async () => {
    StartRecordingDevice.starts = [];
    const scenario: Scenario = {
      file: 'late.yaml',
      name: 'late',
      seed: 5,
      // An upper bound only: the run phase ends once all 48 have started, so a loaded machine that
      // takes longer to get through the storm gets more time instead of fewer starts.
      durationMs: 120_000,
      gracefulStopMs: 0,
      target: { kind: 'embedded' },
      groups: [group('a', 48)],
      arrival: { model: 'all-at-once', ratePerSec: 0 },
      timeline: [],
      thresholds: [],
    };
    const task: ShardTask = {
      workerId: 0,
      scenario,
      shard: { firstIndex: 0, count: 48, stride: 1 },
      target: { url: 'https://127.0.0.1:1', rootCaPem: 'PEM', insecure: false },
    };
    const runner = new ShardRunner(task, { createDevice: (o) => new StartRecordingDevice(o), createTransport: () => idleTransport, post: () => {} });
    await runner.prepare();
    const startAt = Date.now() + 30;
    const watch = setInterval(() => {
      if (StartRecordingDevice.starts.length === 48) runner.endRunPhase();
    }, 20);
    try {
      await runner.run(startAt);
    } finally {
      clearInterval(watch);
    }
    const starts = StartRecordingDevice.starts;
    expect(starts, 'the run phase reached its 120 s bound before all 48 devices started').toHaveLength(48);
    for (const s of starts) expect(s.dueAt).toBe(startAt);
    // The last ones really were started late (16 per wake-up, 2 ms each): the due time says when they should have been.
    expect(starts.at(-1)!.at - startAt).toBeGreaterThanOrEqual(48 * 2 - 1);
  }, 180_000);

  it('never starts a device due after the end, also when a stall lets a late wake-up get to it before the end does', async () => {
    StartRecordingDevice.starts = [];
    /** Device 1's start blocks the process for 300 ms, past the end (300 ms) and device 3's arrival (375 ms). */
    class StallingDevice extends StartRecordingDevice {
      constructor(o: DeviceOptions) {
        super(o);
        if (o.index === 1) {
          this.start = (dueAt?: Millis) => {
            super.start(dueAt);
            const until = performance.now() + 300;
            while (performance.now() < until);
          };
        }
      }
    }
    const scenario: Scenario = {
      file: 'stall.yaml',
      name: 'stall',
      seed: 5,
      durationMs: 300,
      gracefulStopMs: 0,
      target: { kind: 'embedded' },
      groups: [group('a', 6)],
      arrival: { model: 'uniform', ratePerSec: 8 }, // 0, 125, 250 ms, then 375 … (after the end)
      timeline: [],
      thresholds: [],
    };
    const task: ShardTask = {
      workerId: 0,
      scenario,
      shard: { firstIndex: 0, count: 6, stride: 1 },
      target: { url: 'https://127.0.0.1:1', rootCaPem: 'PEM', insecure: false },
    };
    const runner = new ShardRunner(task, { createDevice: (o) => new StallingDevice(o), createTransport: () => idleTransport, post: () => {} });
    await runner.prepare();
    const startAt = Date.now() + 30;
    const result = await runner.run(startAt);
    const starts = StartRecordingDevice.starts;
    // Device 2 (due 250 ms) was started late, after the stall; device 3 (due 375 ms) never.
    expect(starts.map((x) => x.index)).toEqual([0, 1, 2]);
    expect(starts[2]!.at - startAt).toBeGreaterThanOrEqual(375);
    expect(result.finalDelta.started).toBe(3);
  });
});
