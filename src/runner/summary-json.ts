// The end-of-run summary: what `--summary-json FILE` writes, what thresholds are judged against and
// what the report table and JUnit XML are rendered from. Plain JSON data; field names are a
// contract with CI users, so add fields rather than rename them.

import { writeFileSync } from 'node:fs';
import type { DeviceLifecycle } from '../device/device-options.js';
import type { ProcessAllocator } from '../memory/process-allocator.js';
import type { EndpointStats } from './endpoint-stats.js';
import { emptyEndpointStats } from './endpoint-stats.js';

export { emptyEndpointStats, type EndpointStats };

export interface ExpectedRejection {
  endpoint: string;
  /** HTTP status as a decimal string. */
  status: string;
  reason: string;
  count: number;
}

export interface DrainSummary {
  /** The limit (scenario gracefulStop / --graceful-stop), ms; 0 means no drain. */
  gracefulStopMs: number;
  /** How long the drain took, ms (the slowest worker). */
  durationMs: number;
  /** Every worker emptied its devices' queues before the limit. */
  complete: boolean;
  /** Reliable messages still queued when the drain ended, by kind (counted in `undelivered`). */
  leftAtStop: Record<string, number>;
  /** The drain's requests (due after the run phase ended), per endpoint, apart from the run's
   *  `endpoints` / `overall`; rates are over the drain's duration. Absent when it made none. */
  endpoints?: Record<string, EndpointStats>;
  overall?: EndpointStats;
}

/** 'not-checked': the target cannot provide the figure (a real controller has no attestation or LPS
 *  figures); it does not fail the run unless the threshold is required. */
export type ThresholdStatus = 'passed' | 'failed' | 'not-checked';

export interface ThresholdResult {
  /** The expression as written in the scenario. */
  source: string;
  status: ThresholdStatus;
  /** status === 'passed' (a not-checked threshold has not passed, though it does not fail the run). */
  passed: boolean;
  /** The measured value in the threshold's own unit (ms, count, fraction, per second); null when it
   *  could not be measured (which fails the threshold) or was not checked. */
  actual: number | null;
  /** What `actual` was compared with, in the same unit: the value as written, or for a per-device
   *  threshold that value × `perDevice.devices`; null when it could not be known. */
  bound: number | null;
  /** Per-device thresholds (`>= 1 per device`): the devices counted and the effective comparison
   *  as the report shows it, e.g. "≥ 20 for 20 devices". */
  perDevice?: { devices: number; effective: string };
  /** Written `{ threshold: …, required: true }`: fails rather than being not checked. */
  required?: true;
  /** Human form of `actual`, or why it could not be checked. */
  detail: string;
  /** Written with `abortOnFail: true` and failed while the run went: it ended the run phase early,
   *  at tMs (ms since the start); `actual` is what it measured then. */
  abortedRun?: { tMs: number };
}

export interface GeneratorHealth {
  /** Event-loop lag p99 of each worker thread over the run, ms. */
  workers: {
    worker: number;
    eventLoopLagP99Ms: number;
    /** The worker's longest single event-loop stall over the run (the loop delay's maximum), ms:
     *  one long GC pause hardly moves a p99 but every device timer due in it fires that late.
     *  Absent from older summaries. */
    eventLoopLagMaxMs?: number;
    /** Share of the run the worker thread was busy (mean event-loop utilisation, 0..1). */
    busy?: number;
    heapPeakMiB?: number;
    settledKiBPerDevice?: number;
    /** Memory at the memory sample (after a forced GC under --expose-gc), MiB: rss of the whole
     *  generator process, the heap figures of this worker (bench/fleet-memory.ts compares two fleet
     *  sizes to get RSS per device). */
    atSampleMiB?: { rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number; newSpace: number };
    /** At the memory sample: requests in flight and reliable messages queued on the devices; the
     *  log files waiting for upload, KiB kept and KiB of them held in memory (--log-memory; the
     *  rest in the worker's spill file under the state directory). */
    atMemorySample?: { inFlight: number; queuedReliable: number; logFilesKeptKiB?: number; logFilesInMemoryKiB?: number };
    /** The worker's in-flight caps (--max-in-flight) and what it measured: peaks, and the requests
     *  that waited for a slot (their wait is in their latency). Absent from older summaries. */
    inFlight?: import('../transport/in-flight-gate.js').InFlightStats;
  }[];
  /** Event-loop lag p99 of the main thread, ms. */
  mainEventLoopLagP99Ms: number;
  /** Process CPU time ÷ (wall time × cores) × 100: 100 means every core was busy all run. */
  cpuPercent: number;
  /** The whole machine's CPUs over the same time, every process counted (os.cpus()), percent of
   *  all of them: what cpuPercent leaves out is what else ran here (a controller on the same
   *  machine, other tenants). Absent from older summaries and where the kernel lists no CPUs. */
  machineCpuPercent?: number;
  /** Peak RSS of the generator process (all threads), sampled each second over the run and the
   *  drain (rss-peak.ts), bytes; absent from older summaries. */
  rssPeakBytes?: number;
  /** --tick: device wake-ups were due on a grid of this step, ms (absent: exact times). */
  tickMs?: number;
}

export interface RunSummary {
  /** Scenario name and the file it came from. */
  scenario: string;
  scenarioFile: string;
  seed: number;
  /** 'embedded' or the controller URL. */
  target: string;
  /** ISO 8601 time the run started. */
  startedAt: string;
  /** Measured run time, ms. */
  durationMs: number;
  /**
   * allocator: the malloc the generator ran on; v8PoolSize: the threads of V8's platform pool
   * (v8-pool-size.ts; 0: Node chose from the core count); heapGrowingPercent: how far the workers'
   * old generations grew past their live heap between mark-compacts (fleet/worker-heap-flags.ts;
   * 0: V8 chose). Absent in summaries written before they were recorded.
   */
  machine: { cpus: number; cpuModel: string; node: string; allocator?: ProcessAllocator; v8PoolSize?: number; heapGrowingPercent?: number };
  devices: {
    total: number;
    /** Devices that reached 'onboarded' at least once during the run. */
    onboarded: number;
    /** Devices in each lifecycle state at the end. */
    byLifecycle: Partial<Record<DeviceLifecycle, number>>;
  };
  /** How long devices took from their scheduled arrival to 'onboarded', and when the median and
   *  the last one got there (onboarding-times.ts); absent when none onboarded and in older summaries. */
  onboarding?: import('../fleet/onboarding-times.js').OnboardingSummary;
  /** Keyed by EndpointKey; an endpoint with no requests may be absent (it counts as 0 requests). */
  endpoints: Record<string, EndpointStats>;
  /** All requests together; percentiles come from the merged histogram, not from averaging endpoints. */
  overall: EndpointStats;
  /** Reliable messages (EVE's retried queues) still not delivered when the run ended. */
  undelivered: { info: number; logs: number; flowlog: number; total: number };
  /** Log files the devices' own on-disk quota deleted, as EVE does (logs.quotaMB); not in `undelivered`. Absent from older summaries. */
  droppedByQuota?: { logs: number };
  /** Problems devices found in the controller's answers (bad signature, undecodable body, ...). */
  findings: {
    total: number;
    byKind: Record<string, number>;
    /** The first few findings of each kind with device, endpoint, request id, status and detail
     *  (finding-examples.ts); absent from summaries of older versions. */
    examples?: Record<string, import('./finding-examples.js').FindingExample[]>;
  };
  /** /register answered 409 for most devices, with the likely cause (register-conflicts.ts). */
  registerConflicts?: import('./register-conflicts.js').RegisterConflicts;
  /** Expected rejections by endpoint, status and reason (e.g. config 403 "before-attestation"). */
  expected?: { total: number; rejections: ExpectedRejection[] };
  /** The graceful stop after the planned duration: devices stopped producing and delivered what
   *  they had queued (a simulator action, not EVE behaviour); requests made then are counted above. */
  drain?: DrainSummary;
  /** Attestation outcomes counted by the embedded controller (absent with a real controller). */
  attestation?: import('./attestation/attestation-outcomes.js').AttestationSummary;
  /** The request figures again per interface (controller API v1, v2, and 'lps'), with devices and
   *  onboarded devices per controller API (api-breakdown.ts). `endpoints` and `overall` cover all. */
  byApi?: import('./api-v1/api-breakdown.js').ApiSummaries;
  /** Local profile servers: sites, command completion, token rejections, radio and GNSS states (lps-summary.ts). */
  lps?: import('./lps/lps-summary.js').LpsRunSummary;
  /** The run over time, interval by interval (run-series.ts); absent in summaries of older versions. */
  series?: import('./run-series.js').RunSeries;
  /** The faults the generator injected (issue 12 §2): window, target, devices and requests hit; absent without faults. */
  faults?: import('./faults/fault-summary.js').FaultSummary[];
  /** Devices with connections of their own (API v1's mutual TLS, v2 `connection: per-device`):
   *  connects, resumed TLS sessions, failures, certificate switches and connections lost with a
   *  device that went down. Absent when every device used the shared v2 pool. */
  connections?: import('../transport/own-connection-figures.js').OwnConnections;
  thresholds: ThresholdResult[];
  generator: GeneratorHealth;
  /** Who was saturated (the controller, the generator or neither) and the figures that say so
   *  (saturation-verdict.ts); absent from summaries of older versions. */
  saturation?: import('./saturation-types.js').SaturationVerdict;
  /** What `evesim merge` combines the summaries of a fleet's shards from (mergeable-summary.ts). */
  mergeable?: import('./mergeable-summary.js').MergeableSection;
  /** The exit code the run ends with. */
  exitCode: number;
}

/** What thresholds are judged against: the summary before thresholds and exit code are known. */
export type MeasuredRun = Omit<RunSummary, 'thresholds' | 'exitCode'>;

/** Stats of an endpoint, treating an absent endpoint as one with no requests. */
export function endpointStats(summary: Pick<RunSummary, 'endpoints'>, key: string): EndpointStats {
  return summary.endpoints[key] ?? emptyEndpointStats();
}

export function summaryToJson(summary: RunSummary): string {
  // The mergeable section last: it is for `evesim merge`, not for reading.
  const { mergeable, ...rest } = summary;
  return `${JSON.stringify(mergeable ? { ...rest, mergeable } : rest, null, 2)}\n`;
}

export function writeSummaryJson(file: string, summary: RunSummary): void {
  writeFileSync(file, summaryToJson(summary));
}
