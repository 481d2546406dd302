// The conversation between the main thread (runner) and one fleet worker, over the MessagePort the
// worker task receives. Plain data only.
//
//   worker → main  { type: 'progress' }  identities prepared so far
//   worker → main  { type: 'ready' }      identities loaded; the devices the controller must know
//   main → worker  { type: 'go' }         the common start time of the run (epoch ms)
//   worker → main  { type: 'delta' }      every second while running (delta-sender.ts)
//   main → worker  { type: 'stop' }       end early (Ctrl-C); the worker still returns its result
//   main → worker  { type: 'end-run-phase' }  end the run phase now, as if the duration were over:
//                                         the graceful stop (drain) still follows
//
// The worker's final figures come back as the task's return value (ShardResult), not on the
// port: messages on two channels have no common order, and the last delta must not be lost.

import type { DeviceFinding } from '../device/device-options.js';
import type { Scenario } from '../scenario/scenario-types.js';
import type { ShardSpec } from './arrival-schedule.js';
import type { DeltaMessage } from './delta-sender.js';
import type { FleetDelta } from './fleet-delta.js';
import type { RunLoopStats } from './loop-monitor.js';

export interface TargetInfo {
  /** Controller base URL, e.g. https://127.0.0.1:8443 */
  url: string;
  /** Controller API v1 (mutual TLS) base URL for v1 groups; absent: `url` (Adam serves both on one port). */
  v1Url?: string;
  /** Controller root CA PEM: devices verify /certs chains against it and TLS trusts it; empty when
   *  none was given (--insecure-skip-verify without --root-ca): neither is then checked. */
  rootCaPem: string;
  /** TLS verification off (explicit, warned about by the runner). */
  insecure: boolean;
  /**
   * A real controller's onboarding certificate and key (PEM), shared by every device as EVE
   * installs share one; absent for the embedded controller (each device has its own from the
   * fleet CA).
   */
  onboard?: { certPem: string; keyPem: string };
}

export interface ShardTask {
  workerId: number;
  scenario: Scenario;
  shard: ShardSpec;
  target: TargetInfo;
  /** Fleet state directory (identities cached by seed); undefined keeps identities in memory. */
  stateDir?: string;
  /** Enters the serials and the identity cache (identity/fleet-id.ts); absent: the seed alone. */
  fleetId?: string;
  /** --record: this worker records into its own subdirectory of it (worker-<id>). */
  recordDir?: string;
  /** Delta period, ms (default 1000). */
  deltaIntervalMs?: number;
  /** --max-in-flight: most controller requests this worker has handed on at once (in-flight-gate.ts). */
  maxInFlight?: number;
  /** Most controller requests one device has handed on at once (in-flight-gate.ts). */
  maxInFlightPerDevice?: number;
  /** --tick: the grid step of device wake-ups, ms (heap-scheduler.ts); absent or 0: exact times. */
  tickMs?: number;
  /** --log-memory: compressed log bytes each device holds in memory; the rest waits in the worker's
   *  spill file (absent: LOG_MEMORY_BUDGET_BYTES). */
  logMemoryBytes?: number;
}

/** A device as the controller's fleet map needs it. */
export interface FleetDeviceInfo {
  index: number;
  serial: string;
  group: string;
  /** Only for pre-registered groups. */
  deviceCertPem?: string;
}

export interface ProgressMessage {
  type: 'progress';
  workerId: number;
  prepared: number;
  total: number;
}

export interface ReadyMessage {
  type: 'ready';
  workerId: number;
  devices: FleetDeviceInfo[];
  identities: { created: number; loaded: number };
  /** TPM endorsement keys and EK certificates of the shard's TPM devices (absent: none has a TPM). */
  tpm?: import('./tpm-provisioning.js').TpmProvisionStats;
}

export interface GoMessage {
  type: 'go';
  startAtMs: number;
}

export interface StopMessage {
  type: 'stop';
}

/** The caller ended the run phase early (RunScenarioOptions.endRunPhase); ShardRunner.endRunPhase(). */
export interface EndRunPhaseMessage {
  type: 'end-run-phase';
}

export type WorkerToMain = ProgressMessage | ReadyMessage | DeltaMessage;
export type MainToWorker = GoMessage | StopMessage | EndRunPhaseMessage;

/** How the end-of-run drain of one worker went. */
export interface ShardDrainResult {
  /** How long it took, ms. */
  ms: number;
  /** The limit it had (scenario gracefulStop), ms. */
  limitMs: number;
  /** Every device delivered its backlog (or could deliver nothing more) before the limit. */
  complete: boolean;
  /** Reliable messages still queued when it ended, by kind (counted undelivered at stop). */
  leftAtStop: Record<string, number>;
}

/** process.memoryUsage() figures, bytes: rss is the whole process, the heap figures this thread's. */
export interface ProcessMemory {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** This thread's young generation (V8 new_space), part of heapTotal. */
  newSpace: number;
}

export interface ShardResult {
  workerId: number;
  /** The last delta (everything after the previous one), with final = true. */
  finalDelta: FleetDelta;
  /** Reliable messages not delivered when the run ended, by kind. */
  undelivered: Record<string, number>;
  totals: { requests: number; errors: number; expected: number; findings: number; deviceErrors: number };
  /** Up to a few findings of this worker, with detail. */
  findingSamples: DeviceFinding[];
  loop: RunLoopStats;
  /** Requests on the wire or queued in the pool when the run ended (neither counted as answered nor failed). */
  inFlightAtEnd: number;
  /** The graceful stop after the planned duration; absent when the run was interrupted. */
  drain?: ShardDrainResult;
  /** Peak heap and resident memory seen by this worker, bytes (for per-device memory budgets). */
  memory: {
    heapUsedPeak: number;
    rssAtEnd: number;
    /** process.memoryUsage() at the settled sample (every device live, before the drain), bytes. */
    atSampleUsage?: ProcessMemory;
    /** Live heap + ArrayBuffers per started device after a forced GC (only under --expose-gc). */
    settledBytesPerDevice?: number;
    /** Load at that sample: requests in flight and reliable messages queued on the devices. */
    atSample?: {
      inFlight: number;
      backlog: { info: number; logs: number; flowlog: number };
      /** Log files waiting for upload on the worker's devices: bytes kept, and of them held in memory (the rest in the spill file). */
      logFiles?: { keptBytes: number; memoryBytes: number };
    };
  };
  /** --record writer figures, when recording. */
  record?: { dir: string; exchanges: number; dropped: number; writeError?: string };
  /** Devices brought back from the state directory of a run that was cut off (absent: none). */
  resumed?: number;
  /** The in-flight caps and what the gate measured (absent from fakes that bypass it). */
  inFlight?: import('../transport/in-flight-gate.js').InFlightStats;
  /** What each of the scenario's faults did in this worker (absent: the scenario has none). */
  faults?: import('../faults/fault-tally.js').FaultTally[];
}
