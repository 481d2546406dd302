// The worker's metric recorder: a RequestObserver on the shared transport plus the sink for device
// findings and lifecycle changes. It keeps interval data (histograms, counters) that takeDelta()
// hands out and resets, and gauges that it reports as they are.
//
// Latency is doneAt - dueAt: from when the request was due, not when it was sent, so a stalled
// controller (or a saturated generator) shows up as latency instead of as fewer requests.

import type { DeviceFinding, DeviceLifecycle } from '../device/device-options.js';
import type { ExpectReason } from '../device/ports.js';
import { ENDPOINT_KEYS as CONTROLLER_ENDPOINT_KEYS } from '../protocol/endpoints.js';
import { LPS_ENDPOINT_KEYS } from '../device/lps/lps-endpoints.js';
import type { RequestEndpointKey as EndpointKey } from '../device/ports.js';
import type { RequestObserver, RequestOutcome } from '../transport/request-observer.js';
import { API_LABELS, apiLabelOf, type ApiLabel } from '../protocol/api-version.js';
import {
  emptyLifecycleCounts,
  statusClassOf,
  isErrorStatus,
  type CountDelta,
  type ExpectedDelta,
  type SeriesDelta,
  type StatusClass,
} from './fleet-delta.js';
import { newLatencyHistogram, recordLatencyMs, toSparse, type LatencyHistogram } from './latency-histogram.js';

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

/** Latency of one lane and one exact code ('200', '404', 'ECONNREFUSED'), with its status class. */
interface Series {
  statusClass: StatusClass;
  hist: LatencyHistogram;
  count: number;
  sumMs: number;
}

export interface RecorderDelta {
  series: SeriesDelta[];
  requests: CountDelta[];
  errors: CountDelta[];
  expected: ExpectedDelta[];
  findings: { kind: DeviceFinding['kind']; count: number }[];
  findingSamples: DeviceFinding[];
  deviceErrors: number;
}

export interface MetricRecorderOptions {
  /** Findings kept with their detail over the whole run (the rest are only counted). */
  maxFindingSamples?: number;
  /** Of those, at most this many of one kind (the first ones), so every kind keeps examples. */
  examplesPerKind?: number;
}

export class MetricRecorder implements RequestObserver {
  /** Per lane: status text (the exact code) → its latency; created on first use, reused (reset)
   *  afterwards. By code rather than class so that the Prometheus histogram can carry the same
   *  `code` label as the counters; a lane sees a handful of codes, so a handful of histograms. */
  private readonly series: Map<string, Series>[] = Array.from({ length: LANES }, () => new Map());
  /** Per lane: status text → count in this interval. */
  private readonly requests: Map<string, number>[] = Array.from({ length: LANES }, () => new Map());
  private readonly errors: Map<string, number>[] = Array.from({ length: LANES }, () => new Map());
  /** Per lane: `${status}|${reason}` → expected rejections in this interval. */
  private readonly expected: Map<string, number>[] = Array.from({ length: LANES }, () => new Map());
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

  onOutcome(o: RequestOutcome): void {
    const ep = ENDPOINT_INDEX.get(o.endpoint);
    if (ep === undefined) return; // not a known endpoint key: nothing to file it under
    const e = API_INDEX.get(apiLabelOf(o.endpoint, o.path))! * E + ep;
    const statusText = o.status === 0 ? (o.error ?? 'error') : String(o.status);
    const lane = this.series[e]!;
    let s = lane.get(statusText);
    if (!s) lane.set(statusText, (s = { statusClass: statusClassOf(o.status), hist: newLatencyHistogram(), count: 0, sumMs: 0 }));
    const ms = o.doneAt - o.dueAt;
    recordLatencyMs(s.hist, ms);
    s.count++;
    s.sumMs += ms > 0 ? ms : 0;
    this.totals.requests++;

    bump(this.requests[e]!, statusText);
    if (o.expected !== undefined) {
      // The device said this answer is normal here (e.g. config 403 before attestation).
      bump(this.expected[e]!, `${statusText}|${o.expected}`);
      this.totals.expected++;
    } else if (isErrorStatus(o.status)) {
      bump(this.errors[e]!, statusText);
      this.totals.errors++;
    }
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
    const series: SeriesDelta[] = [];
    for (let lane = 0; lane < this.series.length; lane++) {
      for (const [code, s] of this.series[lane]!) {
        if (s.count === 0) continue;
        series.push({
          endpoint: laneEndpoint(lane),
          api: laneApi(lane),
          statusClass: s.statusClass,
          code,
          count: s.count,
          sumMs: s.sumMs,
          hist: toSparse(s.hist),
        });
        s.hist.reset();
        s.count = 0;
        s.sumMs = 0;
      }
    }
    const findings = [...this.findings].map(([kind, count]) => ({ kind, count }));
    this.findings.clear();
    const findingSamples = this.findingSamples;
    this.findingSamples = [];
    const deviceErrors = this.deviceErrors;
    this.deviceErrors = 0;
    return {
      series,
      requests: drainCounts(this.requests),
      errors: drainCounts(this.errors),
      expected: drainExpected(this.expected),
      findings,
      findingSamples,
      deviceErrors,
    };
  }
}

function bump(m: Map<string, number>, key: string): void {
  m.set(key, (m.get(key) ?? 0) + 1);
}

function drainCounts(perEndpoint: Map<string, number>[]): CountDelta[] {
  const out: CountDelta[] = [];
  for (let e = 0; e < perEndpoint.length; e++) {
    const m = perEndpoint[e]!;
    if (m.size === 0) continue;
    for (const [status, count] of m) out.push({ endpoint: laneEndpoint(e), api: laneApi(e), status, count });
    m.clear();
  }
  return out;
}

function drainExpected(perEndpoint: Map<string, number>[]): ExpectedDelta[] {
  const out: ExpectedDelta[] = [];
  for (let e = 0; e < perEndpoint.length; e++) {
    const m = perEndpoint[e]!;
    if (m.size === 0) continue;
    for (const [key, count] of m) {
      const bar = key.indexOf('|');
      out.push({ endpoint: laneEndpoint(e), api: laneApi(e), status: key.slice(0, bar), reason: key.slice(bar + 1) as ExpectReason, count });
    }
    m.clear();
  }
  return out;
}
