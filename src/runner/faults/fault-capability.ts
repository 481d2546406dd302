// Faults in the runner: the workers apply them (src/faults/shard-faults.ts), so the controller's
// admin API gets none; the run shows them in the report's faults block and as the Prometheus gauge
// evesim_faults_active. The summary's `faults` section is filled from the workers' tallies
// (fault-summary.ts).

import { FAULT_KINDS } from '../../faults/fault-spec.js';
import type { RunCapability } from '../run-capability.js';
import { FaultPlan } from '../../faults/fault-plan.js';
import { registerFaultMetrics } from './fault-metrics.js';
import { faultReportLines } from './fault-report.js';
import { measureFaultRecovery } from './fault-thresholds.js';

export const FAULT_RUN: RunCapability = {
  name: 'faults',
  timelineActions: FAULT_KINDS,
  measureThreshold: measureFaultRecovery,
  reportAfterFacts: (s) => faultReportLines(s.faults),
  async start(ctx) {
    const plan = FaultPlan.of(ctx.scenario);
    if (plan.empty) return undefined;
    for (const p of plan.faults) {
      if (p.outsideFleet.length > 0) ctx.err(`evesim: warning: fault "${p.label}": device ${p.outsideFleet.join(', ')} not in the fleet of ${ctx.scenario.groups.reduce((n, g) => n + g.count, 0)}; ignored\n`);
    }
    let startAtMs: number | undefined;
    return {
      registerMetrics: (registry) => registerFaultMetrics(registry, plan, () => (startAtMs === undefined ? undefined : ctx.now() - startAtMs)),
      scheduleTimeline(start) {
        startAtMs = start;
        return [];
      },
    };
  },
};
