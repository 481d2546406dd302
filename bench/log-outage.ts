// Log keeping through a controller outage: N devices' log uploaders (the real LogUploader, log
// generator and packing; a stand-in sender that gets no answer while the controller is down) on a
// simulated clock: 5 minutes up, a 10-minute outage, then the end-of-run drain. It prints the
// worker's live heap before and after the outage (after a forced GC, so run with --expose-gc), the
// log bytes kept, how many of them were in memory and in the spill file, and the files lost.
//
//   npm run build && node --expose-gc dist/bench/log-outage.js [--devices 2000] [--lines-per-sec 10] [--spill on|off]
//
// --spill off holds every kept file in memory (what a device without a spill store does), to
// show what the spill saves.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { DeviceOptions } from '../src/device/device-options.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import type { DeviceSender } from '../src/device/sender/device-sender.js';
import { DeviceStats } from '../src/device/sender/device-stats.js';
import { LogGenerator } from '../src/device/telemetry/log-generator.js';
import { LogUploader, type LogHost } from '../src/device/telemetry/log-uploader.js';
import { DeviceCounters } from '../src/device/telemetry/metrics-builder.js';
import { LOG_MEMORY_BUDGET_BYTES } from '../src/device/telemetry/log-spill-port.js';
import { LogSpillFile } from '../src/fleet/log-spill-file.js';
import { checkBenchArgs, positiveIntArg, stringArg } from './bench-args.js';
import { machineDescription } from './machine.js';
import { SimTime } from './sim-time.js';

const USAGE = `log-outage: log keeping through a controller outage: the uploaders' heap and log bytes kept in memory and in the spill file.
  node --expose-gc dist/bench/log-outage.js [--devices 2000] [--lines-per-sec 10] [--spill on|off]`;
checkBenchArgs(USAGE, ['devices=', 'lines-per-sec=', 'spill=']);

const devices = positiveIntArg('devices', 2000);
const linesPerSec = positiveIntArg('lines-per-sec', 10);
const spillMode = stringArg('spill', 'on');
if (spillMode !== 'on' && spillMode !== 'off') throw new Error(`--spill needs on or off, got ${spillMode}`);
const gc = (globalThis as { gc?: () => void }).gc;
if (typeof gc !== 'function') console.error('log-outage: run with node --expose-gc for live-heap figures');

const time = new SimTime(1_780_000_000_000);
const dir = mkdtempSync(join(os.tmpdir(), 'evesim-log-outage-'));
const spill = spillMode === 'on' ? new LogSpillFile(dir, 0) : undefined;
let controllerDown = false;
let delivered = 0;
const sender = {
  post: async () => {
    if (controllerDown) return undefined; // no answer
    delivered++;
    return { status: 201, headers: {}, body: new Uint8Array(0) };
  },
} as unknown as DeviceSender;

const uploaders: LogUploader[] = [];
const tallies: DeviceStats[] = [];
for (let i = 0; i < devices; i++) {
  const rng = SeededRng.create(1, i, 'device');
  const opts = {
    index: i,
    behaviour: { eveVersion: '14.5.2-kvm-amd64', logFormat: 'newlogs', logLinesPerSec: linesPerSec, flowlogIntervalMs: 120_000, preRegistered: false, appStepMs: 1000, hardware: { ncpu: 4, memoryMB: 8192, storageMB: 65536, model: 'bench', manufacturer: 'evesim' } },
    clock: time,
    scheduler: time.scheduler,
    rng,
    ...(spill ? { logSpill: spill } : {}),
  } as unknown as DeviceOptions;
  const tally = new DeviceStats();
  const host: LogHost = {
    opts,
    sender,
    tally,
    counters: new DeviceCounters(rng, { storageMB: 65536 }, time.t),
    generator: new LogGenerator(i, '14.5.2-kvm-amd64', time.t),
    uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    generation: 0,
    fastUpload: false,
    runningLogApps: () => [],
    finding: () => {},
    guard: (fn) => {
      const r = fn();
      if (r) r.catch((e: unknown) => console.error('log-outage: uploader error', e));
    },
  };
  const u = new LogUploader(host);
  u.start(time.t + (i % 90) * 1000); // devices' upload ticks spread over the first 90 s
  uploaders.push(u);
  tallies.push(tally);
}

/** Live JS heap plus ArrayBuffer memory (log file bytes live in the latter), after a forced GC. */
const heapMiB = (): number => {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return (m.heapUsed + m.arrayBuffers) / 2 ** 20;
};
const kept = () => uploaders.reduce((a, u) => ({ bytes: a.bytes + u.pendingBytes, memory: a.memory + u.memoryBytes, files: a.files + u.pendingFiles }), { bytes: 0, memory: 0, files: 0 });

const wallStart = Date.now();
const t0 = time.t;
await time.runUntil(t0 + 5 * 60_000);
const before = { heap: heapMiB(), kept: kept() };
controllerDown = true;
await time.runUntil(t0 + 15 * 60_000);
const after = { heap: heapMiB(), kept: kept(), spill: spill?.figures() };
controllerDown = false;
const deliveredBeforeDrain = delivered;
for (const u of uploaders) u.drain(time.t);
// The drain retries quickly and needs no ticks while uploads succeed: settle until nothing is left.
for (let i = 0; i < 100_000 && uploaders.some((u) => u.pendingFiles > 0); i++) await time.runUntil(time.t + 500);
for (const u of uploaders) u.stop(time.t);
const lost = tallies.reduce((a, t) => a + t.undeliveredLogs, 0);
const dropped = tallies.reduce((a, t) => a + t.droppedByQuotaLogs, 0);
spill?.close();
rmSync(dir, { recursive: true, force: true });

const mib = (b: number) => (b / 2 ** 20).toFixed(1);
console.log(`machine: ${machineDescription()}`);
console.log(`run: ${devices} devices, ${linesPerSec} log lines/s each, 5 min up, 10 min controller outage, spill ${spillMode}; ${((Date.now() - wallStart) / 1000).toFixed(0)} s wall`);
console.log(`heap + ArrayBuffers before the outage: ${before.heap.toFixed(1)} MiB (log files kept ${mib(before.kept.bytes)} MiB, ${before.kept.files} files)`);
console.log(
  `heap + ArrayBuffers at the end of the outage: ${after.heap.toFixed(1)} MiB (+${(((after.heap - before.heap) * 2 ** 20) / devices / 1024).toFixed(1)} KiB per device); ` +
    `log files kept ${mib(after.kept.bytes)} MiB in ${after.kept.files} files, ${mib(after.kept.memory)} MiB of them in memory ` +
    `(budget ${LOG_MEMORY_BUDGET_BYTES / 1024} KiB per device)` +
    (after.spill ? `, spill file ${mib(after.spill.diskBytes)} MiB in ${after.spill.segments} segments` : ''),
);
console.log(`after the outage: ${delivered - deliveredBeforeDrain} files delivered by the drain; lost (undelivered) ${lost}, dropped by the quota ${dropped}`);
