// What a worker tells the main thread, once a second and once more at the end: plain data that
// crosses a MessagePort by structured clone. Counters and histograms are deltas since the last
// message (the main thread sums them); gauges (devices by lifecycle, backlogs, loop lag) are the
// current values.

import type { DeviceFinding, DeviceLifecycle } from '../device/device-options.js';
import type { ExpectReason } from '../device/ports.js';
// Requests are keyed by controller and local profile server endpoints alike ('config', 'lps.radio').
import type { RequestEndpointKey as EndpointKey } from '../device/ports.js';
import type { SparseHistogram } from './latency-histogram.js';
import type { ApiLabel, ApiVersion } from '../protocol/api-version.js';

/** Status class of an answer; 'err' means no HTTP answer came (transport error). */
export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'err';
export const STATUS_CLASSES: readonly StatusClass[] = ['1xx', '2xx', '3xx', '4xx', '5xx', 'err'];

export function statusClassOf(status: number): StatusClass {
  if (status >= 100 && status < 200) return '1xx';
  if (status >= 200 && status < 300) return '2xx';
  if (status >= 300 && status < 400) return '3xx';
  if (status >= 400 && status < 500) return '4xx';
  if (status >= 500 && status < 600) return '5xx';
  return 'err';
}

/**
 * A request counts as an error unless it was answered 2xx or 304 Not Modified (the definition of
 * RunSummary's EndpointStats.errors and of DeviceStats): no HTTP answer, 4xx, 5xx and other 3xx —
 * except answers the device said it expected (RequestOutcome.expected), which the recorder
 * counts apart.
 */
export function isErrorStatus(status: number): boolean {
  return !((status >= 200 && status < 300) || status === 304);
}

export interface SeriesDelta {
  endpoint: EndpointKey;
  /** Interface the requests went to: controller API v1 or v2, or 'lps'. Absent (older senders): v2. */
  api?: ApiLabel;
  statusClass: StatusClass;
  /** The exact code of these requests, as CountDelta.status ('200', 'ECONNREFUSED'); absent from
   *  older senders, whose series were per class only. */
  code?: string;
  count: number;
  /** Exact sum of latencies in ms (the histogram only knows bucketed values). */
  sumMs: number;
  hist: SparseHistogram;
}

export interface CountDelta {
  endpoint: EndpointKey;
  /** Interface the requests went to: controller API v1 or v2, or 'lps'. Absent (older senders): v2. */
  api?: ApiLabel;
  /** HTTP status as a string ('200', '404'), or the transport error code ('ECONNREFUSED', 'timeout'). */
  status: string;
  count: number;
}

/** Non-success answers the device expected (RequestOutcome.expected): counted here, not as errors. */
export interface ExpectedDelta {
  endpoint: EndpointKey;
  /** Interface the requests went to: controller API v1 or v2, or 'lps'. Absent (older senders): v2. */
  api?: ApiLabel;
  /** HTTP status as a string ('403'). */
  status: string;
  reason: ExpectReason;
  count: number;
}

/** The request figures of one interval of one phase, as they cross to the main thread. */
export interface PhaseDelta {
  series: SeriesDelta[];
  requests: CountDelta[];
  errors: CountDelta[];
  expected: ExpectedDelta[];
}

/** Devices whose last controller request succeeded / failed (device-health.ts). */
export interface HealthCounts {
  healthy: number;
  failing: number;
}

export interface LoopStats {
  /** Event-loop delay percentiles over the interval, ms (perf_hooks.monitorEventLoopDelay). */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Share of the interval the worker thread was busy (event-loop utilisation, 0..1): its CPU use. */
  utilisation: number;
}

export interface FleetDelta {
  workerId: number;
  seq: number;
  /** True on the last delta of a worker (sent after its devices stopped). */
  final: boolean;
  /** Clock time (epoch ms) the delta was taken, and the length of its interval. */
  atMs: number;
  intervalMs: number;
  series: SeriesDelta[];
  requests: CountDelta[];
  errors: CountDelta[];
  /** Expected rejections (e.g. config 403 before attestation); absent from older workers. */
  expected?: ExpectedDelta[];
  /** The drain's requests (due after the run phase ended), kept apart from the run's series,
   *  requests, errors and expected above; absent when there were none (and from older workers). */
  drain?: PhaseDelta;
  findings: { kind: DeviceFinding['kind']; count: number }[];
  /** A few findings with their detail, for the report (bounded per worker per run). */
  findingSamples: DeviceFinding[];
  /** Exceptions from device code caught by the fleet (a simulator bug, counted, never fatal). */
  deviceErrors: number;
  // ---- gauges ----
  /** Devices of this worker by lifecycle state (devices not yet started count as 'idle'). */
  lifecycle: Record<DeviceLifecycle, number>;
  /** Devices of this worker that have reached 'onboarded' at least once. */
  onboardedEver: number;
  /** Devices whose last controller request succeeded / failed (device-health.ts); absent from older workers. */
  health?: HealthCounts;
  /** The same by the controller API of the device's group (absent from older workers). */
  onboardedEverByApi?: Partial<Record<ApiVersion, number>>;
  /** Devices of this worker started so far (by the arrival model). */
  started: number;
  /** Devices in this worker's shard. */
  shardSize: number;
  /** Reliable messages waiting to be delivered, by kind, over the worker's devices. */
  queueBacklog: Record<string, number>;
  /** Reliable messages given up on so far, by kind (absolute). */
  undelivered: Record<string, number>;
  /** Log files EVE's own on-disk quota deleted so far (absolute; not in `undelivered`; absent: none). */
  droppedByQuota?: { logs: number };
  loop: LoopStats;
  /** Wake-ups pending in the worker's scheduler. */
  pendingTimers: number;
  /** Local profile server figures of the worker (absent when no device uses an LPS or has a radio). */
  lps?: import('./lps-fleet.js').LpsWorkerFigures;
  /** Devices onboarded (first time) since the last delta: how long they took (onboarding-times.ts). */
  onboarding?: import('./onboarding-times.js').OnboardingDelta;
  /** Devices with connections of their own: connects, handshakes, losses so far (absolute; absent: none). */
  ownConnections?: import('../transport/own-connection-figures.js').OwnConnections;
}

export const LIFECYCLES: readonly DeviceLifecycle[] = [
  'idle',
  'fetching-certs',
  'registering',
  'uuid',
  'attesting',
  'onboarded',
  'stopped',
];

export function emptyLifecycleCounts(): Record<DeviceLifecycle, number> {
  return { idle: 0, 'fetching-certs': 0, registering: 0, uuid: 0, attesting: 0, onboarded: 0, stopped: 0 };
}
