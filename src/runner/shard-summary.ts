// What the summary JSON says about the part of the fleet a run covered (`evesim run --shard i/n`):
// which shard, its devices and the fleet's, and the fleet id its serials were made with. A run
// without --shard is shard 0 of 1. `devices.total` and the thresholds are the shard's.

import type { FleetShard } from '../fleet/fleet-shard.js';

export interface ShardSummary {
  shard: FleetShard & {
    /** Devices this shard ran (the same as devices.total). */
    devices: number;
    /** Devices of the whole fleet, all shards together. */
    fleetDevices: number;
    /** The fleet id the serials were made with (identity/fleet-id.ts). */
    fleetId: string;
  };
}
