// `evesim run --dry-run`: the scenario and flags checked as for a run (bad input: exit 2), then this
// shard's fleet plan printed (devices, groups, workers, the serials it would use) and exit 0.
// Nothing is written and nothing started: no identities, no fleet id file, no servers, no network.

import { join } from 'node:path';
import { plannedDevices } from '../fleet/fleet-plan.js';
import { describeShard } from '../fleet/fleet-shard.js';
import { FLEET_ID_FILE } from '../identity/fleet-id.js';
import type { RunInputs } from './phases/prepare-fleet.js';
import type { RunScenarioResult } from './run-options.js';

export function printDryRun(inputs: RunInputs): RunScenarioResult {
  const { scenario, plan, opts, out } = inputs;
  const lines: string[] = [];
  lines.push(`evesim: dry run of "${scenario.name}" (${scenario.file})`);
  const idSource = opts.fleetId !== undefined ? '--fleet-id' : join(inputs.stateDir, FLEET_ID_FILE);
  lines.push(
    inputs.fleetId !== undefined
      ? `  seed ${scenario.seed}, fleet id ${inputs.fleetId} (${idSource})`
      : `  seed ${scenario.seed}, fleet id not made yet (the first run makes one in ${idSource})`,
  );
  const w = plan.workers.length;
  lines.push(`  shard ${describeShard(plan.shard)}: ${plan.shardDevices} of ${plan.fleetDevices} devices, on ${w} worker${w === 1 ? '' : 's'}`);
  lines.push(`  groups: ${plan.groups.map((g) => `${g.name} ${g.devices}`).join(', ')}`);
  lines.push(`  target: ${inputs.external ? inputs.external.url : 'embedded controller'}`);
  lines.push(`  start: ${inputs.startAtMs !== undefined ? new Date(inputs.startAtMs).toISOString() : 'as soon as the workers are ready'}`);
  if (inputs.fleetId !== undefined && plan.shardDevices > 0) {
    const devices = plannedDevices(scenario, plan, inputs.fleetId).sort((a, b) => a.index - b.index);
    const first = devices[0]!;
    const last = devices[devices.length - 1]!;
    lines.push(`  serials: device ${first.index} ${first.serial} … device ${last.index} ${last.serial}`);
  }
  lines.push('  nothing started: no identities made, no servers, no network');
  out(lines.join('\n') + '\n');
  return { exitCode: 0 };
}
