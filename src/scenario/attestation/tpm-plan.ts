// Which devices of a group have a TPM and which of those boot tampered. Exact counts, spread evenly
// over the group's positions (not random), so a scenario's thresholds can name exact outcomes and
// the same positions get the same role on every run and in every shard split:
//   TPM devices      = round(tpmShare × count)
//   tampered devices = the count given (at most the TPM devices), or round(share × TPM devices)
// Position p of n is picked out of k when floor((p+1)·k/n) > floor(p·k/n) (Bresenham spreading).

import type { GroupSpec } from '../scenario-types.js';

export type DeviceTpmRole = 'none' | 'tpm' | 'tampered';

export interface GroupTpmPlan {
  tpmDevices: number;
  tamperedDevices: number;
}

export function groupTpmPlan(g: Pick<GroupSpec, 'count' | 'tpmShare' | 'tampered'>): GroupTpmPlan {
  const tpmDevices = Math.round((g.tpmShare ?? 0) * g.count);
  let tamperedDevices = 0;
  if (g.tampered && 'count' in g.tampered) tamperedDevices = Math.min(g.tampered.count, tpmDevices);
  else if (g.tampered) tamperedDevices = Math.round(g.tampered.share * tpmDevices);
  return { tpmDevices, tamperedDevices };
}

/** Rank of position `p` among the `k` picked out of `n`, or -1 when it is not picked. */
function pickedRank(p: number, k: number, n: number): number {
  if (k <= 0 || n <= 0) return -1;
  const before = Math.floor((p * k) / n);
  const after = Math.floor(((p + 1) * k) / n);
  return after > before ? before : -1;
}

/** The role of the device at `position` (0-based, within its group). */
export function deviceTpmRole(g: Pick<GroupSpec, 'count' | 'tpmShare' | 'tampered'>, position: number, plan = groupTpmPlan(g)): DeviceTpmRole {
  const rank = pickedRank(position, plan.tpmDevices, g.count);
  if (rank < 0) return 'none';
  return pickedRank(rank, plan.tamperedDevices, plan.tpmDevices) >= 0 ? 'tampered' : 'tpm';
}

/** "20%" → 0.2; undefined when the text is not a percentage. */
export function parsePercent(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(text);
  return m ? Number(m[1]) / 100 : undefined;
}
