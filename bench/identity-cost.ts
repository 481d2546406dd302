// What a device identity costs a run: creating one (four P-256 keys, four certificates, a record in
// a batch file) the first time a seed is used, and loading it back on later runs.
//
//   npm run build && node dist/bench/identity-cost.js [--devices 500]

import os from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { FleetIdentityStore } from '../src/identity/fleet-identity-store.js';
import { checkBenchArgs, positiveIntArg } from './bench-args.js';
import { machineDescription } from './machine.js';

const USAGE = `identity-cost: what a device identity costs a run: created (in memory, with state files) and loaded back.
  node dist/bench/identity-cost.js [--devices 500]`;
checkBenchArgs(USAGE, ['devices=']);

const n = positiveIntArg('devices', 500);
const dir = mkdtempSync(join(os.tmpdir(), 'evesim-identity-cost-'));
try {
  FleetIdentityStore.open({ seed: 'warm' }).devices(0, 20); // JIT warm-up
  const time = (f: () => void): number => {
    const t = performance.now();
    f();
    return (performance.now() - t) / n;
  };
  const inMemory = time(() => FleetIdentityStore.open({ seed: 'mem' }).devices(0, n));
  const created = time(() => FleetIdentityStore.open({ seed: 'disk', stateDir: dir }).devices(0, n));
  const loaded = time(() => FleetIdentityStore.open({ seed: 'disk', stateDir: dir }).devices(0, n));
  console.log(`machine: ${machineDescription()}`);
  console.log(`${n} devices: create ${inMemory.toFixed(2)} ms/device in memory, ${created.toFixed(2)} ms/device with state files; load ${loaded.toFixed(2)} ms/device`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
