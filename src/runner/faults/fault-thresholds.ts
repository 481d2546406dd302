// Judges fault_recovery.* thresholds (src/scenario/faults/fault-thresholds.ts) against the
// summary's faults: over every network fault and power loss whose window ended within the run, the share of the
// devices it hit that got a configuration answer after the window, and the longest time to it.

import type { MeasuredRun } from '../summary-json.js';
import type { ThresholdMeasure } from '../threshold-measure.js';

export function measureFaultRecovery(subject: string, stat: string, run: MeasuredRun): ThresholdMeasure | undefined {
  if (subject !== 'fault_recovery') return undefined;
  const ended = (run.faults ?? []).filter((f) => f.recovery !== undefined);
  if (ended.length === 0) return { cannot: 'the run had no network fault or power loss whose window ended before the run did' };
  const hit = ended.reduce((n, f) => n + f.devicesHit, 0);
  const recovered = ended.reduce((n, f) => n + f.recovery!.devices, 0);
  if (hit === 0) return { cannot: "the faults hit no device (none sent a request in a network fault's window or was up to lose power)" };
  switch (stat) {
    case 'ratio':
      return { value: recovered / hit };
    case 'max':
      if (recovered < hit) return { cannot: `${hit - recovered} of the ${hit} devices hit got no configuration answer after the window` };
      return { value: Math.max(...ended.map((f) => f.recovery!.maxMs)) };
    default:
      return { cannot: `"fault_recovery.${stat}" is not a measure evesim records` };
  }
}
