// The per-interval request figures of one phase of a run (the run itself, or its drain): per lane
// (interface label × endpoint, metric-recorder.ts) the latency histogram and count of each exact
// code, and the requests, errors and expected rejections by status. take() hands them out as the
// delta's plain arrays and starts a new interval; histograms are reused, not rebuilt.

import type { ExpectReason, RequestEndpointKey as EndpointKey } from '../device/ports.js';
import type { ApiLabel } from '../protocol/api-version.js';
import { isErrorStatus, statusClassOf, type CountDelta, type ExpectedDelta, type PhaseDelta, type SeriesDelta, type StatusClass } from './fleet-delta.js';
import { newLatencyHistogram, recordLatencyMs, toSparse, type LatencyHistogram } from './latency-histogram.js';

/** Latency of one lane and one exact code ('200', '404', 'ECONNREFUSED'), with its status class. */
interface Series {
  statusClass: StatusClass;
  hist: LatencyHistogram;
  count: number;
  sumMs: number;
}


/** How a lane index maps back to its endpoint and interface label. */
export interface LaneNames {
  lanes: number;
  endpoint(lane: number): EndpointKey;
  api(lane: number): ApiLabel;
}

export class RequestBook {
  /** Per lane: status text (the exact code) → its latency; created on first use, reused (reset) afterwards. */
  private readonly series: Map<string, Series>[];
  /** Per lane: status text → count in this interval. */
  private readonly requests: Map<string, number>[];
  private readonly errors: Map<string, number>[];
  /** Per lane: `${status}|${reason}` → expected rejections in this interval. */
  private readonly expected: Map<string, number>[];
  /** Requests recorded since the last take(). */
  private pending = 0;

  constructor(private readonly names: LaneNames) {
    const perLane = <T>(): Map<string, T>[] => Array.from({ length: names.lanes }, () => new Map<string, T>());
    this.series = perLane();
    this.requests = perLane();
    this.errors = perLane();
    this.expected = perLane();
  }

  get isEmpty(): boolean {
    return this.pending === 0;
  }

  /** Records one finished request; returns 'error', 'expected' or 'ok' for the caller's totals. */
  record(lane: number, status: number, statusText: string, latencyMs: number, expected: ExpectReason | undefined): 'error' | 'expected' | 'ok' {
    const byCode = this.series[lane]!;
    let s = byCode.get(statusText);
    if (!s) byCode.set(statusText, (s = { statusClass: statusClassOf(status), hist: newLatencyHistogram(), count: 0, sumMs: 0 }));
    recordLatencyMs(s.hist, latencyMs);
    s.count++;
    s.sumMs += latencyMs > 0 ? latencyMs : 0;
    this.pending++;
    bump(this.requests[lane]!, statusText);
    if (expected !== undefined) {
      bump(this.expected[lane]!, `${statusText}|${expected}`);
      return 'expected';
    }
    if (isErrorStatus(status)) {
      bump(this.errors[lane]!, statusText);
      return 'error';
    }
    return 'ok';
  }

  /** Hands out everything recorded since the last call and starts a new interval. */
  take(): PhaseDelta {
    const names = this.names;
    const series: SeriesDelta[] = [];
    for (let lane = 0; lane < this.series.length; lane++) {
      for (const [code, s] of this.series[lane]!) {
        if (s.count === 0) continue;
        series.push({ endpoint: names.endpoint(lane), api: names.api(lane), statusClass: s.statusClass, code, count: s.count, sumMs: s.sumMs, hist: toSparse(s.hist) });
        s.hist.reset();
        s.count = 0;
        s.sumMs = 0;
      }
    }
    this.pending = 0;
    return { series, requests: this.takeCounts(this.requests), errors: this.takeCounts(this.errors), expected: this.takeExpected() };
  }

  private takeCounts(perLane: Map<string, number>[]): CountDelta[] {
    const out: CountDelta[] = [];
    for (let lane = 0; lane < perLane.length; lane++) {
      const m = perLane[lane]!;
      if (m.size === 0) continue;
      for (const [status, count] of m) out.push({ endpoint: this.names.endpoint(lane), api: this.names.api(lane), status, count });
      m.clear();
    }
    return out;
  }

  private takeExpected(): ExpectedDelta[] {
    const out: ExpectedDelta[] = [];
    for (let lane = 0; lane < this.expected.length; lane++) {
      const m = this.expected[lane]!;
      if (m.size === 0) continue;
      for (const [key, count] of m) {
        const bar = key.indexOf('|');
        out.push({ endpoint: this.names.endpoint(lane), api: this.names.api(lane), status: key.slice(0, bar), reason: key.slice(bar + 1) as ExpectReason, count });
      }
      m.clear();
    }
    return out;
  }
}

function bump(m: Map<string, number>, key: string): void {
  m.set(key, (m.get(key) ?? 0) + 1);
}
