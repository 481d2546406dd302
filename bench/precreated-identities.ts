// A bench fleet's identities, made and written before its runs the way the run's workers make their
// shards (worker i holds fleet indices i, i + w, ...), so the runs only load them: what identities
// cost is bench/identity-fleet.ts's figure, not the runs'.

import { join } from 'node:path';
import { FleetIdentityStore } from '../src/identity/fleet-identity-store.js';

/** The identities made in `root`/generator, with a line saying how long that took; returns that state directory. */
export function preparedFleetState(root: string, opts: { seed: number; fleetId: string; devices: number; workers: number }): string {
  const stateDir = join(root, 'generator');
  const t = performance.now();
  precreateIdentities(stateDir, opts);
  console.log(`identities: ${opts.devices} made before the runs in ${((performance.now() - t) / 1000).toFixed(1)} s (not measured)`);
  return stateDir;
}

export function precreateIdentities(stateDir: string, opts: { seed: number; fleetId: string; devices: number; workers: number }): void {
  const { seed, fleetId, devices: n, workers: w } = opts;
  FleetIdentityStore.open({ stateDir, seed, fleetId }).release();
  for (let i = 0; i < w; i++) {
    const shard = { first: i, stride: w, count: Math.floor(n / w) + (i < n % w ? 1 : 0) };
    const store = FleetIdentityStore.open({ stateDir, seed, fleetId, expect: shard });
    for (let k = 0; k < shard.count; k++) store.device(shard.first + k * shard.stride);
    store.release();
  }
}
