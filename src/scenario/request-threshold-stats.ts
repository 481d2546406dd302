// The stats a threshold may name for any request subject: controller endpoints, `all`, and the
// local profile server endpoints alike.
import type { ThresholdValueKind } from './threshold-kinds.js';

export const REQUEST_STATS: Readonly<Record<string, ThresholdValueKind>> = {
  p50: 'latency-ms',
  p90: 'latency-ms',
  p99: 'latency-ms',
  max: 'latency-ms',
  count: 'count',
  rate: 'per-second',
};
