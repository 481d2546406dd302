// The worker's metric recorder: a RequestObserver on the shared transport plus the sink for device
// findings and lifecycle changes. It keeps interval data (histograms, counters) that takeDelta()
// hands out and resets, and gauges that it reports as they are.
//
// Latency is doneAt - dueAt: from when the request was due, not when it was sent, so a stalled
// controller (or a saturated generator) shows up as latency instead of as fewer requests.

import type { DeviceFinding, DeviceLifecycle } from '../device/device-options.js';
import { ENDPOINT_KEYS as CONTROLLER_ENDPOINT_KEYS } from '../protocol/endpoints.js';
import { LPS_ENDPOINT_KEYS } from '../device/lps/lps-endpoints.js';
import type { RequestEndpointKey as EndpointKey } from '../device/ports.js';
import type { RequestObserver, RequestOutcome } from '../transport/request-observer.js';
import { API_LABELS, apiLabelOf, type ApiLabel } from '../protocol/api-version.js';
import { emptyLifecycleCounts, type CountDelta, type ExpectedDelta, type PhaseDelta, type SeriesDelta } from './fleet-delta.js';
import { RequestBook, type LaneNames } from './request-book.js';

/** Every endpoint requests are filed under: the controller's, then the local profile server's. */
const ENDPOINT_KEYS: readonly EndpointKey[] = [...CONTROLLER_ENDPOINT_KEYS, ...LPS_ENDPOINT_KEYS];
const ENDPOINT_INDEX = new Map<string, number>(ENDPOINT_KEYS.map((k, i) => [k, i]));
/**
 * Figures are kept per lane = (interface label, endpoint): lane = apiIndex * E + endpointIndex, so
 * a mixed v1/v2 fleet reports each endpoint once per API (api-version.ts).
 */
const E = ENDPOINT_KEYS.length;
const API_INDEX = new Map<ApiLabel, number>(API_LABELS.map((a, i) => [a, i]));
const LANES = API_LABELS.length * E;
const laneEndpoint = (lane: number): EndpointKey => ENDPOINT_KEYS[lane % E]!;
const laneApi = (lane: number): ApiLabel => API_LABELS[Math.floor(lane / E)]!;

const LANE_NAMES: LaneNames = { lanes: LANES, endpoint: laneEndpoint, api: laneApi };

export interface RecorderDelta {
  series: SeriesDelta[];
  requests: CountDelta[];
  errors: CountDelta[];
  expected: ExpectedDelta[];
  findings: { kind: DeviceFinding['kind']; count: number }[];
  findingSamples: DeviceFinding[];
  deviceErrors: number;
  /** The drain's requests of this interval (startDrain()), kept apart from the run's above. */
  drain?: PhaseDelta;
}

export interface MetricRecorderOptions {
  /** Findings kept with their detail over the whole run (the rest are only counted). */
  maxFindingSamples?: number;
  /** Of those, at most this many of one kind (the first ones), so every kind keeps examples. */
  examplesPerKind?: number;
}

export class MetricRecorder implements RequestObserver {
  /** The run's requests, and from startDrain() on the drain's (requests due from then on). */
  private readonly runBook = new RequestBook(LANE_NAMES);
  private readonly drainBook = new RequestBook(LANE_NAMES);
  /** Start of the drain (epoch ms): requests due at or after it are the drain's. */
  private drainFromMs = Infinity;
  private readonly findings = new Map<DeviceFinding['kind'], number>();
  private findingSamples: DeviceFinding[] = [];
  private samplesLeft: number;
  private readonly examplesPerKind: number;
  /** Samples kept so far over the run, by kind (simulator errors under their own key). */
  private readonly samplesByKind = new Map<string, number>();
  private deviceErrors = 0;

  /** Gauge: devices by lifecycle (kept up to date by onStateChange). */
  readonly lifecycle: Record<DeviceLifecycle, number> = emptyLifecycleCounts();
  /** Run totals, for the worker's final result. */
  readonly totals = { requests: 0, errors: 0, expected: 0, findings: 0, deviceErrors: 0 };

  constructor(opts: MetricRecorderOptions = {}) {
    this.samplesLeft = opts.maxFindingSamples ?? 50;
    this.examplesPerKind = opts.examplesPerKind ?? 5;
  }

  /** Takes one sample of `key` out of the budgets, or says there is none left. */
  private takeSample(key: string): boolean {
    const kept = this.samplesByKind.get(key) ?? 0;
    if (this.samplesLeft <= 0 || kept >= this.examplesPerKind) return false;
    this.samplesLeft--;
    this.samplesByKind.set(key, kept + 1);
    return true;
  }

  /** The graceful stop began at `atMs`: requests due from then on are filed as the drain's. */
  startDrain(atMs: number): void {
    this.drainFromMs = atMs;
  }

  onOutcome(o: RequestOutcome): void {
    const ep = ENDPOINT_INDEX.get(o.endpoint);
    if (ep === undefined) return; // not a known endpoint key: nothing to file it under
    const lane = API_INDEX.get(apiLabelOf(o.endpoint, o.path))! * E + ep;
    const statusText = o.status === 0 ? (o.error ?? 'error') : String(o.status);
    // By when it was due: a request of the run still in flight at its end stays the run's.
    const book = o.dueAt >= this.drainFromMs ? this.drainBook : this.runBook;
    // The device said an expected answer is normal here (e.g. config 403 before attestation).
    const kind = book.record(lane, o.status, statusText, o.doneAt - o.dueAt, o.expected);
    this.totals.requests++;
    if (kind === 'expected') this.totals.expected++;
    else if (kind === 'error') this.totals.errors++;
  }

  onFinding(f: DeviceFinding): void {
    this.findings.set(f.kind, (this.findings.get(f.kind) ?? 0) + 1);
    this.totals.findings++;
    if (this.takeSample(f.kind)) {
      // A copy of the plain fields (the finding may carry more than crosses the thread boundary).
      const sample: DeviceFinding = { deviceIndex: f.deviceIndex, endpoint: f.endpoint, kind: f.kind, detail: f.detail };
      if (f.status !== undefined) sample.status = f.status;
      if (f.requestId !== undefined) sample.requestId = f.requestId;
      if (f.serial !== undefined) sample.serial = f.serial;
      this.findingSamples.push(sample);
    }
  }

  /** A device (or the fleet code around it) threw: counted, never fatal. */
  onDeviceError(deviceIndex: number, where: string, err: unknown): void {
    this.deviceErrors++;
    this.totals.deviceErrors++;
    if (this.takeSample('simulator-error')) {
      const detail = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      this.findingSamples.push({ deviceIndex, endpoint: where, kind: 'conformance', detail: `simulator error: ${detail}`, simulatorError: true });
    }
  }

  onStateChange(from: DeviceLifecycle, to: DeviceLifecycle): void {
    this.lifecycle[from]--;
    this.lifecycle[to]++;
  }

  /** Hands out everything recorded since the last call and starts a new interval. */
  takeDelta(): RecorderDelta {
    const run = this.runBook.take();
    const drain = this.drainBook.isEmpty ? undefined : this.drainBook.take();
    const findings = [...this.findings].map(([kind, count]) => ({ kind, count }));
    this.findings.clear();
    const findingSamples = this.findingSamples;
    this.findingSamples = [];
    const deviceErrors = this.deviceErrors;
    this.deviceErrors = 0;
    return {
      series: run.series,
      requests: run.requests,
      errors: run.errors,
      expected: run.expected,
      findings,
      findingSamples,
      deviceErrors,
      ...(drain ? { drain } : {}),
    };
  }
}
