// The summary's `faults` section: each fault of the scenario with its window, whom it hit and
// what it did (the workers' tallies added up), and the fault windows as RunEvents for the run's
// series (run-series.ts), which its producer adds to `series.events`.

import { FaultPlan } from '../../faults/fault-plan.js';
import { describeFaultParams, describeFaultTarget } from '../../faults/fault-spec.js';
import type { FaultTally } from '../../faults/fault-tally.js';
import type { RunEvent } from '../run-series.js';

export interface FaultSummary {
  /** partition, latency, ... */
  kind: string;
  /** "30% of group edge", "devices 3,7", "all devices". */
  target: string;
  /** "delay 300ms ±100ms", "loss 20%", "offset +2h"; absent when the kind takes none. */
  params?: string;
  /** Window, ms from the run's start; endMs null when it lasts to the end of the run. */
  startMs: number;
  endMs: number | null;
  /** Devices of this run (this shard) the fault was planned for. */
  devices: number;
  /** Devices it acted on: with a request it changed, or that were up to lose power or reset a TPM. */
  devicesHit: number;
  /** Requests it changed (network faults) or sent on a skewed clock (clock-skew); 0 for power-loss and tpm-reset. */
  requests: number;
  /** Network faults and power losses that end within the run: devices hit that got a configuration
   *  answer (200 or 304) after the window — current again — and the longest time from the end to
   *  such an answer (for a power loss, to a request sent after the power came back). */
  recovery?: { devices: number; maxMs: number };
}

/** One entry per fault of the scenario (undefined when it has none). */
export function buildFaultSummary(
  scenario: Parameters<typeof FaultPlan.of>[0] & { durationMs: number },
  tallies: readonly FaultTally[] | undefined,
): FaultSummary[] | undefined {
  const plan = FaultPlan.of(scenario);
  if (plan.empty) return undefined;
  return plan.faults.map((p) => {
    const t = tallies?.find((x) => x.id === p.id);
    const params = describeFaultParams(p.fault);
    return {
      kind: p.fault.action,
      target: describeFaultTarget(p.fault),
      ...(params ? { params } : {}),
      startMs: p.startMs,
      endMs: Number.isFinite(p.endMs) ? p.endMs : null,
      devices: t?.devices ?? 0,
      devicesHit: t?.devicesHit ?? 0,
      requests: t?.requests ?? 0,
      // Recovery only for windows that ended within the run's planned duration.
      ...(t?.recovered !== undefined && p.endMs <= scenario.durationMs ? { recovery: { devices: t.recovered, maxMs: Math.round(t.recoveryMs ?? 0) } } : {}),
    };
  });
}

/**
 * The fault windows as run events: a 'fault-start' at each start and a 'fault-end' at each end
 * that falls within the run (`durationMs`), in time order. For the series producer.
 */
export function faultRunEvents(scenario: Parameters<typeof FaultPlan.of>[0], durationMs: number): RunEvent[] {
  const events: RunEvent[] = [];
  for (const p of FaultPlan.of(scenario).faults) {
    events.push({ tMs: p.startMs, kind: 'fault-start', label: p.label });
    if (p.endMs > p.startMs && p.endMs <= durationMs) events.push({ tMs: p.endMs, kind: 'fault-end', label: p.label });
  }
  return events.sort((a, b) => a.tMs - b.tMs);
}
