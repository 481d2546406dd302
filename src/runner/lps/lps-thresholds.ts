// Judges the local profile server thresholds (src/scenario/lps/lps-thresholds.ts) against the run's
// LPS summary. Without one (no sites, or a real controller, which never points devices at an LPS)
// they are "not checked" (thresholds.ts decides what that means for the run).

import { LPS_ENDPOINT_KEYS } from '../../device/lps/lps-endpoints.js';
import type { MeasuredRun } from '../summary-json.js';
import type { ThresholdMeasure } from '../threshold-measure.js';

const NO_LPS = 'the run had no local profile server (no sites and no LPS traffic; sites need the embedded controller)';
const LPS_ENDPOINTS: ReadonlySet<string> = new Set<string>(LPS_ENDPOINT_KEYS);

/** The value of an lps_command.* or lps_token.* threshold, why an lps.* endpoint threshold cannot be
 *  checked (no LPS in the run; with one, it is an ordinary request figure), or undefined. */
export function measureLps(subject: string, stat: string, run: MeasuredRun): ThresholdMeasure | undefined {
  if (LPS_ENDPOINTS.has(subject)) return run.lps === undefined ? { notChecked: NO_LPS } : undefined;
  if (subject !== 'lps_command' && subject !== 'lps_token') return undefined;
  const lps = run.lps;
  if (lps === undefined) return { notChecked: NO_LPS };
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
