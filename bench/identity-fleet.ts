// What a fleet's identities cost a run: N new identities made the way `evesim run` makes them (one
// worker thread per core, each making its own shard into the state directory), then loaded back
// by the same workers as a second run does; beside it the cost of one identity on one thread
// against a baseline measured in the same run (one bare generateKeyPairSync P-256 + one sign).
//
//   npx tsc -p tsconfig.json && node dist/bench/identity-fleet.js [--devices 100000] [--workers <cores>]

import os from 'node:os';
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { FleetIdentityStore, type IndexProgression } from '../src/identity/fleet-identity-store.js';
import { checkBenchArgs, positiveIntArg } from './bench-args.js';
import { machineDescription } from './machine.js';

const USAGE = `identity-fleet: what a fleet's identities cost a run: made by one worker per core, then loaded back, against a bare key pair and sign.
  node dist/bench/identity-fleet.js [--devices 100000] [--workers <cores>]`;

interface ShardJob {
  stateDir: string;
  seed: string;
  shard: IndexProgression;
}

const SEED = 'identity-fleet';

if (!isMainThread) {
  // One worker: what ShardRunner.prepare does with the fleet state.
  const job = workerData as ShardJob;
  const t = performance.now();
  const store = FleetIdentityStore.open({ stateDir: job.stateDir, seed: job.seed, expect: job.shard });
  const ids = await store.shardAsync(job.shard);
  store.release();
  parentPort!.postMessage({ phase: 'ready', ms: performance.now() - t, stats: store.stats, devices: ids.length });
  // What the run pays later, when each device first signs: its device key object (made by the
  // load only when the identity is new). Timed after the pass's wall time was taken.
  const k = performance.now();
  for (const id of ids) void id.deviceKey;
  parentPort!.postMessage({ phase: 'keys', keyMs: performance.now() - k });
} else {
  await main();
}

async function main(): Promise<void> {
  checkBenchArgs(USAGE, ['devices=', 'workers=']);
  const n = positiveIntArg('devices', 100_000);
  const workers = positiveIntArg('workers', os.availableParallelism());
  const stateDir = mkdtempSync(join(os.tmpdir(), 'evesim-identity-fleet-'));
  try {
    console.log(`machine: ${machineDescription()} (shared with other jobs: the load average counts them)`);
    const { baseline, ours } = perIdentityCpu();
    console.log(
      `one identity on one thread: ${ours.toFixed(3)} ms CPU; baseline (one generateKeyPairSync P-256 + one sign) ${baseline.toFixed(3)} ms CPU; ratio ${(ours / baseline).toFixed(2)}`,
    );
    // The run's main thread makes the fleet CA before the workers start (prepare-fleet.ts).
    FleetIdentityStore.open({ stateDir, seed: SEED }).release();
    const create = await fleetPass(stateDir, n, workers);
    const bytes = readdirSync(join(stateDir)).length > 0 ? dirBytes(stateDir) : 0;
    const load = await fleetPass(stateDir, n, workers);
    const line = (what: string, p: FleetPass): string =>
      `${what} ${n} identities with ${workers} workers: ${(p.wallMs / 1000).toFixed(1)} s wall, ${((p.wallMs * workers) / n).toFixed(3)} ms per identity per worker ` +
      `(${(p.wallMs * workers / n / baseline).toFixed(2)} × baseline), process CPU ${(p.cpuMs / 1000).toFixed(1)} s (all threads); created ${p.created}, loaded ${p.loaded}`;
    console.log(line('create', create));
    console.log(line('load  ', load));
    console.log(
      `device key objects the load leaves to each device's first request: ${(load.keyMsPerWorker / 1000).toFixed(1)} s per worker, ` +
        `${((load.keyMsPerWorker * workers) / n).toFixed(3)} ms per identity`,
    );
    console.log(`state directory: ${(bytes / 2 ** 20).toFixed(1)} MiB, ${(bytes / n).toFixed(0)} bytes per identity`);
    if (create.created !== n || load.loaded !== n) throw new Error('the second pass did not load every identity the first made');
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

interface FleetPass {
  /** Until the last worker had its shard's identities (made and written, or loaded). */
  wallMs: number;
  /** Then making every device key object the load left for first use, the slowest worker. */
  keyMsPerWorker: number;
  cpuMs: number;
  created: number;
  loaded: number;
}

/** All workers' shards at once, as a run prepares them; wall time until the last is done. */
async function fleetPass(stateDir: string, n: number, workers: number): Promise<FleetPass> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  const keys: Promise<number>[] = [];
  const results = await Promise.all(
    Array.from({ length: workers }, (_, w) => {
      const shard: IndexProgression = { first: w, stride: workers, count: Math.floor(n / workers) + (w < n % workers ? 1 : 0) };
      const worker = new Worker(new URL(import.meta.url), { workerData: { stateDir, seed: SEED, shard } satisfies ShardJob });
      const ready = new Promise<{ stats: { created: number; loaded: number } }>((resolveReady, reject) => {
        let resolveKeys: (ms: number) => void = () => undefined;
        keys.push(new Promise<number>((r) => (resolveKeys = r)));
        worker.on('message', (m: { phase: string; keyMs?: number; stats?: { created: number; loaded: number } }) => {
          if (m.phase === 'ready') resolveReady(m as { stats: { created: number; loaded: number } });
          else resolveKeys(m.keyMs!);
        });
        worker.once('error', reject);
      });
      return ready;
    }),
  );
  const wallMs = performance.now() - t;
  const used = process.cpuUsage(cpu);
  const keyMs = await Promise.all(keys);
  return {
    wallMs,
    keyMsPerWorker: Math.max(...keyMs),
    cpuMs: (used.user + used.system) / 1000,
    created: results.reduce((s, r) => s + r.stats.created, 0),
    loaded: results.reduce((s, r) => s + r.stats.loaded, 0),
  };
}

/** CPU per in-memory identity against the baseline, alternating rounds, medians. */
function perIdentityCpu(): { baseline: number; ours: number } {
  const per = 300;
  const body = Buffer.alloc(400, 1);
  const cpuOf = (f: () => void): number => {
    const u = process.cpuUsage();
    for (let i = 0; i < per; i++) f();
    const d = process.cpuUsage(u);
    return (d.user + d.system) / 1000 / per;
  };
  const store = FleetIdentityStore.open({ seed: 'cpu' });
  let next = 0;
  const bases: number[] = [];
  const ours: number[] = [];
  cpuOf(() => store.device(next++)); // warm-up
  for (let round = 0; round < 5; round++) {
    bases.push(
      cpuOf(() => {
        // Key objects straight from the generator, signed with and never exported (exporting
        // them is what deadlocks Node 20, keys.ts).
        const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
        sign('sha256', body, privateKey);
      }),
    );
    ours.push(cpuOf(() => store.device(next++)));
    store.release();
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { baseline: median(bases), ours: median(ours) };
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    total += entry.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return total;
}
