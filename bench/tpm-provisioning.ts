// What a TPM device's identity material costs a run, first run (made) and second run (loaded), and
// what making it does to the event loop:
//   - device identity (4 P-256 keys, onboarding, device, attestation and ECDH certificates);
//   - RSA-2048 EK + EK certificate, made the way the shard's prepare step makes them
//     (provisionTpms: EkStore.ekAsync on libuv's thread pool, EK_CONCURRENCY at a time), against
//     generating the EKs synchronously on the event loop;
//   - a second run loading both from the state directory.
// Event-loop blocking is the longest gap seen by a 1 ms interval timer while the work runs.
//
//   npx tsc -p tsconfig.json && node dist/bench/tpm-provisioning.js [--devices 16]

import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EK_CONCURRENCY, provisionTpms } from '../src/fleet/tpm-provisioning.js';
import { FleetIdentityStore } from '../src/identity/fleet-identity-store.js';
import { checkBenchArgs, positiveIntArg } from './bench-args.js';
import { machineDescription } from './machine.js';

const USAGE = `tpm-provisioning: what a TPM device's identity material costs a run, made and loaded, and what making it does to the event loop.
  node dist/bench/tpm-provisioning.js [--devices 16]`;
checkBenchArgs(USAGE, ['devices=']);

/** Runs `work` while a 1 ms timer watches the loop; the longest gap between its ticks, ms. */
async function withLoopWatch<T>(work: () => Promise<T> | T): Promise<{ result: T; maxGapMs: number; wallMs: number }> {
  let last = performance.now();
  let maxGap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 1);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, 5));
  last = performance.now();
  const result = await work();
  const wallMs = performance.now() - t0 - 5;
  await new Promise((r) => setTimeout(r, 5));
  clearInterval(timer);
  return { result, maxGapMs: maxGap, wallMs };
}

const N = positiveIntArg('devices', 16);
const f1 = (x: number) => x.toFixed(1);

console.log('# TPM device identity material: first run and second run');
console.log(`machine: ${machineDescription()}`);
console.log(`${N} devices; UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}`);

const stateDir = mkdtempSync(join(tmpdir(), 'evesim-bench-prov-'));
try {
  // Device identities (every device has one, TPM or not).
  const store = FleetIdentityStore.open({ stateDir, seed: 'bench' });
  const ids = await withLoopWatch(() => Array.from({ length: N }, (_, i) => store.device(i)));
  console.log(`\ndevice identity, first run: ${f1(ids.wallMs / N)} ms per device (wall, on the event loop)`);
  const again = FleetIdentityStore.open({ stateDir, seed: 'bench' });
  const idLoad = await withLoopWatch(() => Array.from({ length: N }, (_, i) => again.device(i)));
  console.log(`device identity, second run: ${f1((idLoad.wallMs * 1000) / N)} µs per device`);
  const requests = ids.result.map((d, index) => ({ index, deviceCertPem: d.deviceCertPem, deviceKey: d.deviceKey }));

  // EKs the way the runner makes them: thread pool, EK_CONCURRENCY at a time.
  const first = await withLoopWatch(() => provisionTpms({ stateDir, seed: 'bench', devices: requests }));
  const s = first.result.stats;
  console.log(
    `\nEK + EK certificate, first run (thread pool, ${EK_CONCURRENCY} at a time): ${f1(first.wallMs / N)} ms wall per device ` +
      `(${f1(s.ekGenerateMs / s.ekCreated)} ms per key as each generation saw it); event loop blocked at most ${f1(first.maxGapMs)} ms`,
  );
  const second = await withLoopWatch(() => provisionTpms({ stateDir, seed: 'bench', devices: requests }));
  console.log(
    `EK + EK certificate, second run: ${f1((second.wallMs * 1000) / N)} µs per device (loaded ${second.result.stats.ekLoaded} EKs, ${second.result.stats.certsLoaded} certificates)`,
  );

  // The same keys generated synchronously: each blocks the loop for its whole duration.
  // (one key per turn of the loop, so the longest block is one key's generation)
  const sync = await withLoopWatch(async () => {
    for (let i = 0; i < N; i++) {
      generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65537 });
      await new Promise((r) => setImmediate(r));
    }
  });
  console.log(`RSA-2048 generated synchronously on the event loop: ${f1(sync.wallMs / N)} ms per key; event loop blocked up to ${f1(sync.maxGapMs)} ms at a time`);
  for (const c of [1, 4]) {
    const dir = mkdtempSync(join(tmpdir(), 'evesim-bench-prov-c-'));
    try {
      const r = await withLoopWatch(() => provisionTpms({ stateDir: dir, seed: 'bench', devices: requests, concurrency: c }));
      console.log(`thread pool, ${c} at a time: ${f1(r.wallMs / N)} ms wall per device; event loop blocked at most ${f1(r.maxGapMs)} ms`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
} finally {
  rmSync(stateDir, { recursive: true, force: true });
}
