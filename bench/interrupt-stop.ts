// How long Ctrl-C takes: an `evesim run` of N devices against `evesim controller --sink` in another
// process gets SIGINT once its run phase is --after old, and the bench prints the time from the
// signal to the process's exit (every device stopped, the figures merged, the report printed), with
// what the run counted undelivered. With the defaults (20,000 devices on one worker, arriving over
// 120 s) the worker is still overloaded by onboarding when the signal comes, as a user who stops a
// run that went wrong would find it. --baseline-repo DIR runs another checkout's bin/evesim.js the
// same way first, in the same invocation (before/after), round by round.
//
//   npm run build && node dist/bench/interrupt-stop.js [--devices 20000] [--workers 1] [--arrival-over 120s] [--after 200s] [--rounds 1] [--baseline-repo DIR]

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunSummary } from '../src/runner/summary-json.js';
import { parseDuration } from '../src/scenario/parse-duration.js';
import { checkBenchArgs, optionalStringArg, positiveIntArg, stringArg } from './bench-args.js';
import { machineDescription } from './machine.js';
import { sinkRunArgs, startSinkProcess, type SinkProcess } from './sink-process.js';

const USAGE = `interrupt-stop: time from Ctrl-C (SIGINT) to exit of an evesim run against the sink controller in another process.
  node dist/bench/interrupt-stop.js [--devices 20000] [--workers 1] [--arrival-over 120s] [--after 200s] [--rounds 1] [--scenario scenarios/steady-state.yaml] [--baseline-repo DIR]`;
checkBenchArgs(USAGE, ['devices=', 'workers=', 'arrival-over=', 'after=', 'rounds=', 'scenario=', 'baseline-repo=']);

const devices = positiveIntArg('devices', 20_000);
const workers = positiveIntArg('workers', 1);
const arrivalOver = stringArg('arrival-over', '120s');
const afterMs = parseDuration(stringArg('after', '200s'));
const rounds = positiveIntArg('rounds', 1);
const scenario = resolve(stringArg('scenario', 'scenarios/steady-state.yaml'));
const cli = fileURLToPath(new URL('../../bin/evesim.js', import.meta.url));
const baselineArg = optionalStringArg('baseline-repo');
const baselineCli = baselineArg === undefined ? undefined : join(resolve(baselineArg), 'bin', 'evesim.js');
if (baselineCli && !existsSync(baselineCli)) throw new Error(`--baseline-repo ${baselineArg}: no bin/evesim.js there`);
const dir = mkdtempSync(join(os.tmpdir(), 'evesim-interrupt-stop-'));



interface StopFigures {
  /** Run phase elapsed when the signal went, from the progress line (10 s granularity). */
  signalledAtS: number;
  stopS: number;
  exitCode: number | null;
  onboarded: number;
  undelivered: RunSummary['undelivered'];
}

/** One run of `bin`, interrupted once its progress line shows `afterMs` of run phase. */
async function interruptedRun(bin: string, label: string, sink: SinkProcess): Promise<StopFigures> {
  const summaryFile = join(dir, `summary-${label}.json`);
  const args = [
    bin, 'run', scenario,
    '--devices', String(devices),
    '--workers', String(workers),
    '--duration', `${Math.ceil(afterMs / 60_000) + 10}m`,
    '--arrival-over', arrivalOver,
    '--tick', '50ms',
    ...sinkRunArgs(sink),
    '--state-dir', join(dir, `state-${label}`),
    '--fleet-id', `stop${label}`,
    '--summary-json', summaryFile,
    '--metrics-linger', '0',
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let signalledAt: number | undefined;
  let signalledAtS = 0;
  const exited = new Promise<{ code: number | null; at: number }>((r) => child.once('exit', (code) => r({ code, at: performance.now() })));
  const watch = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
    if (signalledAt !== undefined) return;
    // The progress line: "3:29/13:00  onboarded …" (printed every 10 s when not on a terminal).
    for (const m of out.matchAll(/^(\d+):(\d\d)\/\d+:\d\d /gm)) {
      const s = Number(m[1]) * 60 + Number(m[2]);
      if (s * 1000 >= afterMs) {
        signalledAt = performance.now();
        signalledAtS = s;
        child.kill('SIGINT');
        return;
      }
    }
  };
  child.stdout.on('data', watch);
  child.stderr.on('data', watch);
  const { code, at } = await exited;
  if (signalledAt === undefined) throw new Error(`${label}: the run ended before its run phase reached ${afterMs / 1000} s: ${out.slice(-2000)}`);
  let s: RunSummary;
  try {
    s = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
  } catch {
    throw new Error(`${label}: the interrupted run wrote no summary (exit ${code}): ${out.slice(-2000)}`);
  }
  return { signalledAtS, stopS: (at - signalledAt) / 1000, exitCode: code, onboarded: s.devices.onboarded, undelivered: s.undelivered };
}

function line(name: string, f: StopFigures): string {
  const u = f.undelivered;
  return (
    `  ${name.padEnd(14)} SIGINT at ${f.signalledAtS} s of run phase (${f.onboarded} of ${devices} onboarded): exited ${f.stopS.toFixed(2)} s later (exit ${f.exitCode}); ` +
    `undelivered info ${u.info}, log files ${u.logs}, flow logs ${u.flowlog}`
  );
}

console.log(`machine: ${machineDescription()}`);
console.log(
  `scenario: ${scenario}, ${devices} devices on ${workers} worker(s), arriving over ${arrivalOver}, --tick 50ms, sink controller in its own process; SIGINT once the run phase is ${afterMs / 1000} s old`,
);
const sink = await startSinkProcess(cli, join(dir, 'ctl'));
try {
  for (let round = 1; round <= rounds; round++) {
    const base = baselineCli ? await interruptedRun(baselineCli, `baseline${round}`, sink) : undefined;
    const mine = await interruptedRun(cli, `this${round}`, sink);
    console.log(`round ${round}:`);
    if (base) console.log(line('baseline', base));
    console.log(line('this checkout', mine));
    if (base) console.log(`  time to stop, this checkout / baseline: ${(mine.stopS / base.stopS).toFixed(2)}`);
  }
} finally {
  await sink.stop();
  rmSync(dir, { recursive: true, force: true });
}
