// Measures the onboarding thresholds (src/scenario/onboarding-thresholds.ts) from the summary. The
// section holds the devices that onboarded; a device that never did has no time, and a percentile
// over the others would hide it, so any such device fails these thresholds with its count.

import type { MeasuredRun } from './summary-json.js';
import type { ThresholdMeasure } from './threshold-measure.js';

/** The measure of `onboarding.stat`, or undefined when the subject is not onboarding. */
export function measureOnboardingThreshold(subject: string, stat: string, run: Pick<MeasuredRun, 'onboarding' | 'devices'>): ThresholdMeasure | undefined {
  if (subject !== 'onboarding') return undefined;
  const o = run.onboarding;
  if (!o || o.devices === 0) return { cannot: run.devices.total === 0 ? 'the run had no devices' : 'no device onboarded during the run' };
  const missing = run.devices.total - o.devices;
  if (missing > 0) return { cannot: `${missing} of the run's ${run.devices.total} devices never onboarded, so their time is beyond the run (see onboarded.ratio)` };
  switch (stat) {
    case 'p50':
      return { value: o.p50Ms };
    case 'p90':
      return { value: o.p90Ms };
    case 'p99':
      return { value: o.p99Ms };
    case 'max':
      return { value: o.maxMs };
    case 'trail':
      return { value: Math.max(0, o.maxMs - o.p50Ms) };
    default:
      return undefined;
  }
}
