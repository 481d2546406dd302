// Threshold subjects for the graceful stop's own requests (summary `drain.endpoints` / `drain.overall`),
// judged apart from the run's: the plain endpoint subjects (newlogs.p99, all.count) measure the run
// without its drain.
//   drain.newlogs.p99 < 2s    drain.all.count > 0    drain.appnewlogs.max < 10s
// Evaluation: src/runner/thresholds.ts (drainView).

import { ENDPOINT_KEYS } from '../protocol/endpoints.js';
import { REQUEST_STATS } from './request-threshold-stats.js';
import type { ThresholdValueKind } from './threshold-kinds.js';

/** The subject prefix of a drain figure: `drain.newlogs`. */
export const DRAIN_PREFIX = 'drain.';

export const DRAIN_THRESHOLD_SUBJECTS: Readonly<Record<string, Readonly<Record<string, ThresholdValueKind>>>> = Object.fromEntries(
  [...ENDPOINT_KEYS, 'all'].map((k) => [`${DRAIN_PREFIX}${k}`, REQUEST_STATS]),
);
