// The Prometheus annotation metric of the faults: evesim_faults_active{fault="partition"} is the
// number of devices the scenario's active faults of that kind hit (0 when none is active), read
// from the plan and the clock at scrape time, so a dashboard can shade the fault windows.

import type { Registry } from 'prom-client';
import type { FaultPlan } from '../../faults/fault-plan.js';
import { setFaultsActiveReader } from '../prometheus/faults-active.js';

/** Devices hit by active faults, by kind, `elapsedMs` after the start (undefined: not started). */
export function activeFaultDevices(plan: FaultPlan, elapsedMs: number | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of plan.faults) out[p.fault.action] ??= 0;
  if (elapsedMs === undefined) return out;
  for (const p of plan.faults) {
    // An instant (tpm-reset) shows for the second it happens in.
    const end = p.endMs > p.startMs ? p.endMs : p.startMs + 1000;
    if (elapsedMs >= p.startMs && elapsedMs < end) out[p.fault.action]! += p.deviceCount;
  }
  return out;
}

/** Hands the metrics server's evesim_faults_active gauge (prometheus/faults-active.ts) its reader. */
export function registerFaultMetrics(registry: Registry, plan: FaultPlan, elapsedMs: () => number | undefined): void {
  setFaultsActiveReader(registry, () => activeFaultDevices(plan, elapsedMs()));
}
