// Threshold subjects for local profile servers: request figures per LPS endpoint (lps.radio.p99,
// lps.appinfo.count), command completion measured by the sites' LPSs (issued → acknowledged by the
// device's last_cmd_timestamp) and answers devices refused for a wrong server_token.
//   lps_command.p99 < 2m    lps_command.acked_ratio == 1    lps_command.count >= 10
//   lps_token.rejected == 0    lps.devinfo.p99 < 100ms
// Evaluation: src/runner/lps/lps-thresholds.ts.

import { LPS_ENDPOINT_KEYS } from '../../device/lps/lps-endpoints.js';
import type { ThresholdValueKind } from '../threshold-kinds.js';
import { REQUEST_STATS } from '../request-threshold-stats.js';


export const LPS_THRESHOLD_SUBJECTS: Readonly<Record<string, Readonly<Record<string, ThresholdValueKind>>>> = {
  ...Object.fromEntries(LPS_ENDPOINT_KEYS.map((k) => [k, REQUEST_STATS])),
  /** Commands issued through the sites' admin APIs: completion latency and acknowledged share. */
  lps_command: { p50: 'latency-ms', p90: 'latency-ms', p99: 'latency-ms', max: 'latency-ms', count: 'count', acked: 'count', acked_ratio: 'fraction' },
  /** LPS answers devices ignored because their server_token was wrong. */
  lps_token: { rejected: 'count' },
};
