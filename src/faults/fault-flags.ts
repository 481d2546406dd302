// `--fault` flags on `evesim run`: each is parsed up front (a bad one is exit 2 naming the flag and
// the field), then appended to the scenario's timeline once the scenario is loaded, where the
// groups, the fleet size and the run's length are known.

import { formatDuration } from '../scenario/parse-duration.js';
import type { Scenario } from '../scenario/scenario-types.js';
import { parseFaultFlag, type FaultAction } from './fault-spec.js';

/** The faults of the --fault flags, or an Error whose message names the flag and the field. */
export function parseFaultFlags(flags: readonly string[]): FaultAction[] {
  return flags.map((text) => {
    const r = parseFaultFlag(text);
    if (r.ok) return r.fault;
    throw new Error(`--fault '${text}': ${r.problems.map((p) => (p.field === 'action' ? `fault ${p.message}` : `${p.field} ${p.message}`)).join('; ')}`);
  });
}

/** Checks the faults against the loaded scenario and appends them to its timeline; returns the problems. */
export function appendFaults(scenario: Scenario, faults: readonly FaultAction[]): string[] {
  const problems: string[] = [];
  const groups = scenario.groups.map((g) => g.name);
  const fleet = scenario.groups.reduce((n, g) => n + g.count, 0);
  for (const f of faults) {
    const where = `${f.action} at ${formatDuration(f.atMs)}`;
    if (f.group !== undefined && !groups.includes(f.group)) problems.push(`${where}: unknown group "${f.group}"; groups are ${groups.join(', ')}`);
    const outside = (f.devices ?? []).filter((d) => d >= fleet);
    if (outside.length > 0) problems.push(`${where}: device ${outside.join(', ')} is not in the fleet of ${fleet} devices`);
    if (f.atMs >= scenario.durationMs) problems.push(`${where}: at is at or after the end of the run (duration ${formatDuration(scenario.durationMs)})`);
  }
  if (problems.length === 0) scenario.timeline.push(...faults);
  return problems;
}
