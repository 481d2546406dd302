// Judging `{api:v1}` thresholds (src/scenario/api-v1/api-thresholds.ts): the run seen through one
// controller API — its endpoints, overall latencies and devices from the summary's byApi section —
// so the ordinary threshold measures apply unchanged.

import type { MeasuredRun } from '../summary-json.js';

/** The run restricted to one API, or why that cannot be measured. */
export function runOfApi(run: MeasuredRun, api: 'v1' | 'v2'): MeasuredRun | { cannot: string } {
  const part = run.byApi?.[api];
  if (!part) return { cannot: `the run had no devices and no requests of API ${api}` };
  return {
    ...run,
    endpoints: part.endpoints,
    overall: part.overall,
    devices: { total: part.devices?.total ?? 0, onboarded: part.devices?.onboarded ?? 0, byLifecycle: {} },
  };
}
