// Controller API v1 in the runner: the per-API table of the report (shown for a mixed fleet).
// (The per-API figures themselves are kept by the fleet aggregate, api-breakdown.ts, and `{api:v1}`
// thresholds are judged by thresholds.ts through api-thresholds.ts.)

import type { RunCapability } from '../run-capability.js';
import { byApiLines } from './report-by-api.js';

export const API_V1_RUN: RunCapability = {
  name: 'api-v1',
  reportAfterEndpoints: (s) => byApiLines(s),
};
