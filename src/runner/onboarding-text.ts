// How long the run's devices took to onboard, in words, for the text report and the HTML page:
// from each device's scheduled arrival to its first 'onboarded' (the summary's onboarding section),
// how much longer the slowest took than the median one (devices trailing a storm), and when the
// last one got there.

import type { OnboardingSummary } from '../fleet/onboarding-times.js';
import { formatMs } from './format-values.js';

/** 850 ms, 5.70 s, 61.2 s: three figures, as the report's other latencies (scenario/parse-duration's
 *  formatDuration writes durations as a scenario file would, 5.698s). */
export function formatElapsed(ms: number): string {
  if (ms < 1000) return `${formatMs(ms)} ms`;
  const s = ms / 1000;
  return `${s < 10 ? s.toFixed(2) : s.toFixed(1)} s`;
}

export function onboardingText(o: OnboardingSummary): string {
  return (
    `p50 ${formatElapsed(o.p50Ms)}, p90 ${formatElapsed(o.p90Ms)}, p99 ${formatElapsed(o.p99Ms)}, slowest ${formatElapsed(o.maxMs)} from arrival to onboarded ` +
    `(the slowest ${formatElapsed(Math.max(0, o.maxMs - o.p50Ms))} longer than the median); the last device onboarded ${formatElapsed(o.lastAtMs)} into the run`
  );
}
