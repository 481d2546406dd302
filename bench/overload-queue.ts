// What a fleet too big for its machine gets through: `evesim run` of a scenario (by default
// scenarios/fleet-100k.yaml, whole) against `evesim controller --sink` in another process, and the
// figures that tell a queue that degrades from one that collapses: devices onboarded, requests
// answered per second, timeouts in the workers' queue (never sent) against timeouts on the wire
// (each one took a pooled connection down), the TCP connections the sink accepted, and the
// requests the workers handed on newest first. --baseline-repo DIR runs another checkout's
// bin/evesim.js the same way first, in the same invocation, each run with its own sink, state
// directory and identities (--this-first runs this checkout first, to balance the order). A table
// minute by minute follows: a collapse shows as answers falling to nothing while errors climb.
// A scenario with faults also gets, per fault, the devices it hit and how many were current again
// after it (bench/scenarios/slow-controller.yaml: a controller 4 s slower for two minutes).
//
//   npm run build && node dist/bench/overload-queue.js [--scenario scenarios/fleet-100k.yaml] [--devices N] [--workers N] [--duration 10m] [--arrival-over 5m] [--baseline-repo DIR [--this-first]]

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunSummary } from '../src/runner/summary-json.js';
import { checkBenchArgs, hasArg, optionalStringArg, stringArg } from './bench-args.js';
import { machineDescription } from './machine.js';
import { median } from './median.js';
import { sinkRunArgs, startSinkProcess } from './sink-process.js';

const USAGE = `overload-queue: what an overloaded fleet gets through against the sink controller in another process.
  node dist/bench/overload-queue.js [--scenario scenarios/fleet-100k.yaml] [--devices N] [--workers N] [--duration D] [--arrival-over D] [--baseline-repo DIR [--this-first]]`;
checkBenchArgs(USAGE, ['scenario=', 'devices=', 'workers=', 'duration=', 'arrival-over=', 'baseline-repo=', 'this-first']);

const scenario = resolve(stringArg('scenario', 'scenarios/fleet-100k.yaml'));
// The scenario's own fleet, length and arrival unless given.
const overrides = Object.entries({
  devices: optionalStringArg('devices'),
  workers: optionalStringArg('workers'),
  duration: optionalStringArg('duration'),
  'arrival-over': optionalStringArg('arrival-over'),
}).flatMap(([name, v]) => (v === undefined ? [] : [`--${name}`, v]));
const cli = fileURLToPath(new URL('../../bin/evesim.js', import.meta.url));
const baselineArg = optionalStringArg('baseline-repo');
const baselineCli = baselineArg === undefined ? undefined : join(resolve(baselineArg), 'bin', 'evesim.js');
if (baselineCli && !existsSync(baselineCli)) throw new Error(`--baseline-repo ${baselineArg}: no bin/evesim.js there`);
const thisFirst = hasArg('this-first');
const dir = mkdtempSync(join(os.tmpdir(), 'evesim-overload-queue-'));

interface OverloadFigures {
  devices: number;
  onboarded: number;
  thresholdsPassed: number;
  thresholds: number;
  runS: number;
  requests: number;
  answered: number;
  timeouts: number;
  timedOutWaiting: number;
  handedOnNewestFirst: number;
  worstWaitS: number;
  /** TCP connections the sink's device API accepted over the run. */
  connectionsOpened: number;
  worstLoopLagP99Ms: number;
  generatorCpuPercent: number;
  undelivered: number;
  /** Peak RSS of the generator process, bytes (0 where the summary has none). */
  rssPeakBytes: number;
  /** The thresholds that failed, as the scenario writes them, with what was measured. */
  failedThresholds: string[];
  /** Per fault of the scenario: devices hit, how many were current again after it, and the last one's time after its end. */
  faults: { kind: string; params?: string; devicesHit: number; recovered?: number; recoveryS?: number }[];
  /** Minute by minute: requests answered and failed per second, devices onboarded at its end. */
  minutes: { phase: string; answeredPerS: number; errorsPerS: number; onboarded: number; configP50S: number | undefined }[];
}

/** The summary's intervals gathered into minutes. */
function byMinute(s: RunSummary): OverloadFigures['minutes'] {
  const minutes: (Omit<OverloadFigures['minutes'][number], 'configP50S'> & { seconds: number; configP50s: number[] })[] = [];
  for (const iv of s.series?.intervals ?? []) {
    const m = (minutes[Math.floor(iv.tMs / 60_000)] ??= { phase: iv.phase, answeredPerS: 0, errorsPerS: 0, onboarded: 0, seconds: 0, configP50s: [] });
    for (const e of Object.values(iv.endpoints)) {
      m.answeredPerS += e.requests - e.errors;
      m.errorsPerS += e.errors;
    }
    const config = iv.endpoints['config'];
    if (config?.p50Ms !== undefined && config.requests > config.errors) m.configP50s.push(config.p50Ms);
    m.seconds += iv.durationMs / 1000;
    m.onboarded = iv.devices.onboarded ?? 0;
  }
  return minutes
    .filter((m) => m !== undefined)
    .map(({ seconds, configP50s, ...m }) => ({ ...m, answeredPerS: m.answeredPerS / seconds, errorsPerS: m.errorsPerS / seconds, configP50S: configP50s.length > 0 ? median(configP50s) / 1000 : undefined }));
}


/** One run of `bin` against a sink of its own; the figures from its summary and the sink's admin API. */
async function overloadedRun(bin: string, label: string): Promise<OverloadFigures> {
  const sink = await startSinkProcess(cli, join(dir, `ctl-${label}`)); // the same controller for both checkouts
  const summaryFile = join(dir, `summary-${label}.json`);
  let connectionsOpened: number;
  let out = '';
  let code: number | null;
  try {
    const args = [bin, 'run', scenario, ...overrides, '--tick', '50ms', ...sinkRunArgs(sink), '--state-dir', join(dir, `state-${label}`), '--summary-json', summaryFile, '--metrics-linger', '0'];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d: Buffer) => {
      out = (out + d.toString()).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    code = await new Promise<number | null>((r) => child.once('exit', r));
    const stats = (await (await fetch(`${sink.admin}/admin/stats`)).json()) as { connections: { v2: { opened: number } } };
    connectionsOpened = stats.connections.v2.opened;
  } finally {
    await sink.stop();
  }
  let s: RunSummary;
  try {
    s = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
  } catch {
    throw new Error(`${label}: the run wrote no summary (exit ${code}): ${out.slice(-3000)}`);
  }
  const gates = s.generator.workers.flatMap((w) => (w.inFlight ? [w.inFlight] : []));
  return {
    devices: s.devices.total,
    onboarded: s.devices.onboarded,
    thresholdsPassed: s.thresholds.filter((t) => t.passed).length,
    thresholds: s.thresholds.length,
    failedThresholds: s.thresholds.filter((t) => !t.passed).map((t) => `${t.source}: ${t.detail}`),
    faults: (s.faults ?? []).map((f) => ({
      kind: f.kind,
      ...(f.params ? { params: f.params } : {}),
      devicesHit: f.devicesHit,
      ...(f.recovery ? { recovered: f.recovery.devices, recoveryS: f.recovery.maxMs / 1000 } : {}),
    })),
    runS: s.durationMs / 1000,
    requests: s.overall.count,
    answered: s.overall.count - s.overall.errors,
    timeouts: s.overall.byError['timeout'] ?? 0,
    timedOutWaiting: gates.reduce((a, g) => a + g.timedOutWaiting, 0),
    handedOnNewestFirst: gates.reduce((a, g) => a + (g.handedOnNewestFirst ?? 0), 0),
    worstWaitS: Math.max(0, ...gates.map((g) => g.worstWaitMs)) / 1000,
    connectionsOpened,
    worstLoopLagP99Ms: Math.max(...s.generator.workers.map((w) => w.eventLoopLagP99Ms)),
    generatorCpuPercent: s.generator.cpuPercent,
    undelivered: s.undelivered.total,
    rssPeakBytes: s.generator.rssPeakBytes ?? 0,
    minutes: byMinute(s),
  };
}

function lines(name: string, f: OverloadFigures): string[] {
  const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(1)} %`;
  return [
    `  ${name}:`,
    `    onboarded ${f.onboarded} of ${f.devices} (${pct(f.onboarded, f.devices)}); thresholds passed ${f.thresholdsPassed} of ${f.thresholds}${f.failedThresholds.length ? ` (failed: ${f.failedThresholds.join('; ')})` : ''}`,
    ...f.faults.map(
      (x) =>
        `    fault ${x.kind}${x.params ? ` ${x.params}` : ''}: ${x.devicesHit} devices hit` +
        (x.recovered === undefined ? '' : `, ${x.recovered} current again after it (${pct(x.recovered, x.devicesHit)}), the last ${x.recoveryS!.toFixed(1)} s after its end`),
    ),
    `    requests ${f.requests}, answered ${f.answered} (${(f.answered / f.runS).toFixed(0)}/s over ${f.runS.toFixed(0)} s)`,
    `    timeouts ${f.timeouts}: ${f.timedOutWaiting} in the workers' queue (never sent), ${f.timeouts - f.timedOutWaiting} on the wire; worst wait for a slot ${f.worstWaitS.toFixed(1)} s`,
    `    handed on newest first ${f.handedOnNewestFirst}; TCP connections the sink accepted ${f.connectionsOpened}`,
    `    worst worker loop-lag p99 ${f.worstLoopLagP99Ms.toFixed(0)} ms; generator CPU ${f.generatorCpuPercent.toFixed(0)} % of the machine; reliable messages undelivered ${f.undelivered}`,
    `    generator RSS peak ${(f.rssPeakBytes / 2 ** 30).toFixed(2)} GiB (${(f.rssPeakBytes / 1024 / Math.max(1, f.devices)).toFixed(1)} KiB per device)`,
  ];
}

console.log(`machine: ${machineDescription()}`);
console.log(`scenario: ${scenario}${overrides.length ? ` (${overrides.join(' ')})` : ''}, --tick 50ms, sink controller in its own process, one per run`);

const COLUMN = 52;

/** Minute rows of each run side by side. */
function minuteTable(runs: [string, OverloadFigures][]): string[] {
  const n = Math.max(...runs.map(([, f]) => f.minutes.length));
  const out = [
    '  minute by minute: requests answered and failed per second, devices onboarded (in that state at its end),',
    "  and the config requests' latency p50 in the minute's median second (from the due time, the wait for a slot included)",
    `  minute  ${runs.map(([name]) => name.padEnd(COLUMN)).join('')}`,
    `          ${runs.map(() => `${'answered'.padStart(8)} ${'errors'.padStart(9)} ${'onboarded'.padStart(10)} ${'config p50'.padStart(10)}`.padEnd(COLUMN)).join('')}`,
  ];
  for (let i = 0; i < n; i++) {
    const cells = runs.map(([, f]) => {
      const m = f.minutes[i];
      const p50 = m?.configP50S === undefined ? '-' : m.configP50S < 1 ? `${(m.configP50S * 1000).toFixed(0)} ms` : `${m.configP50S.toFixed(1)} s`;
      return (m ? `${m.answeredPerS.toFixed(0).padStart(8)} ${m.errorsPerS.toFixed(0).padStart(9)} ${String(m.onboarded).padStart(10)} ${p50.padStart(10)}${m.phase === 'drain' ? ' drain' : ''}` : '').padEnd(COLUMN);
    });
    out.push(`  ${String(i).padStart(6)}  ${cells.join('')}`);
  }
  return out;
}

try {
  let base: OverloadFigures | undefined;
  if (baselineCli && !thisFirst) base = await overloadedRun(baselineCli, 'baseline');
  const mine = await overloadedRun(cli, 'this');
  if (baselineCli && thisFirst) base = await overloadedRun(baselineCli, 'baseline');
  if (base) console.log(lines('baseline', base).join('\n'));
  console.log(lines('this checkout', mine).join('\n'));
  console.log(`order: ${!base ? 'this checkout only' : thisFirst ? 'this checkout, then the baseline' : 'the baseline, then this checkout'}`);
  console.log(minuteTable(base ? [['baseline', base], ['this checkout', mine]] : [['this checkout', mine]]).join('\n'));
  if (base) {
    const ratio = (a: number, b: number) => (b === 0 ? '-' : (a / b).toFixed(2));
    console.log(
      `this checkout / baseline: onboarded ${ratio(mine.onboarded, base.onboarded)}, answered ${ratio(mine.answered, base.answered)}, ` +
        `timeouts on the wire ${ratio(mine.timeouts - mine.timedOutWaiting, base.timeouts - base.timedOutWaiting)}, connections ${ratio(mine.connectionsOpened, base.connectionsOpened)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
