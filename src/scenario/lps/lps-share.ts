// Which devices of a group a site serves when it serves only a share of them: decided by the
// device's serial, so the controller (which puts the LPS address into the configuration) and the
// runner (which sends the group's commands to the LPS) pick the same devices without talking.

import { createHash } from 'node:crypto';

/** True when the device with this serial belongs to the first `share` (0..1] of its group. */
export function inLpsShare(serial: string, share: number): boolean {
  if (share >= 1) return true;
  const h = createHash('sha256').update(`evesim-lps-share/${serial}`).digest();
  return h.readUInt32BE(0) / 4294967296 < share;
}
