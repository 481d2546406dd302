// The worker's metric recorder: a RequestObserver on the shared transport plus the sink for device
// findings and lifecycle changes. It keeps interval data (histograms, counters) that takeDelta()
// hands out and resets, and gauges that it reports as they are.
//
// Latency is doneAt - dueAt: from when the request was due, not when it was sent, so a stalled
// controller (or a saturated generator) shows up as latency instead of as fewer requests.

import type { DeviceFinding, DeviceLifecycle } from '../device/device-options.js';
import { ENDPOINT_KEYS, type EndpointKey } from '../protocol/endpoints.js';
import type { RequestObserver, RequestOutcome } from '../transport/request-observer.js';
import {
  emptyLifecycleCounts,
  STATUS_CLASSES,
  statusClassOf,
  isErrorStatus,
  type CountDelta,
  type SeriesDelta,
  type StatusClass,
} from './fleet-delta.js';
import { newLatencyHistogram, recordLatencyMs, toSparse, type LatencyHistogram } from './latency-histogram.js';

const ENDPOINT_INDEX = new Map<string, number>(ENDPOINT_KEYS.map((k, i) => [k, i]));
const CLASS_COUNT = STATUS_CLASSES.length;
const CLASS_INDEX: Record<StatusClass, number> = Object.fromEntries(STATUS_CLASSES.map((c, i) => [c, i])) as Record<
  StatusClass,
  number
>;

interface Series {
  hist: LatencyHistogram;
  count: number;
  sumMs: number;
}

export interface RecorderDelta {
  series: SeriesDelta[];
  requests: CountDelta[];
  errors: CountDelta[];
  findings: { kind: DeviceFinding['kind']; count: number }[];
  findingSamples: DeviceFinding[];
  deviceErrors: number;
}

export interface MetricRecorderOptions {
  /** Findings kept with their detail over the whole run (the rest are only counted). */
  maxFindingSamples?: number;
}

export class MetricRecorder implements RequestObserver {
  /** Indexed endpoint * CLASS_COUNT + class; created on first use, reused (reset) afterwards. */
  private readonly series: (Series | undefined)[] = new Array(ENDPOINT_KEYS.length * CLASS_COUNT);
  /** Per endpoint: status text → count in this interval. */
  private readonly requests: Map<string, number>[] = ENDPOINT_KEYS.map(() => new Map());
  private readonly errors: Map<string, number>[] = ENDPOINT_KEYS.map(() => new Map());
  private readonly findings = new Map<DeviceFinding['kind'], number>();
  private findingSamples: DeviceFinding[] = [];
  private samplesLeft: number;
  private deviceErrors = 0;

  /** Gauge: devices by lifecycle (kept up to date by onStateChange). */
  readonly lifecycle: Record<DeviceLifecycle, number> = emptyLifecycleCounts();
  /** Run totals, for the worker's final result. */
  readonly totals = { requests: 0, errors: 0, findings: 0, deviceErrors: 0 };

  constructor(opts: MetricRecorderOptions = {}) {
    this.samplesLeft = opts.maxFindingSamples ?? 50;
  }

  onOutcome(o: RequestOutcome): void {
    const e = ENDPOINT_INDEX.get(o.endpoint);
    if (e === undefined) return; // not a v2 endpoint key: nothing to file it under
    const cls = statusClassOf(o.status);
    const slot = e * CLASS_COUNT + CLASS_INDEX[cls];
    let s = this.series[slot];
    if (!s) s = this.series[slot] = { hist: newLatencyHistogram(), count: 0, sumMs: 0 };
    const ms = o.doneAt - o.dueAt;
    recordLatencyMs(s.hist, ms);
    s.count++;
    s.sumMs += ms > 0 ? ms : 0;
    this.totals.requests++;

    const statusText = o.status === 0 ? (o.error ?? 'error') : String(o.status);
    bump(this.requests[e]!, statusText);
    if (isErrorStatus(o.status)) {
      bump(this.errors[e]!, statusText);
      this.totals.errors++;
    }
  }

  onFinding(f: DeviceFinding): void {
    this.findings.set(f.kind, (this.findings.get(f.kind) ?? 0) + 1);
    this.totals.findings++;
    if (this.samplesLeft > 0) {
      this.samplesLeft--;
      this.findingSamples.push({ deviceIndex: f.deviceIndex, endpoint: f.endpoint, kind: f.kind, detail: f.detail });
    }
  }

  /** A device (or the fleet code around it) threw: counted, never fatal. */
  onDeviceError(deviceIndex: number, where: string, err: unknown): void {
    this.deviceErrors++;
    this.totals.deviceErrors++;
    if (this.samplesLeft > 0) {
      this.samplesLeft--;
      const detail = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      this.findingSamples.push({ deviceIndex, endpoint: where, kind: 'conformance', detail: `simulator error: ${detail}` });
    }
  }

  onStateChange(from: DeviceLifecycle, to: DeviceLifecycle): void {
    this.lifecycle[from]--;
    this.lifecycle[to]++;
  }

  /** Hands out everything recorded since the last call and starts a new interval. */
  takeDelta(): RecorderDelta {
    const series: SeriesDelta[] = [];
    for (let slot = 0; slot < this.series.length; slot++) {
      const s = this.series[slot];
      if (!s || s.count === 0) continue;
      series.push({
        endpoint: ENDPOINT_KEYS[Math.floor(slot / CLASS_COUNT)]!,
        statusClass: STATUS_CLASSES[slot % CLASS_COUNT]!,
        count: s.count,
        sumMs: s.sumMs,
        hist: toSparse(s.hist),
      });
      s.hist.reset();
      s.count = 0;
      s.sumMs = 0;
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
    for (const [status, count] of m) out.push({ endpoint: ENDPOINT_KEYS[e] as EndpointKey, status, count });
    m.clear();
  }
  return out;
}
