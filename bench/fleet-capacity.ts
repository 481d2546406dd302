// Fleet-capacity benchmark: what the generator itself costs per device at EVE's default timers, and
// the largest fleet this machine carries with worker event-loop lag p99 under 100 ms.
//
//   npm run build && node dist/bench/fleet-capacity.js [--sizes 2000,5000,10000] [--duration 7m]
//   node dist/bench/fleet-capacity.js --find-max [--sizes 10000] [--lag-limit 100ms]
//   node dist/bench/fleet-capacity.js --sizes 10000 --baseline-repo ../evesim-before   (before/after, same run)
//   node dist/bench/fleet-capacity.js --sizes 5000,5000 --baseline-node-options="--max-semi-space-size=64"
//   node dist/bench/fleet-capacity.js --sizes 32000 --baseline-env EVESIM_HEAP_GROWING_PERCENT=0   (V8's own heap growth first)
//   node dist/bench/fleet-capacity.js --sizes 13000 --workers 1 --trace-gc   (GC per worker thread, gc-trace.ts)
//   node dist/bench/fleet-capacity.js --sizes 10000 --controller verified   (the verifying controller's CPU per request at the fleet's mix)
//
// The controller is `evesim controller --sink` in a child process (or, with `--controller verified`,
// `evesim controller`, which verifies every request and signs every answer; its own state directory and
// free ports, so it neither shares the generator's CPU figures nor a port with another controller);
// each fleet size is one `evesim run --controller … --controller-admin …` in another child process,
// so the scenario's groups and apps reach the controller as in an embedded run. In a before/after
// pair each run gets a fresh controller process (see freshController). The generator's CPU
// (utime + stime, every thread) and RSS are read from /proc/<pid> every few seconds; the figures are
// taken over the steady-state window only: from when every device is onboarded plus a settling
// margin, to the end of the run phase (onboarding and the drain left out; fleet-capacity-figures.ts
// has the sums). Identities stay in one state directory, so a larger size creates only the new ones
// and a second invocation with --dir only loads them.

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, openSync, closeSync, readdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { planAllocator } from '../src/cli/allocator-plan.js';
import { parseDuration } from '../src/scenario/parse-duration.js';
import type { RunSummary } from '../src/runner/summary-json.js';
import { checkBenchArgs, envAssignmentsArg, hasArg, optionalStringArg, positiveIntArg, stringArg } from './bench-args.js';
import { machineDescription } from './machine.js';
import { signedRequestFloorUs } from './signed-request-floor.js';
import {
  cpuSecondsAt,
  procStatTimes,
  defaultArrivalOverMs,
  lagInWindow,
  largestGood,
  nextFindMaxSize,
  requestsInWindow,
  rssBytesFromProcStatus,
  inWindow,
  rssGrowthPerDevice,
  rssInWindow,
  sizeFigures,
  steadyWindow,
  type ProcSample,
  type SizeFigures,
  type Step,
  type WindowLag,
} from './fleet-capacity-figures.js';
import { summarizeProfile, wallWindow, type Profile } from './cpu-profile-summary.js';
import { describeGc, longLived, summariseGc, type IsolateGc } from './gc-trace.js';
import { describeSecond, readThreadSample, windowThreads, type ThreadSample, type WindowThreads } from './thread-schedule.js';

const USAGE = `fleet-capacity: generator CPU and RSS per device at EVE's default timers, and the largest fleet with worker lag p99 under --lag-limit.
  node dist/bench/fleet-capacity.js [--sizes 2000,5000,10000] [--duration 7m]
  node dist/bench/fleet-capacity.js --find-max [--sizes 10000] [--lag-limit 100ms]
  node dist/bench/fleet-capacity.js --sizes 10000 --baseline-repo ../evesim-before   (before/after, same run)
  node dist/bench/fleet-capacity.js --sizes 5000,5000 --baseline-node-options="--max-semi-space-size=64"
  node dist/bench/fleet-capacity.js --sizes 32000 --baseline-env EVESIM_HEAP_GROWING_PERCENT=0   (V8's own heap growth first)
  node dist/bench/fleet-capacity.js --sizes 13000 --workers 1 --trace-gc   (GC per worker thread, gc-trace.ts)
  node dist/bench/fleet-capacity.js --sizes 10000 --controller verified   (the verifying controller's CPU per request at the fleet's mix)
  node dist/bench/fleet-capacity.js --sizes 10000 --controller verified --controller-cpu-prof DIR   (and where its time goes in the steady window)`;
checkBenchArgs(USAGE, [
  'find-max',
  'trace-gc',
  'sizes=',
  'scenario=',
  'duration=',
  'arrival-over=',
  'settle=',
  'min-window=',
  'sample-every=',
  'lag-limit=',
  'factor=',
  'max-devices=',
  'workers=',
  'verify-sample=',
  'controller=',
  'controller-cpu-prof=',
  'baseline-node-options=',
  'baseline-env=',
  'tick=',
  'baseline-tick=',
  'baseline-repo=',
  'dir=',
]);

// dist/bench/fleet-capacity.js when compiled: the repository is two levels up.
const root = [fileURLToPath(new URL('../../', import.meta.url)), fileURLToPath(new URL('../', import.meta.url))].find((d) => existsSync(join(d, 'bin', 'evesim.js')))!;
const cli = join(root, 'bin', 'evesim.js');
const RESERVED_PORTS = new Set([8443, 8444, 8445]);
// The allocator `evesim run` would choose for itself (EVESIM_ALLOCATOR, default: jemalloc where the
// machine has it), preloaded here instead, so the generator is the process this bench starts and
// reads /proc of, and a baseline checkout runs on the same allocator.
const allocatorPlan = planAllocator({ args: ['run'], execArgv: [], env: process.env, platform: process.platform, arch: process.arch, exists: existsSync });
if (allocatorPlan.action === 'fail') throw new Error(allocatorPlan.message);
const generatorEnv: NodeJS.ProcessEnv = allocatorPlan.action === 'reexec' ? allocatorPlan.env : process.env;
const allocatorNote = allocatorPlan.action === 'reexec' ? `jemalloc preloaded (${allocatorPlan.library})` : /jemalloc/.test(process.env.LD_PRELOAD ?? '') ? `LD_PRELOAD=${process.env.LD_PRELOAD}` : "the system's malloc";

const findMax = hasArg('find-max');
// --trace-gc: the generator runs under `node --trace-gc`; its log is read back for each worker
// thread's GC (gc-trace.ts), over the second half of the worker's life (the steady state).
const traceGc = hasArg('trace-gc');
const sizes = stringArg('sizes', findMax ? '5000' : '2000,5000,10000')
  .split(',')
  .map((s) => {
    const n = Number(s.trim());
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--sizes needs positive integers separated by commas, got "${s}"`);
    return n;
  });
const scenarioFile = resolve(stringArg('scenario', join(root, 'scenarios', 'steady-state.yaml')));
// 7 minutes: steady-state.yaml changes timer.metric.interval at 7 m, which would change the load
// inside the window; the run drops that action with a warning.
const durationMs = parseDuration(stringArg('duration', '7m'));
const arrivalOverText = optionalStringArg('arrival-over');
const arrivalOverArg = arrivalOverText === undefined ? undefined : parseDuration(arrivalOverText);
const settleMs = parseDuration(stringArg('settle', '1m'));
const minWindowMs = parseDuration(stringArg('min-window', '2m'));
const sampleEveryMs = parseDuration(stringArg('sample-every', '2s'));
// Threads are read more often than the process: a second's stall is set beside that second's run-queue waits.
const THREAD_SAMPLE_MS = 250;
const lagLimitMs = parseDuration(stringArg('lag-limit', '100ms'));
const factor = Number(stringArg('factor', '1.5'));
const maxDevices = positiveIntArg('max-devices', 200_000);
const workers = hasArg('workers') ? positiveIntArg('workers', 1) : undefined;
const verifySample = stringArg('verify-sample', '1%');
// --controller sink (the default: precomputed signed answers, a sample of signatures verified) or
// verified (every signature verified, every answer built and signed: the controller's own cost per
// request at the fleet's mix of requests, the figure issue 11's controller goal is stated in).
const controllerMode = stringArg('controller', 'sink');
if (controllerMode !== 'sink' && controllerMode !== 'verified') throw new Error(`--controller must be sink or verified, got "${controllerMode}"`);
// --controller-cpu-prof DIR: the controller runs under `node --cpu-prof`; when it exits, its profile
// is summarised over each size's steady window only (onboarding and the drain left out).
const controllerProfDir = optionalStringArg('controller-cpu-prof');
if (controllerProfDir !== undefined) mkdirSync(resolve(controllerProfDir), { recursive: true });
const controllerText = controllerMode === 'sink' ? `evesim controller --sink (verifies ${verifySample})` : 'evesim controller (verifies every request, signs every answer)';
// Another checkout of evesim (built) whose generator runs each size too, just before this one's,
// against the same controller: a before/after comparison measured in the same run.
// --baseline-node-options alone: this checkout again with other Node/V8 options (a GC setting, say).
const baselineNodeOptions = optionalStringArg('baseline-node-options');
// --baseline-env NAME=value[,NAME=value]: this checkout again (unless --baseline-repo) with those
// environment variables set for the baseline's generator (EVESIM_HEAP_GROWING_PERCENT=0, say).
const baselineEnv = envAssignmentsArg('baseline-env');
const baselineEnvText = Object.entries(baselineEnv).map(([k, v]) => `${k}=${v}`).join(' ');
// --tick D: this checkout's generator runs with `--tick D`; --baseline-tick D: the baseline's does
// (alone: this checkout again, so the pair shows what the tick does; 0 for exact times).
const tick = optionalStringArg('tick');
const baselineTick = optionalStringArg('baseline-tick');
const baselineRepoArg = optionalStringArg('baseline-repo');
const baselineRepo = baselineRepoArg !== undefined ? resolve(baselineRepoArg) : baselineNodeOptions !== undefined || baselineTick !== undefined || baselineEnvText !== '' ? root : undefined;
const baselineCli = baselineRepo ? join(baselineRepo, 'bin', 'evesim.js') : undefined;
if (baselineCli && !existsSync(baselineCli)) throw new Error(`--baseline-repo ${baselineRepo}: no bin/evesim.js there`);
if (baselineRepo && findMax) throw new Error('--baseline-repo compares given --sizes; it does not go with --find-max');
const dir = resolve(stringArg('dir', mkdtempSync(join(os.tmpdir(), 'evesim-capacity-'))));
mkdirSync(dir, { recursive: true });
if (!(factor > 1)) throw new Error(`--factor must be above 1, got ${factor}`);
/** The child processes running now, ended with the bench on Ctrl-C or SIGTERM. */
const children = new Set<ChildProcess>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const c of children) c.kill('SIGTERM');
    console.error(`\nfleet-capacity: ${signal}: stopped the generator and the controller; what was measured is in ${dir}`);
    process.exit(130);
  });
}
const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

interface SizeResult {
  devices: number;
  /** 'baseline' for the --baseline-repo generator, absent for this checkout's. */
  generator?: 'baseline';
  exitCode: number | null;
  arrivalOverMs: number;
  figures?: SizeFigures;
  lag?: WindowLag;
  rssMeanBytes?: number;
  rssPeakBytes?: number;
  controllerCpuPerRequestUs?: number;
  /** The generator's system (kernel) time ÷ its CPU time over the window. */
  kernelShare?: number;
  onboardedAtS?: number;
  window?: { fromS: number; toS: number };
  problem?: string;
  /** --trace-gc: the fleet workers' GC (the process's main thread left out). */
  gc?: IsolateGc[];
  /** Which threads had the cores in the window's seconds (thread-schedule.ts). */
  threads?: WindowThreads;
  /** The signed-request floor, µs of client CPU (signed-request-floor.ts), measured just before
   *  the run and just after it (the instance's speed moved within minutes: 90 and 112 µs). */
  floorUs?: { before: number; after?: number };
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => res(port));
    });
  });
}

async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) {
    const p = await freePort();
    if (!RESERVED_PORTS.has(p)) ports.add(p);
  }
  return [...ports];
}

function readProc(pid: number): ProcSample | undefined {
  try {
    const atMs = Date.now();
    const t = procStatTimes(readFileSync(`/proc/${pid}/stat`, 'utf8'), clockTicks);
    return {
      atMs,
      cpuS: t.userS + t.systemS,
      systemS: t.systemS,
      rssBytes: rssBytesFromProcStatus(readFileSync(`/proc/${pid}/status`, 'utf8')),
    };
  } catch {
    return undefined; // the process has exited
  }
}

/** Samples the processes every `sampleEveryMs` until stopped. */
function sampler(pids: number[]): { samples: ProcSample[][]; stop: () => void } {
  const samples = pids.map(() => [] as ProcSample[]);
  const take = () =>
    pids.forEach((pid, i) => {
      const s = readProc(pid);
      if (s) samples[i]!.push(s);
    });
  take();
  const t = setInterval(take, sampleEveryMs);
  return {
    samples,
    stop: () => {
      take();
      clearInterval(t);
    },
  };
}

interface Controller {
  child: ChildProcess;
  url: string;
  adminUrl: string;
  rootCa: string;
  onboardCert: string;
  onboardKey: string;
  /** The steady windows of the runs it served (wall clock), for --controller-cpu-prof. */
  windows: { label: string; fromWallMs: number; toWallMs: number }[];
  /** When the process was spawned (wall clock): where its profile's clock starts. */
  spawnedWallMs: number;
}

async function startController(): Promise<Controller> {
  const [port, v1Port, adminPort] = await freePorts(3);
  const mode = controllerMode === 'sink' ? ['--sink', '--verify-sample', verifySample] : [];
  const prof = controllerProfDir !== undefined ? ['--cpu-prof', '--cpu-prof-dir', resolve(controllerProfDir)] : [];
  const args = [...prof, cli, 'controller', ...mode, '--port', String(port), '--v1-port', String(v1Port), '--admin-port', String(adminPort), '--state-dir', join(dir, 'controller')];
  const spawnedWallMs = Date.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 60_000;
  const need = [/listening on (https:\/\/\S+)/, /admin API on (http:\/\/\S+)/, /root CA for devices: (\S+)/, /--onboard-cert (\S+) --onboard-key (\S+)/, ...(controllerMode === 'sink' ? [/SINK MODE/] : [])];
  while (!need.every((re) => re.test(out))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`evesim controller did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const m = (re: RegExp) => re.exec(out)!;
  return { child, url: m(need[0]!)[1]!, adminUrl: m(need[1]!)[1]!, rootCa: m(need[2]!)[1]!, onboardCert: m(need[3]!)[1]!, onboardKey: m(need[3]!)[2]!, windows: [], spawnedWallMs };
}

/** One size; a size whose figures cannot be had is reported with the reason, and the others go on. */
async function measureSize(ctl: Controller, devices: number, baseline = false): Promise<SizeResult> {
  try {
    return await runSize(ctl, devices, baseline);
  } catch (e) {
    return { devices, ...(baseline ? { generator: 'baseline' as const } : {}), exitCode: null, arrivalOverMs: 0, problem: (e as Error).message };
  }
}

/** `--tick D` for the generator, nothing for exact times (0) or when not given. */
function tickArgs(t: string | undefined): string[] {
  return t === undefined || /^0+(ms|s)?$/.test(t) ? [] : ['--tick', t];
}

async function runSize(ctl: Controller, devices: number, baseline: boolean): Promise<SizeResult> {
  // The instance's speed of the moment, against the same controller: the runs of one 2-core
  // instance moved by a fifth from hour to hour (the sink's CPU per request with them), so a
  // figure is read beside the floor of its own run, not beside another day's.
  const floorBeforeUs = await signedRequestFloorUs(ctl.url, ctl.rootCa, { rounds: 7 });
  const arrivalOverMs = arrivalOverArg ?? defaultArrivalOverMs(devices, durationMs);
  const tag = baseline ? `${devices}-baseline` : `${devices}`;
  const summaryFile = join(dir, `summary-${tag}.json`);
  const ticked = tickArgs(baseline ? baselineTick : tick);
  const args = [
    baseline ? baselineCli! : cli, 'run', scenarioFile,
    '--controller', ctl.url, '--controller-admin', ctl.adminUrl,
    '--root-ca', ctl.rootCa, '--onboard-cert', ctl.onboardCert, '--onboard-key', ctl.onboardKey,
    '--devices', String(devices), '--duration', `${durationMs}ms`, '--arrival-over', `${arrivalOverMs}ms`,
    '--state-dir', join(dir, baseline ? 'generator-baseline' : 'generator'), '--summary-json', summaryFile, '--metrics-linger', '0', '--quiet',
    ...(workers ? ['--workers', String(workers)] : []),
    ...ticked,
  ];
  const log = openSync(join(dir, `run-${tag}.log`), 'w');
  const tickNote = ticked.length > 0 ? `, ${ticked.join(' ')}` : '';
  console.log(`\n${devices} devices${baseline ? ` with the baseline generator (${baselineRepo}${baselineNodeOptions !== undefined ? `, NODE_OPTIONS ${baselineNodeOptions}` : ''}${baselineEnvText !== '' ? `, ${baselineEnvText}` : ''}${tickNote})` : tickNote}: arriving over ${(arrivalOverMs / 1000).toFixed(0)} s, ${(durationMs / 1000).toFixed(0)} s run (log: ${join(dir, `run-${tag}.log`)})`);
  const env = !baseline
    ? generatorEnv
    : {
        ...generatorEnv,
        ...baselineEnv,
        ...(baselineNodeOptions !== undefined ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${baselineNodeOptions}`.trim() } : {}),
      };
  const gen = spawn(process.execPath, traceGc ? ['--trace-gc', ...args] : args, { stdio: ['ignore', log, log], env });
  children.add(gen);
  gen.once('exit', () => children.delete(gen));
  const s = sampler([gen.pid!, ctl.child.pid!]);
  const threadSamples: ThreadSample[] = [];
  const takeThreads = () => {
    const t = readThreadSample(gen.pid!);
    if (t) threadSamples.push(t);
  };
  const threadTimer = setInterval(takeThreads, THREAD_SAMPLE_MS);
  const exitCode = await new Promise<number | null>((res) => gen.once('exit', (code) => res(code)));
  s.stop();
  clearInterval(threadTimer);
  closeSync(log);
  // After the run the controller may be gone (the run's problem is reported below); the floor before stands alone then.
  await new Promise((r) => setTimeout(r, 3000)); // the generator's exit and the controller's last writes settle first
  const floorAfterUs = await signedRequestFloorUs(ctl.url, ctl.rootCa, { rounds: 7 }).catch(() => undefined);
  const floorUs = { before: floorBeforeUs, ...(floorAfterUs !== undefined ? { after: floorAfterUs } : {}) };
  const [genSamples, ctlSamples] = s.samples as [ProcSample[], ProcSample[]];
  // The main thread prints first; the long-lived isolates after it are the fleet workers.
  const gc = traceGc ? longLived(summariseGc(readFileSync(join(dir, `run-${tag}.log`), 'utf8'), 0.5)).slice(1) : undefined;
  const result: SizeResult = { devices, ...(baseline ? { generator: 'baseline' as const } : {}), exitCode, arrivalOverMs, floorUs, ...(gc ? { gc } : {}) };
  if (exitCode === 2 || !existsSync(summaryFile)) return { ...result, problem: `the run exited ${exitCode} without a summary (see the log)` };
  const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
  const startMs = Date.parse(summary.startedAt);
  const lastSampleMs = (genSamples[genSamples.length - 1]?.atMs ?? startMs) - startMs;
  const steady = steadyWindow(summary.series?.intervals ?? [], devices, settleMs, minWindowMs, lastSampleMs);
  if ('none' in steady) return { ...result, problem: steady.none };
  const { window: w } = steady;
  const at = (ms: number) => startMs + ms;
  ctl.windows.push({ label: `${tag} devices`, fromWallMs: at(w.fromMs), toWallMs: at(w.toMs) });
  const cpuS = cpuSecondsAt(genSamples, at(w.toMs)) - cpuSecondsAt(genSamples, at(w.fromMs));
  const systemS = cpuSecondsAt(genSamples, at(w.toMs), 'systemS') - cpuSecondsAt(genSamples, at(w.fromMs), 'systemS');
  const requests = requestsInWindow(summary.series!.intervals, w);
  const ctlCpuS = cpuSecondsAt(ctlSamples, at(w.toMs)) - cpuSecondsAt(ctlSamples, at(w.fromMs));
  const rss = rssInWindow(genSamples, at(w.fromMs), at(w.toMs));
  const lag = lagInWindow(summary.series!.intervals, w);
  const threads = windowThreads(threadSamples, gen.pid!, inWindow(summary.series!.intervals, w), startMs);
  return {
    ...result,
    ...(threads ? { threads } : {}),
    figures: sizeFigures(devices, w, cpuS, requests),
    ...(cpuS > 0 ? { kernelShare: systemS / cpuS } : {}),
    ...(lag ? { lag } : {}),
    ...(rss ? { rssMeanBytes: rss.meanBytes, rssPeakBytes: rss.peakBytes } : {}),
    ...(requests > 0 ? { controllerCpuPerRequestUs: (ctlCpuS * 1e6) / requests } : {}),
    onboardedAtS: steady.onboardedAtMs / 1000,
    window: { fromS: w.fromMs / 1000, toS: w.toMs / 1000 },
  };
}

const MiB = 2 ** 20;
/** The floor a run's CPU per request is divided by: the lower of the one before it and the one
 *  after (whatever else runs only adds to a floor; single floors here moved between 63 and 122 µs). */
const floorOfRunUs = (f: { before: number; after?: number }) => (f.after === undefined ? f.before : Math.min(f.before, f.after));
const f1 = (v: number | undefined, d = 1) => (v === undefined || Number.isNaN(v) ? '—' : v.toFixed(d));

function printSize(r: SizeResult): void {
  if (r.problem) {
    console.log(`  ${r.devices} devices${r.generator ? ` (${r.generator})` : ''}: no steady-state figures: ${r.problem}`);
    printGc(r);
    return;
  }
  const f = r.figures!;
  console.log(
    `  ${r.devices} devices${r.generator ? ` (${r.generator})` : ''} (exit ${r.exitCode}): all onboarded at ${f1(r.onboardedAtS, 0)} s; steady window ${f1(r.window!.fromS, 0)}–${f1(r.window!.toS, 0)} s: ` +
      `${f.requests} requests, generator ${f.cpuS.toFixed(1)} CPU-s; ${f.cpuPerDeviceMinuteMs.toFixed(2)} ms CPU per device-minute, ` +
      `${f.requestsPerDeviceMinute.toFixed(2)} requests per device-minute, ${f.cpuPerRequestUs.toFixed(0)} µs CPU per request` +
      `${r.floorUs !== undefined ? ` (${(f.cpuPerRequestUs / floorOfRunUs(r.floorUs)).toFixed(2)} × the floor, ${r.floorUs.before.toFixed(0)} µs before the run and ${f1(r.floorUs.after, 0)} after)` : ''}` +
      `${r.kernelShare !== undefined ? ` (${(r.kernelShare * 100).toFixed(0)} % of it in the kernel)` : ''}; ` +
      `loop lag p99 worst interval ${f1(r.lag?.worstMs)} ms (95 % of intervals ≤ ${f1(r.lag?.typicalMs)} ms); ` +
      `longest stall ${r.lag ? `${f1(r.lag.longestStall.ms)} ms (worker ${r.lag.longestStall.worker}, second ending at ${f1(r.lag.longestStall.atS, 0)} s)` : '—'}; RSS ${f1((r.rssMeanBytes ?? NaN) / MiB)} MiB; ` +
      `controller ${f1(r.controllerCpuPerRequestUs, 0)} µs CPU per request`,
  );
  printThreads(r);
  printGc(r);
}

function printThreads(r: SizeResult): void {
  const t = r.threads;
  if (!t) return;
  console.log(
    `    threads over the window's ${t.seconds} s: median second, the workers waited for a core up to ${t.medianWorkerWaitMs.toFixed(0)} ms and background threads (V8's GC and compiler, libuv, Node) ran ${t.medianBackgroundRunMs.toFixed(0)} ms`,
  );
  console.log(`    worst stall's ${describeSecond(t.worstStall)}`);
  if (t.longestWait !== t.worstStall) console.log(`    longest wait's ${describeSecond(t.longestWait)}`);
}

function printGc(r: SizeResult): void {
  if (!r.gc) return;
  if (r.gc.length === 0) console.log('    --trace-gc: no worker thread traced in the log');
  r.gc.forEach((g, i) => console.log(`    ${describeGc(g, `worker thread ${i}, second half of its life`)}`));
}

function printTable(results: SizeResult[]): void {
  const ok = results.filter((r) => r.figures).sort((a, b) => a.devices - b.devices);
  if (ok.length === 0) return;
  const base = ok[0]!;
  console.log(`\n| figure | ${ok.map((r) => `${r.devices.toLocaleString('en')} devices`).join(' | ')} |`);
  console.log(`|---|${ok.map(() => '---').join('|')}|`);
  const row = (name: string, cell: (r: SizeResult, i: number) => string) => console.log(`| ${name} | ${ok.map(cell).join(' | ')} |`);
  row('generator CPU per device-minute', (r) => `${r.figures!.cpuPerDeviceMinuteMs.toFixed(2)} ms`);
  row(`… relative to ${base.devices.toLocaleString('en')} devices`, (r) => `${(r.figures!.cpuPerDeviceMinuteMs / base.figures!.cpuPerDeviceMinuteMs).toFixed(2)}`);
  row('requests per device-minute', (r) => r.figures!.requestsPerDeviceMinute.toFixed(2));
  row('generator CPU per request', (r) => `${r.figures!.cpuPerRequestUs.toFixed(0)} µs`);
  row('… × the floor (one sign + a bare GET over kept-alive TLS; the lower of one just before the run and one just after)', (r) =>
    r.floorUs === undefined ? '—' : `${(r.figures!.cpuPerRequestUs / floorOfRunUs(r.floorUs)).toFixed(2)} (floor ${r.floorUs.before.toFixed(0)} / ${f1(r.floorUs.after, 0)} µs)`,
  );
  row('… of it in the kernel (system time; on loopback it includes the receiver side of each write)', (r) => (r.kernelShare === undefined ? '—' : `${(r.kernelShare * 100).toFixed(0)} %`));
  row('worker loop lag p99 (worst 1 s interval / 95 % of intervals)', (r) => `${f1(r.lag?.worstMs)} / ${f1(r.lag?.typicalMs)} ms`);
  row('longest single worker stall in the window', (r) => `${f1(r.lag?.longestStall.ms)} ms`);
  row('generator RSS (mean in the window)', (r) => `${f1((r.rssMeanBytes ?? NaN) / MiB, 0)} MiB`);
  row('RSS growth per device from the previous size', (r, i) =>
    i === 0 || ok[i - 1]!.rssMeanBytes === undefined || r.rssMeanBytes === undefined
      ? '—'
      : `${(rssGrowthPerDevice({ devices: ok[i - 1]!.devices, rssBytes: ok[i - 1]!.rssMeanBytes! }, { devices: r.devices, rssBytes: r.rssMeanBytes }) / 1024).toFixed(1)} KiB`,
  );
  row(`controller (${controllerMode}) CPU per request`, (r) => `${f1(r.controllerCpuPerRequestUs, 0)} µs`);
}

console.log(`machine: ${machineDescription()}; generator allocator: ${allocatorNote}`);
console.log(`scenario ${scenarioFile}; controller: ${controllerText} in its own process; state and logs in ${dir}`);
let ctl = await startController();
// Once, discarded: this process's first floor came out about a third above the next (103 against
// 68 µs), its crypto and undici paths still warming, which would flatter the first run's multiple.
await signedRequestFloorUs(ctl.url, ctl.rootCa, { rounds: 7 });
/**
 * A fresh controller process (same state directory: same PKI, same registered devices) for the
 * next run of a before/after pair. Against one long-lived sink the second run of a pair came out
 * worse whatever it ran: the same checkout twice gave a worst loop-lag second of 70.7 then
 * 148.1 ms, and the sink 92 then 99 µs per request (2026-11-28).
 */
async function freshController(): Promise<void> {
  await stopController(ctl);
  ctl = await startController();
}

/** Ends a controller process; with --controller-cpu-prof, prints where its time went in each steady window it served. */
async function stopController(c: Controller): Promise<void> {
  const child = c.child;
  const exited = child.exitCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  children.delete(child);
  if (controllerProfDir === undefined || c.windows.length === 0) return;
  const profDir = resolve(controllerProfDir);
  // node --cpu-prof names its file CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile') && f.split('.')[3] === String(child.pid));
  if (!file) {
    console.log(`  controller profile: no profile of pid ${child.pid} in ${profDir} (did it exit cleanly?)`);
    return;
  }
  const prof = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as Profile;
  for (const w of c.windows) {
    console.log(`\n  the controller's CPU profile (${join(profDir, file)}) over the steady window of the ${w.label} run:`);
    for (const line of summarizeProfile(prof, 25, wallWindow(prof, c.spawnedWallMs, w.fromWallMs, w.toWallMs))) console.log(`  ${line}`);
  }
}
const results: SizeResult[] = [];
const baselines: SizeResult[] = [];
try {
  if (!findMax) {
    for (const [i, n] of sizes.entries()) {
      if (baselineRepo) {
        if (i > 0) await freshController();
        const b = await measureSize(ctl, n, true);
        baselines.push(b);
        printSize(b);
        await freshController();
      }
      const r = await measureSize(ctl, n);
      results.push(r);
      printSize(r);
    }
  } else {
    const steps: Step[] = [];
    let n: number | undefined = sizes[0]!;
    while (n !== undefined) {
      const r = await measureSize(ctl, n);
      results.push(r);
      printSize(r);
      // A size without a steady window (the fleet never onboarded in time) did not hold either.
      steps.push({ devices: n, ok: r.lag !== undefined && r.lag.worstMs < lagLimitMs });
      n = nextFindMaxSize(steps, factor, 0.1, maxDevices);
    }
    const best = largestGood(steps);
    console.log(
      best === undefined
        ? `\nfind-max: no fleet size held worker loop lag p99 under ${lagLimitMs} ms in its steady window (smallest tried ${Math.min(...steps.map((s) => s.devices))})`
        : `\nfind-max: the largest fleet with worker loop lag p99 under ${lagLimitMs} ms in every 1 s interval of its steady window: ${best} devices ` +
            `(tried ${steps.map((s) => `${s.devices}${s.ok ? '✓' : '✗'}`).join(', ')})` +
            (best === maxDevices ? `; that is the --max-devices limit, so the machine may carry more` : ''),
    );
  }
  if (baselineRepo) {
    console.log(`\nthe baseline generator (${baselineRepo}), each size run just before this checkout's:`);
    printTable(baselines);
    console.log('\nthis checkout:');
    for (const r of results) {
      const b = baselines.find((x) => x.devices === r.devices);
      if (r.figures && b?.figures) console.log(`  ${r.devices} devices: CPU per device-minute ${r.figures.cpuPerDeviceMinuteMs.toFixed(2)} ms against the baseline's ${b.figures.cpuPerDeviceMinuteMs.toFixed(2)} ms (ratio ${(r.figures.cpuPerDeviceMinuteMs / b.figures.cpuPerDeviceMinuteMs).toFixed(2)}); × the floor ${r.floorUs ? (r.figures.cpuPerRequestUs / floorOfRunUs(r.floorUs)).toFixed(2) : '—'} against ${b.floorUs ? (b.figures.cpuPerRequestUs / floorOfRunUs(b.floorUs)).toFixed(2) : '—'}`);
    }
  }
  printTable(results);
  writeFileSync(join(dir, 'fleet-capacity.json'), JSON.stringify({ machine: machineDescription(), scenarioFile, controller: controllerText, durationMs, settleMs, results, ...(baselineRepo ? { baselineRepo, baselines } : {}) }, null, 2));
  console.log(`\nfigures as JSON: ${join(dir, 'fleet-capacity.json')}`);
} finally {
  await stopController(ctl);
}
