// Threshold subjects on how long devices took to onboard, from each device's scheduled arrival to
// its first 'onboarded' (the summary's onboarding section), and how far the slowest device trailed
// the median one (times from each one's own arrival, so an arrival spread over a minute is not a
// trail):
//   onboarding.p99 < 10s       onboarding.max < 30s
//   onboarding.trail < 5s      the slowest device took at most 5 s longer than the median one
// Every device of the run counts: when one never onboarded, these fail (its time is beyond the run).
// Evaluation: src/runner/onboarding-threshold-measure.ts.

import type { ThresholdValueKind } from './threshold-kinds.js';

export const ONBOARDING_THRESHOLD_SUBJECTS: Readonly<Record<string, Readonly<Record<string, ThresholdValueKind>>>> = {
  onboarding: { p50: 'latency-ms', p90: 'latency-ms', p99: 'latency-ms', max: 'latency-ms', trail: 'latency-ms' },
};
