// Steady-state fleet benchmark: N devices (default 10,000) of scenarios/steady-state.yaml against the
// embedded controller on this machine, reporting what the generator costs: live memory per device
// (after a forced GC, so run with --expose-gc) and the event-loop lag of each worker.
//
//   npm run build && node --expose-gc dist/bench/steady-state.js [--devices 10000] [--duration 12m] [--arrival-over 8m]
//
// The embedded controller shares the machine (and its 2 cores) with the generator, so its latency
// figures are not a controller benchmark; the generator figures are what this measures. Memory is
// sampled at the end of the duration, once every device is live. It is a steady-state figure only
// if the controller kept up by then, so the load at the sample (requests in flight, reliable
// messages queued on the devices) is printed with it. Onboarding costs about 50 requests a device
// (most of them app state changes in info); on 2 cores the co-located controller handles about
// 1,200 requests/s, so by default arrival is spread over 8 minutes and the sample is at 12.

import os from 'node:os';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runScenario } from '../src/runner/run-scenario.js';
import { startControllerInThread } from '../src/servers/controller/controller-thread.js';
import { parseDuration } from '../src/scenario/parse-duration.js';
import type { RunSummary } from '../src/runner/summary-json.js';
import { checkBenchArgs, positiveIntArg, stringArg } from './bench-args.js';
import { machineDescription } from './machine.js';

const USAGE = `steady-state: steady-state fleet against the embedded controller: live memory per device and each worker's event-loop lag.
  node --expose-gc dist/bench/steady-state.js [--devices 10000] [--duration 12m] [--arrival-over 8m]`;
checkBenchArgs(USAGE, ['devices=', 'duration=', 'arrival-over=', 'scenario=']);

const devices = positiveIntArg('devices', 10000);
const durationMs = parseDuration(stringArg('duration', '12m'));
const arrivalOverMs = parseDuration(stringArg('arrival-over', '8m'));
const scenarioFile = resolve(stringArg('scenario', 'scenarios/steady-state.yaml'));
if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
  console.error('steady-state: run with node --expose-gc to measure live memory per device');
}
const out = mkdtempSync(join(os.tmpdir(), 'evesim-bench-'));
const summaryFile = join(out, 'summary.json');
const started = process.hrtime.bigint();
const { exitCode } = await runScenario({
  scenarioFile,
  devices,
  durationMs,
  arrivalOverMs,
  quiet: true,
  summaryJson: summaryFile,
  stateDir: resolve('.evesim-state/bench'),
  startEmbeddedController: startControllerInThread,
  out: () => {},
});
const wallS = Number(process.hrtime.bigint() - started) / 1e9;
const s = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
const w = s.generator.workers;
const lag = Math.max(...w.map((x) => x.eventLoopLagP99Ms));
const settled = w.map((x) => x.settledKiBPerDevice).filter((x): x is number => x !== undefined);
const perDevice = settled.length ? Math.max(...settled) : undefined;

console.log(`machine: ${machineDescription()}`);
console.log(
  `run: ${s.devices.total} devices (${s.devices.onboarded} onboarded) arriving over ${(arrivalOverMs / 1000).toFixed(0)} s, ` +
    `${(durationMs / 1000).toFixed(0)} s + drain, ${wallS.toFixed(0)} s wall, exit ${exitCode}`,
);
console.log(`requests: ${s.overall.count} (${s.overall.rate.toFixed(0)}/s), errors ${s.overall.errors}, p50 ${s.overall.p50_ms} ms, p99 ${s.overall.p99_ms} ms (embedded controller on the same cores)`);
for (const x of w) {
  const load = x.atMemorySample ? ` (at the sample: ${x.atMemorySample.inFlight} requests in flight, ${x.atMemorySample.queuedReliable} reliable messages queued)` : '';
  console.log(`  worker ${x.worker}: event-loop lag p99 ${x.eventLoopLagP99Ms} ms, heap peak ${x.heapPeakMiB ?? '?'} MiB, live ${x.settledKiBPerDevice ?? '?'} KiB/device${load}`);
}
console.log(`generator CPU ${s.generator.cpuPercent}% of the machine (controller thread included)`);
console.log(
  `targets: memory ≤ 30 KiB/device: ${perDevice === undefined ? 'not measured (no --expose-gc)' : `${perDevice} KiB ${perDevice <= 30 ? 'PASS' : 'FAIL'}`}; ` +
    `event-loop lag p99 < 100 ms: ${lag} ms ${lag < 100 ? 'PASS' : 'FAIL'}`,
);
console.log(`summary: ${summaryFile}`);
