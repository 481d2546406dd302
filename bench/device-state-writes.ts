// What a device's write to the fleet's state store (src/fleet/device-state-store.ts) costs the
// generator's CPU in an onboarding storm, where devices learn their UUIDs one or two at a time over
// many event-loop turns: the store as it commits now (puts wait up to WRITE_DELAY_MS to share a
// transaction) beside lmdb's default (a transaction per event-loop turn, what the store did before
// 2026-11-28), and beside the same pacing with no puts at all (the floor the figures subtract).
//
//   npm run build && node dist/bench/device-state-writes.js [--puts 3000] [--threads 2] [--rounds 3]
//
// Each variant runs `--threads` worker threads (as a run's workers share one store), each putting
// `--puts` records one per timer turn (about one per millisecond, the pace of 1,000 devices a
// worker onboarding within a few seconds), then closing the store (so every commit is counted).
// CPU is the process's, every thread (lmdb commits and syncs on threads of its own). The variants
// alternate, `--rounds` times, so a drifting machine touches all of them alike.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { open } from 'lmdb';
import { DeviceStateStore } from '../src/fleet/device-state-store.js';
import type { DeviceDiskState } from '../src/device/lifecycle/device-disk-state.js';
import { checkBenchArgs, positiveIntArg } from './bench-args.js';
import { machineDescription } from './machine.js';

const USAGE = `device-state-writes: generator CPU per write to the fleet's device state store in an onboarding storm, batched against lmdb's default.
  node dist/bench/device-state-writes.js [--puts 3000] [--threads 2] [--rounds 3]`;

type Variant = 'no puts' | 'per turn (lmdb default)' | 'store (batched)';
const VARIANTS: readonly Variant[] = ['no puts', 'per turn (lmdb default)', 'store (batched)'];
const ROOT_CA = '-----BEGIN CERTIFICATE-----\nbench\n-----END CERTIFICATE-----\n';

interface Job {
  variant: Variant;
  dir: string;
  thread: number;
  threads: number;
  puts: number;
}

const record = (i: number): DeviceDiskState => ({ v: 1, uuid: `6f2a3c1e-0000-4000-8000-${String(i).padStart(12, '0')}`, restartCounter: 0, lastRebootReason: 'BOOT_REASON_FIRST_BOOT' });

async function threadMain(job: Job): Promise<void> {
  const { variant, dir, thread, threads, puts } = job;
  let put: (index: number) => void = () => {};
  let close = async (): Promise<void> => {};
  if (variant === 'store (batched)') {
    const store = DeviceStateStore.open({ stateDir: dir, seed: 1, rootCaPem: ROOT_CA });
    put = (i) => store.put(i, record(i));
    close = () => store.close();
  } else if (variant === 'per turn (lmdb default)') {
    const db = open<DeviceDiskState, string>({ path: join(dir, 'per-turn'), compression: false });
    put = (i) => void db.put(`c/${i}`, record(i));
    close = async () => {
      await db.flushed;
      await db.close();
    };
  }
  let k = 0;
  await new Promise<void>((resolve) => {
    const step = (): void => {
      put(thread + k * threads);
      if (++k < puts) setTimeout(step, 1);
      else resolve();
    };
    step();
  });
  await close();
}

async function runVariant(variant: Variant, threads: number, puts: number): Promise<{ cpuMs: number; wallMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'evesim-device-state-writes-'));
  try {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: threads }, (_, thread) => {
        const job: Job = { variant, dir, thread, threads, puts };
        const w = new Worker(fileURLToPath(import.meta.url), { workerData: job });
        return new Promise<void>((resolve, reject) => {
          w.once('message', () => resolve());
          w.once('error', reject);
        }).finally(() => w.terminate());
      }),
    );
    const c = process.cpuUsage(c0);
    return { cpuMs: (c.user + c.system) / 1000, wallMs: performance.now() - t0 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (!isMainThread) {
  await threadMain(workerData as Job);
  parentPort!.postMessage('done');
} else {
  checkBenchArgs(USAGE, ['puts=', 'threads=', 'rounds=']);
  const puts = positiveIntArg('puts', 3000);
  const threads = positiveIntArg('threads', 2);
  const rounds = positiveIntArg('rounds', 3);
  console.log(`machine: ${machineDescription()}`);
  console.log(`${threads} threads × ${puts} puts, one per timer turn (~1 ms), ${rounds} rounds; process CPU (every thread) per variant:`);
  const cpu = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
  for (let r = 1; r <= rounds; r++) {
    const row: string[] = [];
    for (const v of VARIANTS) {
      const { cpuMs, wallMs } = await runVariant(v, threads, puts);
      cpu.get(v)!.push(cpuMs);
      row.push(`${v} ${cpuMs.toFixed(0)} ms CPU (${(wallMs / 1000).toFixed(1)} s)`);
    }
    console.log(`  round ${r}: ${row.join(', ')}`);
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const floor = median(cpu.get('no puts')!);
  const total = threads * puts;
  const perPut = (v: Variant): number => ((median(cpu.get(v)!) - floor) * 1000) / total;
  const before = perPut('per turn (lmdb default)');
  const after = perPut('store (batched)');
  console.log(`CPU per put above the no-put floor (medians): per turn ${before.toFixed(0)} µs, store ${after.toFixed(0)} µs (${(before / after).toFixed(1)} × less)`);
}
