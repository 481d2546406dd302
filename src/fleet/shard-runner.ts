// Runs one shard of the fleet inside a worker thread: loads the shard's identities, builds each
// device's options from the scenario (identity, group behaviour, seeded rng, the worker's shared
// transport and scheduler), starts devices as the arrival model says, applies device-side timeline
// actions (reboot), reports a delta every second, and when the run ends drains the devices (they
// deliver what they have queued, up to the scenario's gracefulStop) and then stops them.
//
// Per device the shard keeps: the device object, its identity (key objects made once) and one
// small state-change callback. Everything else (transport, undici pool, scheduler, recorder,
// arrival cursor) is per worker.

import { readFileSync } from 'node:fs';
import { createPrivateKey } from 'node:crypto';
import { getHeapSpaceStatistics } from 'node:v8';
import { join } from 'node:path';
import type { DeviceFinding, DeviceLifecycle, DeviceOptions, DeviceTpm } from '../device/device-options.js';
import type { DeviceDiskState } from '../device/lifecycle/device-disk-state.js';
import { deviceTpmRole } from '../scenario/attestation/tpm-plan.js';
import { DeviceHealth } from './device-health.js';
import { DeviceStateStore } from './device-state-store.js';
import { provisionTpms, type TpmProvisionRequest, type TpmProvisionStats } from './tpm-provisioning.js';
import type { Clock, Millis, Transport } from '../device/ports.js';
import { SeededRng } from '../device/core/seeded-rng.js';
import { identitySeed } from '../identity/fleet-id.js';
import { FleetIdentityStore } from '../identity/fleet-identity-store.js';
import { DEFAULT_GRACEFUL_STOP_MS } from '../scenario/scenario-defaults.js';
import { drainStartOffsetMs } from '../device/core/graceful-drain.js';
import { sharedOnboarding, type DeviceIdentity } from '../identity/device-identity.js';
import type { WorkerTransport } from '../transport/worker-transport.js';
import { FleetTransport } from './fleet-transport.js';
import { RecordWriter } from '../transport/record-writer.js';
import { TimedTransport } from '../transport/timed-transport.js';
import { InFlightGate, MAX_IN_FLIGHT_DEFAULT, MAX_IN_FLIGHT_PER_DEVICE_DEFAULT } from '../transport/in-flight-gate.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../transport/controller-transport.js';
import { arrivalOffsetsMs, shardIndex, shardLocal } from './arrival-schedule.js';
import { DeltaSender } from './delta-sender.js';
import { actionTouchesDevice, groupOfAction, isDeviceSide } from './device-timeline.js';
import { emptyLifecycleCounts, type FleetDelta } from './fleet-delta.js';
import { FleetLayout } from './fleet-layout.js';
import { OnboardingClock } from './onboarding-times.js';
import { HeapScheduler, tickPhaseOf } from './heap-scheduler.js';
import { bytesPerDevice, settledMemory, writeHeapSnapshotIfAsked, type SettledMemory } from './memory-probe.js';
import { warmAllCodecs } from '../protocol/proto-root.js';
import { LoopMonitor } from './loop-monitor.js';
import { MetricRecorder } from './metric-recorder.js';
import { LpsFleet, type LpsGaugeSource } from './lps-fleet.js';
import { LogSpillFile } from './log-spill-file.js';
import { ReliableBacklog, type ReliableKind } from '../device/core/reliable-backlog.js';
import { ShardFaults } from '../faults/shard-faults.js';
import type { FleetDeviceInfo, ProcessMemory, ShardDrainResult, ShardResult, ShardTask, WorkerToMain } from './worker-protocol.js';

/** What the shard needs from a device (VirtualDevice implements it). */
export interface FleetDevice {
  /** Powers on; `dueAt` is the scheduled arrival time (a late start counts as latency). */
  start(dueAt?: Millis): void;
  stop(): void;
  /** Power fails now; back after `downtimeMs` (absent: the usual reboot downtime). */
  rebootNow(cause?: 'power-fail', downtimeMs?: number): boolean | void;
  /** Down because its power failed, not by a command (its connections are left without a FIN; optional for fakes). */
  readonly lostPower?: boolean;
  /** The tpm-reset fault; true when the device had a TPM to reset (optional for fakes). */
  tpmReset?(): boolean;
  /** End of the run: stop producing now, deliver what is queued from `deliverFrom` on (simulator action; optional for fakes). */
  drain?(deliverFrom?: Millis): void;
  /** Draining and nothing left it can deliver (absent: judged by backlog()). Devices without drain() are not waited for. */
  readonly drained?: boolean;
  /** Running counters; read field by field each second (stats() would build a snapshot per device). */
  readonly tally: { undeliveredInfo: number; undeliveredLogs: number; undeliveredFlowlog: number; droppedByQuotaLogs?: number };
  /** Reliable messages waiting to be sent, by kind. */
  backlog(): { info: number; logs: number; flowlog: number };
  /** True when its queues and tally move DeviceOptions.backlog as they change (VirtualDevice), so
   *  the worker reads the totals there instead of asking each device every second. */
  readonly reportsBacklog?: boolean;
  /** Timeline power-on of a device an LPS command powered off (optional for fakes). */
  powerOn?(): void;
  /** Radio and GNSS state for the LPS gauges (absent: not counted). */
  readonly lps?: LpsGaugeSource | undefined;
  /** Log files waiting for upload: bytes kept, and bytes of them held in memory (optional for fakes). */
  logKeeping?(): { keptBytes: number; memoryBytes: number };
}

export type DeviceFactory = (opts: DeviceOptions) => FleetDevice;

/** Builds the worker's transport; tests inject a fake. */
export type TransportFactory = (task: ShardTask) => WorkerTransport;

export interface ShardRunnerDeps {
  createDevice: DeviceFactory;
  createTransport?: TransportFactory;
  /** Posts to the main thread (the task's MessagePort). */
  post: (msg: WorkerToMain) => void;
  clock?: Clock;
}

/** Most devices started by one arrival wake-up. */
const ARRIVAL_BATCH = 16;
/** How often the drain checks whether every device has delivered its backlog, ms. */
const DRAIN_POLL_MS = 100;

/** Real time with sub-millisecond resolution, epoch-based so all threads agree. */
export const realClock: Clock = { now: () => performance.timeOrigin + performance.now() };

export class ShardRunner {
  private readonly layout: FleetLayout;
  private readonly clock: Clock;
  private readonly recorder = new MetricRecorder({ maxFindingSamples: 50 });
  /** Devices healthy / failing now, by their last controller answer. */
  private readonly health = new DeviceHealth();
  private readonly scheduler: HeapScheduler;
  private identities: DeviceIdentity[] = [];
  /** TPM material of each local device that has a TPM. */
  private readonly tpms: (DeviceTpm | undefined)[] = [];
  private readonly devices: (FleetDevice | undefined)[];
  /** 1 once a local device has first reached 'onboarded' (the run's onboarded count). */
  private readonly everOnboarded: Uint8Array;
  private onboardedEver = 0;
  /** Scheduled arrival of each local device (epoch ms), and how long each took to onboard. */
  private readonly dueAt: Float64Array;
  private onboardingClock: OnboardingClock | undefined;
  /** onboardedEver by the controller API of the device's group. */
  private readonly onboardedByApi: Partial<Record<'v1' | 'v2', number>> = {};
  private started = 0;
  private stopped = false;
  /** The planned duration is over: no more arrivals, devices deliver what they have queued. */
  private draining = false;
  /** Starts the devices due before the end that a late wake-up has not reached yet (set by scheduleArrivals). */
  private startOverdueArrivals: () => void = () => {};
  private stopRun: (() => void) | undefined;
  /** endRunPhase() was called; only the run phase's wait is cut short by it, not the drain's. */
  private runPhaseEnded = false;
  private inRunPhase = false;
  private seq = 0;
  private lastDeltaAt = 0;
  private loop: LoopMonitor | undefined;
  private heapUsedPeak = 0;
  /** Reliable messages of the devices that report them as they change (all real ones). */
  private readonly reliable = new ReliableBacklog();
  /** Local indices of devices that do not (test fakes): walked when totals are read. */
  private readonly uncounted: number[] = [];
  private memoryBefore: SettledMemory | undefined;
  private memoryAtEnd: SettledMemory | undefined;
  /** Process memory at that sample, bytes (RSS is the whole process: every worker and the main thread). */
  private usageAtSample: NodeJS.MemoryUsage | undefined;
  /** What the fleet was doing when memoryAtEnd was sampled (requests in flight, queued reliable messages). */
  private memorySampleState: NonNullable<ShardResult['memory']['atSample']> | undefined;
  /** Requests of this worker in flight now (controller and LPS). */
  private inFlightNow: () => number = () => 0;
  /** The worker's timed transport to the controller (set by run()). */
  private timed: TimedTransport | undefined;
  /** The worker's in-flight caps (set by run()). */
  private gate: InFlightGate | undefined;
  /** Told when a device goes down, so its own connection goes too (set by run()). */
  private deviceConnections: Pick<WorkerTransport, 'deviceDown' | 'ownConnections'> | undefined;
  private record: RecordWriter | undefined;
  /** LPS transports, agent counters and gauges of this worker. */
  private readonly lpsFleet: LpsFleet;
  /** What the devices keep on disk (absent without a state directory). */
  private diskStates: DeviceStateStore | undefined;
  /** Devices brought back from the state of a run that was cut off. */
  private resumed = 0;
  /** Log files beyond the devices' memory budget (absent without a state directory: held in memory). */
  private readonly logSpill: LogSpillFile | undefined;
  /** The scenario's faults as this worker applies them (src/faults/). */
  private readonly faults: ShardFaults;
  /** What a device's /config/server would hold (host:port), by the API its group speaks: one string for all devices. */
  private readonly servers: Record<'v1' | 'v2', string>;

  constructor(
    private readonly task: ShardTask,
    private readonly deps: ShardRunnerDeps,
  ) {
    this.layout = FleetLayout.of(task.scenario);
    this.clock = deps.clock ?? realClock;
    this.scheduler = new HeapScheduler(this.clock, {
      onError: (err) => this.recorder.onDeviceError(-1, 'scheduler', err),
      ...(task.tickMs ? { tickMs: task.tickMs, tickPhaseMs: tickPhaseOf(task.shard.firstIndex, task.tickMs) } : {}),
    });
    this.devices = new Array(task.shard.count);
    this.lpsFleet = new LpsFleet(task.scenario, this.layout, this.clock, [this.recorder]);
    this.everOnboarded = new Uint8Array(task.shard.count);
    this.dueAt = new Float64Array(task.shard.count);
    this.recorder.lifecycle.idle = task.shard.count;
    this.logSpill = task.stateDir !== undefined ? new LogSpillFile(task.stateDir, task.workerId) : undefined;
    this.faults = new ShardFaults(task.scenario, this.clock, task.workerId);
    this.servers = { v2: serverOf(task.target.url), v1: serverOf(task.target.v1Url ?? task.target.url) };
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
  async prepare(
    onProgress?: (done: number, total: number) => void,
  ): Promise<{ devices: FleetDeviceInfo[]; created: number; loaded: number; tpm?: TpmProvisionStats }> {
    const { scenario, stateDir } = this.task;
    // Fixed per-worker costs (codecs) are paid before the baseline, so the figure is per device.
    warmAllCodecs();
    this.memoryBefore = settledMemory();
    const n = this.size;
    const shard = { first: this.task.shard.firstIndex, stride: this.task.shard.stride, count: n };
    const store = FleetIdentityStore.open({ stateDir, seed: scenario.seed, expect: shard, ...(this.task.fleetId !== undefined ? { fleetId: this.task.fleetId } : {}) });
    // A real controller's onboarding certificate is shared by all devices (as one EVE installer
    // image carries one): its key object and hashes are made once per worker, not per device.
    const onboard = this.task.target.onboard;
    const sharedOnboard = onboard ? sharedOnboarding(onboard.certPem, createPrivateKey(onboard.keyPem)) : undefined;
    const out: FleetDeviceInfo[] = [];
    // Loaded, or made and written in batch files, before any device runs.
    const ids = await store.shardAsync(shard, onProgress);
    for (let local = 0; local < n; local++) {
      const index = this.indexOf(local);
      const id = ids[local]!;
      if (sharedOnboard) id.useSharedOnboarding(sharedOnboard);
      this.identities.push(id);
      const group = this.layout.groups[this.layout.groupOf(index)]!;
      const info: FleetDeviceInfo = { index, serial: id.serial, group: group.name };
      if (group.preRegistered) info.deviceCertPem = id.deviceCertPem;
      out.push(info);
    }
    store.release();
    if (stateDir !== undefined) {
      this.diskStates = DeviceStateStore.open({ stateDir, seed: scenario.seed, ...(this.task.fleetId !== undefined ? { fleetId: this.task.fleetId } : {}), rootCaPem: this.task.target.rootCaPem });
    }
    const tpm = await this.prepareTpms();
    // Opened before the run so a directory that already holds a recording stops the start.
    if (this.task.recordDir) this.record = await RecordWriter.open(join(this.task.recordDir, `worker-${this.task.workerId}`));
    return { devices: out, ...store.stats, ...(tpm ? { tpm } : {}) };
  }

  /**
   * EKs and EK certificates of the shard's devices with a TPM (tpm-plan.ts says which, and which
   * boot tampered), loaded from the state directory or made on the thread pool (tpm-provisioning.ts).
   */
  private async prepareTpms(): Promise<TpmProvisionStats | undefined> {
    const requests: TpmProvisionRequest[] = [];
    const locals: { local: number; tampered: boolean }[] = [];
    for (let local = 0; local < this.size; local++) {
      const index = this.indexOf(local);
      const role = deviceTpmRole(this.layout.groups[this.layout.groupOf(index)]!, this.layout.positionInGroup(index));
      if (role === 'none') continue;
      const id = this.identities[local]!;
      requests.push({ index, deviceCertPem: id.deviceCertPem, deviceKey: id.deviceKey });
      locals.push({ local, tampered: role === 'tampered' });
    }
    if (requests.length === 0) return undefined;
    const { tpms, stats } = await provisionTpms({ stateDir: this.task.stateDir, seed: identitySeed(this.task.scenario.seed, this.task.fleetId), devices: requests });
    locals.forEach(({ local, tampered }, i) => (this.tpms[local] = { tampered, ...tpms[i]! }));
    return stats;
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
   * Ends the run phase now, as if the scenario's duration were over: unlike stop(), the graceful
   * stop still follows (tests end a run once what they wait for has happened).
   */
  endRunPhase(): void {
    this.runPhaseEnded = true;
    if (this.inRunPhase) this.stopRun?.();
  }

  /**
   * Runs from `startAtMs` (epoch ms, common to all workers) for the scenario's duration, then
   * stops every device and returns the final figures.
   */
  async run(startAtMs: Millis): Promise<ShardResult> {
    const { task, deps } = this;
    // Default: per group, a shared v2 pool or per-device (mutual TLS for v1) connections.
    const createTransport = deps.createTransport ?? ((t: ShardTask) => new FleetTransport(t, this.layout, this.identities));
    const created = createTransport(task);
    this.deviceConnections = created;
    const inner = this.faults.wrapTransport(created, startAtMs, task.scenario.seed);
    this.inFlightNow = () => {
      const pool = inner.stats?.();
      return (pool ? pool.running + (pool.queued ?? 0) : 0) + (this.gate?.waiting ?? 0) + this.lpsFleet.inFlight();
    };
    // Inside the timed transport: a request waiting for a slot counts its wait as latency.
    const gate = new InFlightGate(inner, this.clock, {
      maxInFlight: task.maxInFlight ?? MAX_IN_FLIGHT_DEFAULT,
      maxPerDevice: task.maxInFlightPerDevice ?? MAX_IN_FLIGHT_PER_DEVICE_DEFAULT,
      timeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
    });
    this.gate = gate;
    const transport = new TimedTransport(gate, this.clock, [this.recorder, this.health]);
    this.timed = transport;
    const record = this.record;
    if (record) {
      transport.addObserver(record);
      this.lpsFleet.addObserver(record);
    }
    const endAt = startAtMs + task.scenario.durationMs;
    this.loop = new LoopMonitor();
    this.lastDeltaAt = this.clock.now();
    const sender = new DeltaSender(
      { postMessage: (m: unknown) => deps.post(m as WorkerToMain) },
      (final) => this.takeDelta(final),
      task.deltaIntervalMs ?? 1000,
      (err) => this.recorder.onDeviceError(-1, 'delta', err),
    );

    this.onboardingClock = new OnboardingClock(startAtMs);
    this.scheduleArrivals(startAtMs, transport);
    this.scheduleTimeline(startAtMs);
    this.faults.schedule(
      this.scheduler,
      startAtMs,
      { count: this.devices.length, indexOf: (local) => this.indexOf(local), device: (local) => this.devices[local] },
      (index, what, err) => this.recorder.onDeviceError(index, what, err),
    );
    this.scheduler.start();
    sender.start();

    this.inRunPhase = true;
    if (!this.runPhaseEnded) await this.sleepUntil(endAt);
    // A stall can let the end's timer fire before the wake-up of a device that was due before it.
    if (!this.stopped) this.startOverdueArrivals();
    this.inRunPhase = false;
    this.lpsFleet.freezeGauges(this.devices, this.clock.now());
    // The run's last interval ends here, so no delta mixes the run with the drain: a delta counts
    // in the series' second that holds its middle, and its loop figures (lag, longest stall) are
    // one sample; without the cut the drain's first turns showed in the run's last second.
    if (!this.stopped) sender.send(false);
    // Graceful stop (skipped when interrupted): devices deliver their queues, up to the limit.
    const drain = this.stopped ? undefined : await this.drainDevices(task.scenario.gracefulStopMs ?? DEFAULT_GRACEFUL_STOP_MS);
    // The loop's figures end with the drain: what follows is the worker's own shutdown (every device
    // stopped, every waiting request failed at once), when no device is due. After a run that
    // overloaded its machine that took 23-28 s with 200,000 requests waiting in a worker (most of
    // it the devices making log files only to count them, which they no longer do at stop), and it
    // showed as the run's longest stall.
    const loop = this.loop.summary();
    this.loop.stop();

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
    const inFlightAtEnd = this.inFlightNow();
    // Requests still waiting for an answer are recorded now, once, as unfinished (latency up to
    // now), so a controller that never answers shows in the figures instead of vanishing.
    transport.settleUnfinished();
    this.lpsFleet.settleUnfinished();
    // After stop() the devices count what was still pending as undelivered.
    const finalDelta = this.takeDelta(true);
    const undelivered = finalDelta.undelivered;
    // Answers that arrive after this point are not counted (the run is over).
    transport.removeObserver(this.recorder);
    this.lpsFleet.removeObserver(this.recorder);
    let recordStats: ShardResult['record'];
    if (record) {
      transport.removeObserver(record);
      this.lpsFleet.removeObserver(record);
      const s = await record.close();
      recordStats = { dir: record.dir, exchanges: s.exchanges, dropped: s.dropped, ...(s.writeError ? { writeError: s.writeError } : {}) };
    }
    gate.close();
    await (inner.destroy?.() ?? inner.close?.());
    await this.lpsFleet.destroy();
    await this.closeDiskStates();
    this.logSpill?.close();
    const faults = this.faults.tallies(Array.from({ length: this.size }, (_, local) => this.indexOf(local)));
    return {
      workerId: task.workerId,
      finalDelta,
      undelivered,
      totals: { ...this.recorder.totals },
      findingSamples: finalDelta.findingSamples,
      loop,
      inFlightAtEnd,
      ...(drain ? { drain } : {}),
      memory: {
        heapUsedPeak: this.heapUsedPeak,
        rssAtEnd: process.memoryUsage.rss(),
        ...(this.usageAtSample ? { atSampleUsage: pickUsage(this.usageAtSample) } : {}),
        ...(this.memoryBefore && this.memoryAtEnd
          ? { settledBytesPerDevice: bytesPerDevice(this.memoryBefore, this.memoryAtEnd, this.started) }
          : {}),
        ...(this.memorySampleState ? { atSample: this.memorySampleState } : {}),
      },
      ...(recordStats ? { record: recordStats } : {}),
      ...(this.resumed > 0 ? { resumed: this.resumed } : {}),
      ...(faults ? { faults } : {}),
      inFlight: gate.stats(),
    };
  }

  /** The run ended (not cut off): the devices' saved states are forgotten, so the next run starts a new session. */
  private async closeDiskStates(): Promise<void> {
    const disk = this.diskStates;
    if (!disk) return;
    this.diskStates = undefined;
    try {
      const indices: number[] = [];
      for (let local = 0; local < this.size; local++) indices.push(this.indexOf(local));
      await disk.forget(indices);
    } finally {
      await disk.close();
    }
  }

  /** Devices brought back from a cut-off run's state so far. */
  get resumedDevices(): number {
    return this.resumed;
  }

  /** Waits until `at` on the clock, or until stop() or endRunPhase(). */
  private sleepUntil(at: Millis): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.stopped) return resolve();
      // Node times a timer from the loop's cached time, which lags the clock after a long turn, so
      // the timer can fire before `at`: it is armed again for what is left.
      const wake = () => {
        const left = at - this.clock.now();
        if (left <= 0) resolve();
        else timer = setTimeout(wake, left);
      };
      let timer = setTimeout(wake, Math.max(0, at - this.clock.now()));
      this.stopRun = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  // ---- graceful stop ----

  /**
   * Tells every started device to drain, then waits until all have delivered their queues (or can
   * deliver nothing more) and every request already sent has its answer, the limit passes, or
   * stop() is called. Requests made meanwhile are recorded as usual; what is still queued
   * afterwards is counted undelivered at stop, and requests still unanswered are unfinished.
   */
  private async drainDevices(limitMs: number): Promise<ShardDrainResult> {
    const startedAt = this.clock.now();
    // Every device that will run is live now: the settled sample for the per-device memory figure.
    this.memoryAtEnd = settledMemory();
    this.usageAtSample = process.memoryUsage();
    this.memorySampleState = { inFlight: this.inFlightNow(), backlog: this.reliableTotals().waiting, logFiles: this.logFileBytes() };
    writeHeapSnapshotIfAsked(this.task.workerId);
    this.draining = true;
    this.recorder.startDrain(startedAt);
    const seed = this.task.scenario.seed;
    for (let local = 0; local < this.devices.length; local++) {
      const d = this.devices[local];
      if (!d?.drain) continue;
      try {
        // Each device starts delivering at its own seeded instant early in the window (a ramp, not a burst).
        d.drain(startedAt + drainStartOffsetMs(seed, this.indexOf(local), limitMs));
      } catch (err) {
        this.recorder.onDeviceError(this.indexOf(local), 'drain', err);
      }
    }
    const deadline = startedAt + Math.max(0, limitMs);
    // Draining devices send nothing new but queue deliveries, so the answers still awaited come
    // in soon from a controller that answers; one that does not leaves them unfinished at the limit.
    const settled = () => this.allDrained() && this.awaitingAnswer() === 0;
    let complete = settled();
    while (!complete && !this.stopped && this.clock.now() < deadline) {
      await this.sleepUntil(Math.min(deadline, this.clock.now() + DRAIN_POLL_MS));
      complete = settled();
    }
    const left = this.reliableTotals().waiting;
    return { ms: Math.max(0, this.clock.now() - startedAt), limitMs, complete, leftAtStop: left };
  }

  /** Requests of this worker sent and not yet answered (controller and LPS). */
  private awaitingAnswer(): number {
    return (this.timed?.inFlight ?? 0) + this.lpsFleet.awaitingAnswer();
  }

  private allDrained(): boolean {
    for (let local = 0; local < this.devices.length; local++) {
      const d = this.devices[local];
      if (!d?.drain) continue; // cannot drain: nothing to wait for
      try {
        if (d.drained !== undefined) {
          if (!d.drained) return false;
        } else {
          const b = d.backlog();
          if (b.info + b.logs + b.flowlog > 0) return false;
        }
      } catch (err) {
        this.recorder.onDeviceError(this.indexOf(local), 'drain', err);
      }
    }
    return true;
  }

  /** Log files waiting on the devices (once, at the memory sample): kept, and of them held in memory. */
  private logFileBytes(): { keptBytes: number; memoryBytes: number } {
    const t = { keptBytes: 0, memoryBytes: 0 };
    for (let local = 0; local < this.devices.length; local++) {
      const k = this.devices[local]?.logKeeping?.();
      if (!k) continue;
      t.keptBytes += k.keptBytes;
      t.memoryBytes += k.memoryBytes;
    }
    return t;
  }

  /**
   * Reliable messages waiting now and given up on so far, and log files EVE's quota deleted: the
   * worker's running totals, plus what the devices that do not report them (test fakes) say.
   */
  private reliableTotals(): { waiting: Record<ReliableKind, number>; undelivered: Record<ReliableKind, number>; droppedByQuota: number } {
    const waiting = { ...this.reliable.waiting };
    const undelivered = { ...this.reliable.undelivered };
    let droppedByQuota = this.reliable.droppedByQuotaLogs;
    for (const local of this.uncounted) {
      const d = this.devices[local];
      if (!d) continue;
      try {
        const t = d.tally;
        undelivered.info += t.undeliveredInfo;
        undelivered.logs += t.undeliveredLogs;
        undelivered.flowlog += t.undeliveredFlowlog;
        droppedByQuota += t.droppedByQuotaLogs ?? 0;
        const b = d.backlog();
        waiting.info += b.info;
        waiting.logs += b.logs;
        waiting.flowlog += b.flowlog;
      } catch (err) {
        this.recorder.onDeviceError(this.indexOf(local), 'stats', err);
      }
    }
    return { waiting, undelivered, droppedByQuota };
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
    // Devices due at or after the end never start, also when a late wake-up (a busy or stalled
    // process) gets to them before the end's own timer has fired.
    const due = (local: number): boolean => offsets[local]! < this.task.scenario.durationMs;
    let next = 0;
    /** Starts, in order, up to `limit` devices due before the end and due by `dueAt`. */
    const startDueBy = (dueAt: Millis, limit: number): void => {
      for (let started = 0; next < n && due(next) && startAtMs + offsets[next]! <= dueAt && started < limit; started++) {
        // Due at its own arrival time: a device started by a later (or late) wake-up counts that as latency.
        this.startDevice(next, transport, startAtMs + offsets[next]!);
        next++;
      }
    };
    const arrive = (dueAt: Millis): void => {
      if (this.draining) return; // the run is over: devices not yet arrived never start
      startDueBy(dueAt, ARRIVAL_BATCH);
      // The rest are picked up by the next wake-up, due at the next arrival time (already past in a storm).
      if (next < n && due(next) && !this.stopped) this.scheduler.at(startAtMs + offsets[next]!, arrive);
    };
    if (n > 0 && due(0)) this.scheduler.at(startAtMs + offsets[0]!, arrive);
    // At the run phase's end: every device due before the end and already due by now starts, late
    // (an early end, endRunPhase, leaves the ones not yet due unstarted).
    this.startOverdueArrivals = () => startDueBy(this.clock.now(), Infinity);
  }

  private startDevice(local: number, transport: Transport, dueAt: Millis): void {
    const index = this.indexOf(local);
    const identity = this.identities[local]!;
    const g = this.layout.groupOf(index);
    const disk = this.diskStates;
    const resume = disk?.get(index);
    const opts: DeviceOptions = this.faults.deviceOptions({
      index,
      identity,
      behaviour: this.layout.behaviours[g]!,
      rootCertPem: this.task.target.rootCaPem,
      server: this.servers[this.layout.groups[g]!.api],
      clock: this.clock,
      scheduler: this.scheduler,
      transport,
      rng: SeededRng.create(this.task.scenario.seed, index, 'device'),
      onStateChange: this.deviceStateChanged,
      onFinding: this.onFinding,
      ...(this.tpms[local] ? { tpm: this.tpms[local] } : {}),
      lps: this.lpsFleet.portsFor(index),
      ...(resume ? { resume } : {}),
      ...(disk ? { onDiskStateChange: this.deviceDiskStateChanged } : {}),
      ...(this.logSpill ? { logSpill: this.logSpill } : {}),
      ...(this.task.logMemoryBytes !== undefined ? { logMemoryBytes: this.task.logMemoryBytes } : {}),
      backlog: this.reliable,
    });
    if (resume) this.resumed++;
    try {
      const device = this.deps.createDevice(opts);
      this.devices[local] = device;
      if (device.reportsBacklog !== true) this.uncounted.push(local);
      this.started++;
      this.dueAt[local] = dueAt;
      device.start(dueAt);
    } catch (err) {
      this.recorder.onDeviceError(index, 'start', err);
    }
  }

  /** The recorder keeps the first findings of each kind as examples, named by serial too. */
  private readonly onFinding = (f: DeviceFinding): void => {
    const serial = this.identities[shardLocal(this.task.shard, f.deviceIndex)]?.serial;
    this.recorder.onFinding(serial !== undefined && f.serial === undefined ? { ...f, serial } : f);
  };

  // One function for every device of the shard (the device passes its index), not a closure each.
  private readonly deviceStateChanged = (from: DeviceLifecycle, to: DeviceLifecycle, index: number): void =>
    this.onStateChange(shardLocal(this.task.shard, index), from, to);
  private readonly deviceDiskStateChanged = (state: DeviceDiskState, index: number): void => this.diskStates?.put(index, state);

  private onStateChange(local: number, from: DeviceLifecycle, to: DeviceLifecycle): void {
    this.recorder.onStateChange(from, to);
    if (to === 'idle' || to === 'stopped') this.health.forget(this.indexOf(local));
    // Down (reboot, power loss, poweroff): its own connection does not outlive it. A device stops
    // for good only at the end of the run, where the transport closes every connection anyway.
    if (to === 'idle') this.deviceConnections?.deviceDown?.(this.indexOf(local), this.devices[local]?.lostPower === true ? 'power-loss' : 'shutdown');
    if (to === 'onboarded' && this.everOnboarded[local] === 0) {
      this.everOnboarded[local] = 1;
      this.onboardedEver++;
      this.onboardingClock?.record(this.dueAt[local]!, this.clock.now());
      const api = this.layout.groups[this.layout.groupOf(this.indexOf(local))]!.api;
      this.onboardedByApi[api] = (this.onboardedByApi[api] ?? 0) + 1;
    }
  }

  // ---- timeline ----

  /** Device-side actions; the runner applies controller-side ones through the admin API. */
  private scheduleTimeline(startAtMs: Millis): void {
    for (const action of this.task.scenario.timeline) {
      if (!isDeviceSide(action)) continue;
      const powerOn = action.action === 'power-on';
      const group = groupOfAction(action, this.layout);
      this.scheduler.at(startAtMs + action.atMs, () => {
        for (let local = 0; local < this.devices.length; local++) {
          const d = this.devices[local];
          if (!d) continue;
          if (!actionTouchesDevice(action, this.layout, this.indexOf(local), group)) continue;
          try {
            if (powerOn) d.powerOn?.();
            else d.rebootNow();
          } catch (err) {
            this.recorder.onDeviceError(this.indexOf(local), action.action, err);
          }
        }
      });
    }
  }

  // ---- figures ----

  private takeDelta(final: boolean): FleetDelta {
    const now = this.clock.now();
    const r = this.recorder.takeDelta();
    const { waiting: backlog, undelivered: und, droppedByQuota } = this.reliableTotals();
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
      health: this.health.counts(),
      onboardedEverByApi: { ...this.onboardedByApi },
      started: this.started,
      shardSize: this.size,
      queueBacklog: backlog,
      undelivered: und,
      ...(droppedByQuota > 0 ? { droppedByQuota: { logs: droppedByQuota } } : {}),
      loop: this.loop ? this.loop.sample() : { p50Ms: 0, p99Ms: 0, maxMs: 0, utilisation: 0 },
      pendingTimers: this.scheduler.pending,
    };
    const lps = this.lpsFleet.figures(this.devices, now);
    if (lps !== undefined) delta.lps = lps;
    const onboarding = this.onboardingClock?.take();
    if (onboarding) delta.onboarding = onboarding;
    // Absolute figures: the final delta (taken before the transport closes) carries the run's.
    const connections = this.deviceConnections?.ownConnections?.();
    if (connections) delta.ownConnections = connections;
    this.lastDeltaAt = now;
    return delta;
  }
}

/** The figures of process.memoryUsage() a ShardResult carries (plain data for the port). */
function pickUsage(u: NodeJS.MemoryUsage): ProcessMemory {
  // The young generation grows with the allocation rate up to a fixed maximum: a per-worker cost
  // that a comparison of two fleet sizes must not count per device.
  const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
  return { rss: u.rss, heapTotal: u.heapTotal, heapUsed: u.heapUsed, external: u.external, arrayBuffers: u.arrayBuffers, newSpace };
}

/** The host:port of a controller URL as given ("https://ctrl:8443/" → "ctrl:8443"), as EVE's /config/server holds it. */
export function serverOf(url: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\/([^/?#]+)/i.exec(url)?.[1] ?? new URL(url).host;
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
