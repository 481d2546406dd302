// Resident memory per device with the scenario's apps: the process RSS of an `evesim run` of N
// devices at steady state, beside a run of N/4 devices measured the same way in the same bench, so
// the fixed cost of the process (Node, code, pools, TLS contexts) cancels:
//
//   RSS per device = (RSS at N − RSS at N/4) / (N − N/4)
//
// Each run is its own process (one worker thread, `node --expose-gc`, so the sample follows a full
// GC) against one `evesim controller --sink` in a third process, which receives the scenario's fleet
// (groups, apps) through its admin API, so every device runs its apps as in the scenario. The RSS is
// sampled when the run phase ends, every device live, before the drain (ShardRunner.drainDevices);
// the live heap per device (heap + ArrayBuffers after GC) is printed beside it.
//
// Each run has the allocator `evesim run` chooses (jemalloc where the machine has it; run the bench
// with EVESIM_ALLOCATOR=system for glibc's malloc); the summary names it.
//
// With EVESIM_HEAP_SNAPSHOT=DIR each run writes its worker's heap snapshot at the sample, to
// DIR/N-devices/, and the bench prints the `heap-breakdown --baseline` command that compares them.
//
//   npm run build && node dist/bench/fleet-memory.js [--devices 4000] [--duration 150s] [--arrival-over 60s] [--max-in-flight N] [--log-memory 0]

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunSummary } from '../src/runner/summary-json.js';
import { checkBenchArgs, positiveIntArg, stringArg } from './bench-args.js';
import { machineDescription } from './machine.js';
import { sinkRunArgs, startSinkProcess, type SinkProcess } from './sink-process.js';

const USAGE = `fleet-memory: resident memory per device with the scenario's apps: RSS of a run of N devices against one of N/4.
  node dist/bench/fleet-memory.js [--devices 4000] [--duration 150s] [--arrival-over 60s] [--max-in-flight N] [--log-memory 0]`;
checkBenchArgs(USAGE, ['devices=', 'duration=', 'arrival-over=', 'max-in-flight=', 'log-memory=', 'scenario=']);

const devices = positiveIntArg('devices', 4000);
const duration = stringArg('duration', '150s');
const arrivalOver = stringArg('arrival-over', '60s');
const maxInFlight = stringArg('max-in-flight', '');
// --log-memory SIZE: passed to both runs (compressed log bytes each device holds in memory; 0: all on disk).
const logMemory = stringArg('log-memory', '');
const scenario = resolve(stringArg('scenario', 'scenarios/steady-state.yaml'));
const cli = fileURLToPath(new URL('../../bin/evesim.js', import.meta.url));
const dir = mkdtempSync(join(os.tmpdir(), 'evesim-fleet-memory-'));


interface RunFigures {
  devices: number;
  onboarded: number;
  rssMiB: number;
  heap: { heapTotal: number; heapUsed: number; external: number; arrayBuffers: number; newSpace: number };
  liveKiB: number | undefined;
  inFlight: number | undefined;
  queued: number | undefined;
  logsKeptKiB: number | undefined;
  logsInMemoryKiB: number | undefined;
  lagMs: number;
  /** In-flight peak and requests that waited for a slot (in-flight-gate.ts). */
  gate: string;
  requests: number;
  errors: number;
  /** Errors by kind (status or transport error), so one can be told from another. */
  byError: Record<string, number>;
  /** The malloc the run had (`evesim run` re-executes itself under jemalloc where the machine has it). */
  allocator: string;
}

/**
 * With EVESIM_HEAP_SNAPSHOT=DIR, each run writes its worker's snapshot to DIR/N-devices/ (one run's
 * would otherwise overwrite the other's), for `heap-breakdown LARGE --baseline SMALL`.
 */
function snapshotEnv(n: number): Record<string, string> {
  const root = process.env.EVESIM_HEAP_SNAPSHOT;
  if (!root) return {};
  const sub = join(root, `${n}-devices`);
  mkdirSync(sub, { recursive: true });
  return { EVESIM_HEAP_SNAPSHOT: sub };
}

/** One `evesim run` of n devices in its own process, one worker; its figures from the summary. */
function runFleet(n: number, ctl: SinkProcess): RunFigures {
  const summaryFile = join(dir, `summary-${n}.json`);
  const args = [
    '--expose-gc',
    cli,
    'run',
    scenario,
    '--devices', String(n),
    '--duration', duration,
    '--arrival-over', arrivalOver,
    '--graceful-stop', '0s',
    '--workers', '1',
    ...sinkRunArgs(ctl),
    // Its own identities and serials: the two fleets never meet in the controller's registry.
    '--state-dir', join(dir, `state-${n}`),
    '--fleet-id', `mem${n}`,
    '--metrics-linger', '0',
    '--summary-json', summaryFile,
    '--quiet',
    ...(maxInFlight !== '' ? ['--max-in-flight', maxInFlight] : []),
    ...(logMemory !== '' ? ['--log-memory', logMemory] : []),
  ];
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, env: { ...process.env, ...snapshotEnv(n) } });
  let s: RunSummary;
  try {
    s = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
  } catch {
    throw new Error(`the run of ${n} devices wrote no summary (exit ${r.status}): ${r.stderr.slice(-2000)}`);
  }
  const w = s.generator.workers[0]!;
  if (w.atSampleMiB === undefined) throw new Error(`the run of ${n} devices took no memory sample`);
  return {
    devices: s.devices.total,
    onboarded: s.devices.onboarded,
    rssMiB: w.atSampleMiB.rss,
    heap: w.atSampleMiB,
    liveKiB: w.settledKiBPerDevice,
    inFlight: w.atMemorySample?.inFlight,
    queued: w.atMemorySample?.queuedReliable,
    logsKeptKiB: w.atMemorySample?.logFilesKeptKiB,
    logsInMemoryKiB: w.atMemorySample?.logFilesInMemoryKiB,
    lagMs: w.eventLoopLagP99Ms,
    gate: w.inFlight ? `in flight peak ${w.inFlight.peak} of ${w.inFlight.maxInFlight}, ${w.inFlight.waited} waited for a slot` : 'no in-flight figures',
    requests: s.overall.count,
    errors: s.overall.errors,
    byError: { ...s.overall.byError },
    allocator: s.machine.allocator ?? 'not recorded',
  };
}

const ctl = await startSinkProcess(cli, join(dir, 'ctl'));
try {
  const small = runFleet(Math.max(1, Math.round(devices / 4)), ctl);
  const large = runFleet(devices, ctl);
  const perDeviceKiB = ((large.rssMiB - small.rssMiB) * 1024) / (large.devices - small.devices);
  console.log(`machine: ${machineDescription()}; the runs' allocator: ${small.allocator === large.allocator ? small.allocator : `${small.allocator} then ${large.allocator}`} (EVESIM_ALLOCATOR chooses)`);
  console.log(`scenario: ${scenario}, duration ${duration}, arrival over ${arrivalOver}, sink controller in its own process, one worker per run${logMemory !== '' ? `, --log-memory ${logMemory}` : ''}`);
  for (const f of [small, large]) {
    console.log(
      `  ${String(f.devices).padStart(6)} devices (${f.onboarded} onboarded): process RSS ${f.rssMiB.toFixed(1)} MiB at the sample ` +
        `(worker heap committed ${f.heap.heapTotal} MiB of which young generation ${f.heap.newSpace}, used ${f.heap.heapUsed}, external ${f.heap.external}, ArrayBuffers ${f.heap.arrayBuffers}), ` +
        `live heap ${f.liveKiB?.toFixed(1) ?? '?'} KiB/device, ${f.inFlight ?? '?'} in flight, ${f.queued ?? '?'} reliable messages queued (log files ${f.logsKeptKiB ?? '?'} KiB, ${f.logsInMemoryKiB ?? '?'} KiB of them in memory), ` +
        `lag p99 ${f.lagMs} ms, ${f.gate}, ${f.requests} requests, ${f.errors} errors${f.errors > 0 ? ` (${Object.entries(f.byError).map(([k, n]) => `${k} ×${n}`).join(', ')})` : ''}`,
    );
  }
  const grownKiB = (k: 'heapTotal' | 'heapUsed' | 'external' | 'newSpace') => ((large.heap[k] - small.heap[k]) * 1024) / (large.devices - small.devices);
  const grown = (k: 'heapTotal' | 'heapUsed' | 'external' | 'newSpace') => grownKiB(k).toFixed(1);
  console.log(
    `growth per device: worker heap committed ${grown('heapTotal')} KiB (young generation ${grown('newSpace')} KiB of it), used ${grown('heapUsed')} KiB, external ${grown('external')} KiB`,
  );
  // The young generation grows with the allocation rate until it reaches V8's maximum (a fixed cost
  // per worker, 48 MiB at Node 20's defaults); at small fleets it has not, so it is shown apart.
  const youngKiB = grownKiB('newSpace');
  console.log(
    `RSS growth per device: ${perDeviceKiB.toFixed(1)} KiB  ((${large.rssMiB.toFixed(1)} − ${small.rssMiB.toFixed(1)}) MiB / ${large.devices - small.devices} devices), ` +
      `${(perDeviceKiB - youngKiB).toFixed(1)} KiB without the young generation's growth; goal ≤ 16 KiB`,
  );
  // How far V8 had grown its heap beyond the live objects at the sample moves the RSS by several KiB
  // per device between runs of the same code (bench/README.md); without that free committed space
  // the figure is steadier. It still counts every byte the devices hold, in the heap or not.
  const slackKiB = grownKiB('heapTotal') - grownKiB('heapUsed');
  console.log(
    `RSS growth per device without the heap's free committed space: ${(perDeviceKiB - slackKiB).toFixed(1)} KiB ` +
      `(the worker heap's committed-but-unused space grew ${slackKiB.toFixed(1)} KiB per device); the rest, not heap or external: ` +
      `${(perDeviceKiB - grownKiB('heapTotal') - grownKiB('external')).toFixed(1)} KiB`,
  );
  const snapshots = process.env.EVESIM_HEAP_SNAPSHOT;
  if (snapshots) {
    const at = (n: number) => join(snapshots, `${n}-devices`, 'worker-0.heapsnapshot');
    console.log(`heap snapshots: node --max-old-space-size=8000 dist/bench/heap-breakdown.js ${at(large.devices)} --baseline ${at(small.devices)} --by-owner`);
  }
} finally {
  await ctl.stop();
  rmSync(dir, { recursive: true, force: true });
}
