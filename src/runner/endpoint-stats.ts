// One row of the summary's endpoint tables (per endpoint, overall, and the same per API): counts,
// rate over the run, and latency percentiles from the merged histogram, in ms to 3 decimals.
import { percentileMs, type LatencyHistogram } from '../fleet/latency-histogram.js';
import { emptyEndpointStats, type EndpointStats } from './summary-json.js';

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
