// Per-device thresholds of one shard (`evesim run --shard i/n`): the bound counts the devices of the
// basis that this shard runs, so `register.count >= 1 per device` asks each shard for its own
// devices and the shards' bounds add up to the whole fleet's. TPM bases count the shard's devices
// of that TPM role (tpm-plan.ts decides the role by position in the group, whatever the split).

import { devicesInShard, type FleetShard } from '../fleet/fleet-shard.js';
import { deviceTpmRole, groupTpmPlan } from '../scenario/attestation/tpm-plan.js';
import type { Scenario } from '../scenario/scenario-types.js';
import { basisDevices, type GroupCounts } from '../scenario/threshold-basis.js';

/** Sets the device count of every per-device threshold to the shard's devices of its basis. */
export function resolveShardThresholdBases(scenario: Pick<Scenario, 'groups' | 'thresholds'>, shard: FleetShard): void {
  if (shard.count === 1) return; // the loader's whole-fleet counts stand
  const counts = shardGroupCounts(scenario.groups, shard);
  for (const t of scenario.thresholds) {
    if (t.perDevice) t.perDevice.devices = basisDevices(scenario.groups, t.perDevice, t.api, (_g, i) => counts[i]!);
  }
}

/** Per group (file order): the shard's devices, those with a TPM and those booting tampered. */
export function shardGroupCounts(groups: Scenario['groups'], shard: FleetShard): GroupCounts[] {
  let start = 0;
  return groups.map((g) => {
    const plan = groupTpmPlan(g);
    const counts: GroupCounts = { total: devicesInShard(start, g.count, shard), tpm: 0, tampered: 0 };
    if (plan.tpmDevices > 0) {
      // First position p of the group whose fleet index start + p is in the shard.
      const n = shard.count;
      for (let p = (((shard.index - start) % n) + n) % n; p < g.count; p += n) {
        const role = deviceTpmRole(g, p, plan);
        if (role !== 'none') counts.tpm++;
        if (role === 'tampered') counts.tampered++;
      }
    }
    start += g.count;
    return counts;
  });
}
