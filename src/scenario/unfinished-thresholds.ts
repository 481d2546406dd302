// Threshold subjects for requests still waiting for their answer when the run ended (counted as
// unfinished, src/transport/timed-transport.ts): over all endpoints, or per endpoint.
//   unfinished.count == 0    config.unfinished.count == 0    lps.radio.unfinished.count == 0
// Evaluation: src/runner/thresholds.ts.

import { ENDPOINT_KEYS } from '../protocol/endpoints.js';
import { LPS_ENDPOINT_KEYS } from '../device/lps/lps-endpoints.js';
import type { ThresholdValueKind } from './threshold-kinds.js';

/** The subject suffix of a per-endpoint unfinished count: `config.unfinished`. */
export const UNFINISHED_SUFFIX = '.unfinished';

export const UNFINISHED_THRESHOLD_SUBJECTS: Readonly<Record<string, Readonly<Record<string, ThresholdValueKind>>>> = {
  unfinished: { count: 'count' },
  ...Object.fromEntries([...ENDPOINT_KEYS, ...LPS_ENDPOINT_KEYS].map((k) => [`${k}${UNFINISHED_SUFFIX}`, { count: 'count' }])),
};
