// The Prometheus annotation metric of the faults: evesim_faults_active{fault="partition"} is the
// number of devices the scenario's active faults of that kind hit (0 when none is active), read
// from the plan and the clock at scrape time, so a dashboard can shade the fault windows.

import { Gauge, type Registry } from 'prom-client';
import type { FaultPlan } from '../../faults/fault-plan.js';
import { FAULT_KINDS } from '../../faults/fault-spec.js';

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

export function registerFaultMetrics(registry: Registry, plan: FaultPlan, elapsedMs: () => number | undefined): void {
  new Gauge({
    name: 'evesim_faults_active',
    help: `Devices hit by the scenario's faults active now, by fault kind (${FAULT_KINDS.join(', ')}); 0 outside their windows`,
    labelNames: ['fault'],
    registers: [registry],
    collect() {
      for (const [fault, n] of Object.entries(activeFaultDevices(plan, elapsedMs()))) this.set({ fault }, n);
    },
  });
}
