// A register answered 409 Conflict for most devices: the controller already knows these serials
// with other device certificates. The usual cause is a second generator with the same fleet id or
// seed (the serials come from the seed and the fleet id: identity/fleet-id.ts), or a state
// directory that was wiped while the controller kept its registry. Said in the report and the
// summary JSON, since the status count alone ("register 409 ×600") does not say why.

import type { EndpointStats } from './endpoint-stats.js';

export interface RegisterConflicts {
  /** /register answers with 409 over the run. */
  conflicts: number;
  devices: number;
  /** The likely cause, in words. */
  cause: string;
}

/** Most devices: at least this share of the fleet's device count in 409 answers. */
export const CONFLICT_SHARE = 0.5;

export const LIKELY_CAUSE =
  'the controller already knows these serials: another generator with the same fleet id or seed? ' +
  '(each state directory makes its own fleet id unless --fleet-id is given; shards of one fleet share one on purpose)';

export function registerConflicts(run: { endpoints: Record<string, EndpointStats>; devices: { total: number } }): RegisterConflicts | undefined {
  const conflicts = run.endpoints.register?.byStatus['409'] ?? 0;
  const devices = run.devices.total;
  if (devices === 0 || conflicts < devices * CONFLICT_SHARE) return undefined;
  return { conflicts, devices, cause: LIKELY_CAUSE };
}

/** The report's line for it. */
export function registerConflictLine(c: RegisterConflicts): string {
  return `conflicts    register answered 409 ×${c.conflicts} for ${c.devices} devices: ${c.cause}`;
}
