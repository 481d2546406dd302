// One row of the summary's endpoint tables (per endpoint, overall, and the same per API): counts,
// rate over the run, and latency percentiles from the merged histogram, in ms to 3 decimals.
// Imports nothing of the runner: the summary (summary-json.ts) and its capability sections
// (api-v1/api-breakdown.ts) both build on it.
import { percentileMs, type LatencyHistogram } from '../fleet/latency-histogram.js';
import { UNFINISHED } from '../transport/request-observer.js';

/** Figures of the requests to one endpoint (or of all requests, in `overall`). */
export interface EndpointStats {
  /** Requests finished (answered or failed) during the run. */
  count: number;
  /** Requests that failed: HTTP status other than 2xx and 304, or no HTTP answer at all — except
   *  the expected rejections counted in `expected`. */
  errors: number;
  /** Non-success answers the devices expected and handled as EVE does (e.g. config 403 before
   *  attestation); not errors. Their latencies are in the percentiles like any other answer. */
  expected: number;
  /** Requests still waiting for their answer when the run (with its drain) ended: counted in
   *  `count` and `errors` (byError.unfinished), their latency taken up to the end. */
  unfinished: number;
  /** count / run seconds. */
  rate: number;
  /** Latency from when the request was due (open model) to when it finished, ms; 0 when count is 0. */
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  /** Requests per HTTP status, keyed by the decimal code: { "200": 10, "201": 4 }. */
  byStatus: Record<string, number>;
  /** Requests that got no HTTP answer, by cause ('ECONNREFUSED', 'timeout', ...). */
  byError: Record<string, number>;
}

export function emptyEndpointStats(): EndpointStats {
  return { count: 0, errors: 0, expected: 0, unfinished: 0, rate: 0, p50_ms: 0, p90_ms: 0, p99_ms: 0, max_ms: 0, byStatus: {}, byError: {} };
}


export function endpointStats(
  hist: LatencyHistogram,
  n: { count: number; errors: number; expected: number },
  seconds: number,
  byStatus: Record<string, number>,
  byError: Record<string, number>,
): EndpointStats {
  if (n.count === 0) return { ...emptyEndpointStats(), byStatus, byError };
  return {
    count: n.count,
    errors: n.errors,
    expected: n.expected,
    unfinished: byError[UNFINISHED] ?? 0,
    rate: seconds > 0 ? n.count / seconds : 0,
    p50_ms: round3(percentileMs(hist, 50)),
    p90_ms: round3(percentileMs(hist, 90)),
    p99_ms: round3(percentileMs(hist, 99)),
    max_ms: round3(percentileMs(hist, 100)),
    byStatus,
    byError,
  };
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
