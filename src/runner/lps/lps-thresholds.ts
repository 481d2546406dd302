// Judges the local profile server thresholds (src/scenario/lps/lps-thresholds.ts) against the run's
// LPS summary. Like every threshold, one that cannot be measured fails with the reason.

import type { MeasuredRun } from '../summary-json.js';

type Measured = { value: number } | { cannot: string };

/** The value of an lps_command.* or lps_token.* threshold, or undefined for other subjects. */
export function measureLps(subject: string, stat: string, run: MeasuredRun): Measured | undefined {
  if (subject !== 'lps_command' && subject !== 'lps_token') return undefined;
  const lps = run.lps;
  if (lps === undefined) return { cannot: 'the run had no local profile server (no sites and no LPS traffic)' };
  if (subject === 'lps_token') {
    return stat === 'rejected' ? { value: lps.tokenRejected.total } : { cannot: `"lps_token.${stat}" is not a measure evesim records` };
  }
  const c = lps.commands;
  switch (stat) {
    case 'count':
      return { value: c.issued };
    case 'acked':
      return { value: c.acked };
    case 'acked_ratio':
      return c.ackedRatio === null ? { cannot: 'no LPS command was issued during the run' } : { value: c.ackedRatio };
    case 'p50':
    case 'p90':
    case 'p99':
    case 'max': {
      const v = c[`${stat}_ms`];
      if (v === null) return { cannot: c.issued === 0 ? 'no LPS command was issued during the run' : `none of the ${c.issued} LPS commands was acknowledged` };
      return { value: v };
    }
    default:
      return { cannot: `"lps_command.${stat}" is not a measure evesim records` };
  }
}
