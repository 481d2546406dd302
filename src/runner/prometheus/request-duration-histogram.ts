// evesim_request_duration_seconds: latency from the time each request was due (open model), fed
// from the workers' HDR deltas rather than by timing requests on the main thread.
//
// How it stays on prom-client's public API: it is an ordinary prom-client Histogram, and a delta
// is fed in with Histogram.observe(). A sparse HDR delta is a list of (bucket value, count); each
// count becomes one observe() of the HDR bucket's highest equivalent value, which lands in the
// first Prometheus bucket whose bound covers it — the value the summary's percentiles report, so
// histogram_quantile() and the summary agree within a Prometheus bucket. One observe() per request
// costs ~0.5 µs on the main thread (5 ms/s at 10,000 requests/s), the price of not reaching into
// prom-client's internals (a hand-made metric object would need a cast to register, and its text
// would bypass the Registry's own rendering). `_sum` is the sum of those HDR values: within 0.1 %
// (three significant digits) of the exact sum, never below it.

import { Histogram, type Registry } from 'prom-client';
import { forEachBucket, type LatencyHistogram, type SparseHistogram } from '../../fleet/latency-histogram.js';

/** Bucket bounds in seconds: 1 ms .. 60 s. */
export const DURATION_BUCKETS_S: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60,
];

export type RequestLabelName = 'api' | 'endpoint' | 'code' | 'class';
export type RequestLabels = Record<RequestLabelName, string>;

export class RequestDurationHistogram {
  private readonly histogram: Histogram<RequestLabelName>;

  constructor(registry: Registry) {
    this.histogram = new Histogram({
      name: 'evesim_request_duration_seconds',
      help: 'Request latency from the time the request was due (open model), by API (v1, v2, lps), endpoint, code (HTTP status or transport error) and class (2xx .. 5xx, transport)',
      labelNames: ['api', 'endpoint', 'code', 'class'],
      buckets: [...DURATION_BUCKETS_S],
      registers: [registry],
    });
  }

  /** Creates the label set with every bucket at 0 (before its first request). */
  zero(labels: RequestLabels): void {
    this.histogram.zero(labels);
  }

  /** Adds one delta: `delta` holds the counts, `scale` (a histogram of the same layout) maps its indices to values. */
  add(labels: RequestLabels, delta: SparseHistogram, scale: LatencyHistogram): void {
    const series = this.histogram.labels(labels);
    forEachBucket(delta, scale, (valueUs, count) => {
      const seconds = valueUs / 1e6;
      for (let i = 0; i < count; i++) series.observe(seconds);
    });
  }
}
