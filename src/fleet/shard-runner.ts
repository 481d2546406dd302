// Runs one shard of the fleet inside a worker thread: loads the shard's identities, builds each
// device's options from the scenario (identity, group behaviour, seeded rng, the worker's shared
// transport and scheduler), starts devices as the arrival model says, applies device-side timeline
// actions (reboot), reports a delta every second and stops everything when the run ends.
//
// Per device the shard keeps: the device object, its identity (key objects made once) and one
// small state-change callback. Everything else (transport, undici pool, scheduler, recorder,
// arrival cursor) is per worker.

import { readFileSync } from 'node:fs';
import { createPrivateKey } from 'node:crypto';
import { join } from 'node:path';
import type { DeviceFinding, DeviceIdentity, DeviceLifecycle, DeviceOptions } from '../device/device-options.js';
import type { Clock, Millis, Transport } from '../device/ports.js';
import { SeededRng } from '../device/seeded-rng.js';
import { FleetIdentityStore } from '../identity/fleet-identity-store.js';
import type { DeviceIdentityMaterial } from '../identity/device-identity.js';
import { senderCertHash } from '../protocol/cert-hash.js';
import { certificateDer } from '../protocol/pem.js';
import { ControllerTransport } from '../transport/controller-transport.js';
import { RecordWriter } from '../transport/record-writer.js';
import { TimedTransport } from '../transport/timed-transport.js';
import { arrivalOffsetsMs, shardIndex } from './arrival-schedule.js';
import { DeltaSender } from './delta-sender.js';
import { emptyLifecycleCounts, type FleetDelta } from './fleet-delta.js';
import { FleetLayout } from './fleet-layout.js';
import { HeapScheduler } from './heap-scheduler.js';
import { LoopMonitor } from './loop-monitor.js';
import { MetricRecorder } from './metric-recorder.js';
import type { FleetDeviceInfo, ShardResult, ShardTask, WorkerToMain } from './worker-protocol.js';

/** What the shard needs from a device (VirtualDevice implements it). */
export interface FleetDevice {
  start(): void;
  stop(): void;
  rebootNow(): void;
  /** Running counters; read field by field each second (stats() would build a snapshot per device). */
  readonly tally: { undeliveredInfo: number; undeliveredLogs: number; undeliveredFlowlog: number };
  /** Reliable messages waiting to be sent, by kind. */
  backlog(): { info: number; logs: number; flowlog: number };
}

export type DeviceFactory = (opts: DeviceOptions) => FleetDevice;

/** Builds the worker's transport; tests inject a fake. */
export type TransportFactory = (
  task: ShardTask,
) => Transport & { close?(): Promise<void>; destroy?(): Promise<void>; stats?(): { running: number; queued?: number } };

export interface ShardRunnerDeps {
  createDevice: DeviceFactory;
  createTransport?: TransportFactory;
  /** Posts to the main thread (the task's MessagePort). */
  post: (msg: WorkerToMain) => void;
  clock?: Clock;
}

/** Most devices started by one arrival wake-up. */
const ARRIVAL_BATCH = 16;

/** Real time with sub-millisecond resolution, epoch-based so all threads agree. */
export const realClock: Clock = { now: () => performance.timeOrigin + performance.now() };

export class ShardRunner {
  private readonly layout: FleetLayout;
  private readonly clock: Clock;
  private readonly recorder = new MetricRecorder({ maxFindingSamples: 50 });
  private readonly scheduler: HeapScheduler;
  private identities: DeviceIdentity[] = [];
  private readonly devices: (FleetDevice | undefined)[];
  /** 1 once a local device has first reached 'onboarded' (the run's onboarded count). */
  private readonly everOnboarded: Uint8Array;
  private onboardedEver = 0;
  private started = 0;
  private stopped = false;
  private stopRun: (() => void) | undefined;
  private seq = 0;
  private lastDeltaAt = 0;
  private loop: LoopMonitor | undefined;
  private heapUsedPeak = 0;
  private record: RecordWriter | undefined;

  constructor(
    private readonly task: ShardTask,
    private readonly deps: ShardRunnerDeps,
  ) {
    this.layout = FleetLayout.of(task.scenario);
    this.clock = deps.clock ?? realClock;
    this.scheduler = new HeapScheduler(this.clock, {
      onError: (err) => this.recorder.onDeviceError(-1, 'scheduler', err),
    });
    this.devices = new Array(task.shard.count);
    this.everOnboarded = new Uint8Array(task.shard.count);
    this.recorder.lifecycle.idle = task.shard.count;
  }

  get size(): number {
    return this.task.shard.count;
  }

  /** Fleet index of local device `local`. */
  indexOf(local: number): number {
    return shardIndex(this.task.shard, local);
  }

  /**
   * Loads (or creates, the first time a seed is used) the shard's identities, yielding to the
   * event loop between batches. Returns what the controller's fleet map needs.
   */
  async prepare(onProgress?: (done: number, total: number) => void): Promise<{ devices: FleetDeviceInfo[]; created: number; loaded: number }> {
    const { scenario, stateDir } = this.task;
    const store = FleetIdentityStore.open({ stateDir, seed: scenario.seed });
    const onboardOverride = this.task.target.onboard ? sharedOnboarding(this.task.target.onboard) : undefined;
    const out: FleetDeviceInfo[] = [];
    const n = this.size;
    for (let local = 0; local < n; local++) {
      const index = this.indexOf(local);
      let id: DeviceIdentity = store.device(index);
      if (onboardOverride) id = { ...id, ...onboardOverride };
      this.identities.push(id);
      const group = this.layout.groups[this.layout.groupOf(index)]!;
      const info: FleetDeviceInfo = { index, serial: id.serial, group: group.name };
      if (group.preRegistered) info.deviceCertPem = id.deviceCertPem;
      out.push(info);
      if ((local + 1) % 64 === 0) {
        onProgress?.(local + 1, n);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    onProgress?.(n, n);
    store.release();
    // Opened before the run so a directory that already holds a recording stops the start.
    if (this.task.recordDir) this.record = await RecordWriter.open(join(this.task.recordDir, `worker-${this.task.workerId}`));
    return { devices: out, ...store.stats };
  }

  /** An error that escaped device code (e.g. an unhandled rejection): counted, never fatal. */
  onStrayError(err: unknown): void {
    this.recorder.onDeviceError(-1, 'unhandled', err);
  }

  /** Asks a running shard to end now (the result still comes back). */
  stop(): void {
    this.stopped = true;
    this.stopRun?.();
  }

  /**
   * Runs from `startAtMs` (epoch ms, common to all workers) for the scenario's duration, then
   * stops every device and returns the final figures.
   */
  async run(startAtMs: Millis): Promise<ShardResult> {
    const { task, deps } = this;
    const createTransport = deps.createTransport ?? defaultTransport;
    const inner = createTransport(task);
    const transport = new TimedTransport(inner, this.clock, [this.recorder]);
    const record = this.record;
    if (record) transport.addObserver(record);
    const endAt = startAtMs + task.scenario.durationMs;
    this.loop = new LoopMonitor();
    this.lastDeltaAt = this.clock.now();
    const sender = new DeltaSender(
      { postMessage: (m: unknown) => deps.post(m as WorkerToMain) },
      (final) => this.takeDelta(final),
      task.deltaIntervalMs ?? 1000,
      (err) => this.recorder.onDeviceError(-1, 'delta', err),
    );

    this.scheduleArrivals(startAtMs, transport);
    this.scheduleTimeline(startAtMs);
    this.scheduler.start();
    sender.start();

    await new Promise<void>((resolve) => {
      if (this.stopped) return resolve();
      const timer = setTimeout(resolve, Math.max(0, endAt - this.clock.now()));
      this.stopRun = () => {
        clearTimeout(timer);
        resolve();
      };
    });

    // Stop: devices first (they stop asking), then the scheduler, then the figures.
    for (let local = 0; local < this.devices.length; local++) {
      const d = this.devices[local];
      if (!d) continue;
      try {
        d.stop();
      } catch (err) {
        this.recorder.onDeviceError(this.indexOf(local), 'stop', err);
      }
    }
    this.scheduler.stop();
    this.scheduler.clear();
    sender.stop();
    const pool = inner.stats?.();
    const inFlightAtEnd = pool ? pool.running + (pool.queued ?? 0) : 0;
    // After stop() the devices count what was still pending as undelivered.
    const finalDelta = this.takeDelta(true);
    const undelivered = finalDelta.undelivered;
    // Answers that arrive after this point are not counted (the run is over).
    transport.removeObserver(this.recorder);
    let recordStats: ShardResult['record'];
    if (record) {
      transport.removeObserver(record);
      const s = await record.close();
      recordStats = { dir: record.dir, exchanges: s.exchanges, dropped: s.dropped, ...(s.writeError ? { writeError: s.writeError } : {}) };
    }
    await (inner.destroy?.() ?? inner.close?.());
    const loop = this.loop.summary();
    this.loop.stop();
    return {
      workerId: task.workerId,
      finalDelta,
      undelivered,
      totals: { ...this.recorder.totals },
      findingSamples: finalDelta.findingSamples,
      loop,
      inFlightAtEnd,
      memory: { heapUsedPeak: this.heapUsedPeak, rssAtEnd: process.memoryUsage.rss() },
      ...(recordStats ? { record: recordStats } : {}),
    };
  }

  // ---- arrivals ----

  /**
   * One pending wake-up walks the arrival list (offsets ascend with the index). It starts at most
   * ARRIVAL_BATCH devices per wake-up, so a storm of simultaneous arrivals is spread over several
   * scheduler slices and I/O keeps flowing in between.
   */
  private scheduleArrivals(startAtMs: Millis, transport: Transport): void {
    const n = this.size;
    const indices = new Float64Array(n);
    for (let local = 0; local < n; local++) indices[local] = this.indexOf(local);
    const offsets = arrivalOffsetsMs(this.task.scenario.arrival, this.task.scenario.seed, indices);
    let next = 0;
    const arrive = (dueAt: Millis): void => {
      let batch = 0;
      while (next < n && startAtMs + offsets[next]! <= dueAt && batch < ARRIVAL_BATCH) {
        this.startDevice(next, transport);
        next++;
        batch++;
      }
      // The rest are picked up by the next wake-up, due at the next arrival time (already past in a storm).
      if (next < n && !this.stopped) this.scheduler.at(startAtMs + offsets[next]!, arrive);
    };
    if (n > 0) this.scheduler.at(startAtMs + offsets[0]!, arrive);
  }

  private startDevice(local: number, transport: Transport): void {
    const index = this.indexOf(local);
    const identity = this.identities[local]!;
    const g = this.layout.groupOf(index);
    const opts: DeviceOptions = {
      index,
      identity,
      behaviour: this.layout.behaviours[g]!,
      rootCertPem: this.task.target.rootCaPem,
      clock: this.clock,
      scheduler: this.scheduler,
      transport,
      rng: SeededRng.create(this.task.scenario.seed, index, 'device'),
      onStateChange: (from, to) => this.onStateChange(local, from, to),
      onFinding: this.onFinding,
    };
    try {
      const device = this.deps.createDevice(opts);
      this.devices[local] = device;
      this.started++;
      device.start();
    } catch (err) {
      this.recorder.onDeviceError(index, 'start', err);
    }
  }

  private readonly onFinding = (f: DeviceFinding): void => this.recorder.onFinding(f);

  private onStateChange(local: number, from: DeviceLifecycle, to: DeviceLifecycle): void {
    this.recorder.onStateChange(from, to);
    if (to === 'onboarded' && this.everOnboarded[local] === 0) {
      this.everOnboarded[local] = 1;
      this.onboardedEver++;
    }
  }

  // ---- timeline ----

  /** Device-side actions; the runner applies controller-side ones through the admin API. */
  private scheduleTimeline(startAtMs: Millis): void {
    for (const action of this.task.scenario.timeline) {
      if (action.action !== 'reboot') continue;
      const group = action.group === undefined ? undefined : this.layout.groupNamed(action.group);
      this.scheduler.at(startAtMs + action.atMs, () => {
        for (let local = 0; local < this.devices.length; local++) {
          const d = this.devices[local];
          if (!d) continue;
          if (group !== undefined && this.layout.groupOf(this.indexOf(local)) !== group) continue;
          try {
            d.rebootNow();
          } catch (err) {
            this.recorder.onDeviceError(this.indexOf(local), 'reboot', err);
          }
        }
      });
    }
  }

  // ---- figures ----

  private takeDelta(final: boolean): FleetDelta {
    const now = this.clock.now();
    const r = this.recorder.takeDelta();
    const backlog = { info: 0, logs: 0, flowlog: 0 };
    const und = { info: 0, logs: 0, flowlog: 0 };
    for (let local = 0; local < this.devices.length; local++) {
      const d = this.devices[local];
      if (!d) continue;
      try {
        const t = d.tally;
        und.info += t.undeliveredInfo;
        und.logs += t.undeliveredLogs;
        und.flowlog += t.undeliveredFlowlog;
        const b = d.backlog();
        backlog.info += b.info;
        backlog.logs += b.logs;
        backlog.flowlog += b.flowlog;
      } catch (err) {
        this.recorder.onDeviceError(this.indexOf(local), 'stats', err);
      }
    }
    const heap = process.memoryUsage().heapUsed;
    if (heap > this.heapUsedPeak) this.heapUsedPeak = heap;
    const delta: FleetDelta = {
      workerId: this.task.workerId,
      seq: this.seq++,
      final,
      atMs: now,
      intervalMs: now - this.lastDeltaAt,
      ...r,
      lifecycle: { ...emptyLifecycleCounts(), ...this.recorder.lifecycle },
      onboardedEver: this.onboardedEver,
      started: this.started,
      shardSize: this.size,
      queueBacklog: backlog,
      undelivered: und,
      loop: this.loop ? this.loop.sample() : { p50Ms: 0, p99Ms: 0, maxMs: 0, utilisation: 0 },
      pendingTimers: this.scheduler.pending,
    };
    this.lastDeltaAt = now;
    return delta;
  }
}

function defaultTransport(task: ShardTask): ControllerTransport {
  return new ControllerTransport({
    baseUrl: task.target.url,
    caPem: task.target.rootCaPem,
    insecureSkipVerify: task.target.insecure,
  });
}

/**
 * A real controller's onboarding certificate, shared by all devices (as one EVE installer image
 * carries one): the key object and hashes are made once per worker, not per device.
 */
function sharedOnboarding(files: { certPem: string; keyPem: string }): Partial<DeviceIdentityMaterial> {
  const der = certificateDer(files.certPem, 'onboarding certificate');
  return {
    onboardCertPem: files.certPem,
    onboardKey: createPrivateKey(files.keyPem),
    onboardCertDer: der,
    onboardCertHash: senderCertHash(der),
    onboardCertB64Pem: new Uint8Array(Buffer.from(Buffer.from(files.certPem, 'utf8').toString('base64'), 'latin1')),
  };
}

/** Reads the onboarding files named by an external target (runner side; errors name the file). */
export function readOnboardingFiles(certFile: string, keyFile: string): { certPem: string; keyPem: string } {
  const read = (file: string, what: string): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch (e) {
      throw new Error(`${what} ${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  };
  return { certPem: read(certFile, 'onboarding certificate'), keyPem: read(keyFile, 'onboarding key') };
}
