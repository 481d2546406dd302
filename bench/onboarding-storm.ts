// Onboarding storm: what the generator's CPU pays per onboarded device, and how long the storm's
// devices take to onboard (median, p99, the last one), against `evesim controller --sink` in a child
// process (its CPU is not the generator's).
//
//   npx tsc -p tsconfig.json && node dist/bench/onboarding-storm.js [--devices 4000] [--over 2s] [--workers <cores>] [--verified] [--tick D]
//
// --tick D runs both storms with `evesim run --tick D` (devices' wake-ups on a D grid, served in batches).
//
// N devices arrive uniformly within a short window (a group without apps, quiet logs: the storm is
// certs, ping, register, uuid, attestation and the first config, with the device info and
// attestation certificates EVE posts meanwhile). Identities are made before the runs (not
// measured: bench/identity-fleet.ts is their figure). The run starts at a fixed instant; generator
// CPU (process.cpuUsage: every thread) is taken from that instant until the progress callback sees
// every device onboarded, then the run is ended (a 1 s drain follows, not counted).
//
// Baseline, measured in the same run: the same storm with a quarter of the devices. Fixed costs
// (worker threads, codecs, pools, timers) cancel in the difference, so the marginal figure
// (ΔCPU ÷ Δdevices) is what one more device costs. Each run gets a fresh controller (new PKI), so
// every device registers as new.

import os from 'node:os';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runScenario } from '../src/runner/run-scenario.js';
import { ControllerAdminClient } from '../src/servers/controller/controller-admin-client.js';
import { parseDuration } from '../src/scenario/parse-duration.js';
import type { RunSummary } from '../src/runner/summary-json.js';
import { checkBenchArgs, hasArg, optionalStringArg, positiveIntArg, stringArg } from './bench-args.js';
import { machineDescription } from './machine.js';
import { startStormController, stormTarget } from './storm-controller.js';
import { preparedFleetState } from './precreated-identities.js';
import { signedRequestFloorUs } from './signed-request-floor.js';

const USAGE = `onboarding-storm: generator CPU per onboarded device in a storm, and how long the devices take to onboard.
  node dist/bench/onboarding-storm.js [--devices 4000] [--over 2s] [--workers <cores>] [--verified] [--tick D]`;
checkBenchArgs(USAGE, ['devices=', 'over=', 'workers=', 'verified', 'tick=', 'keep']);

const SEED = 42;
const FLEET_ID = 'onboarding-storm-bench';

interface StormRun {
  /** The signed-request floor measured against this run's controller before the storm, µs. */
  floorUs: number;
  devices: number;
  onboarded: number;
  /** Generator CPU from the start instant until every device had onboarded, ms (all threads). */
  cpuMs: number;
  /** Controller CPU over the same run (its own process), ms. */
  controllerCpuMs: number;
  requests: number;
  summary: RunSummary;
}

const devices = positiveIntArg('devices', 4000);
const overMs = parseDuration(stringArg('over', '2s'));
const workers = positiveIntArg('workers', os.availableParallelism());
const sink = !hasArg('verified');
const tickText = optionalStringArg('tick');
const tickMs = tickText === undefined ? 0 : parseDuration(tickText);
const keep = hasArg('keep');
const root = mkdtempSync(join(os.tmpdir(), 'evesim-onboarding-storm-'));

try {
  console.log(`machine: ${machineDescription()}`);
  const stateDir = preparedFleetState(root, { seed: SEED, fleetId: FLEET_ID, devices, workers });
  const quarter = Math.max(1, Math.round(devices / 4));
  const small = await stormRun(stateDir, quarter, overMs / 4);
  const big = await stormRun(stateDir, devices, overMs);
  const line = (r: StormRun): string => {
    const o = r.summary.onboarding;
    const times = o
      ? `onboarding took p50 ${o.p50Ms} ms, p99 ${o.p99Ms} ms, slowest ${o.maxMs} ms; median device onboarded at ${(o.medianAtMs / 1000).toFixed(2)} s, last at ${(o.lastAtMs / 1000).toFixed(2)} s`
      : 'no onboarding times in the summary';
    return (
      `${String(r.devices).padStart(6)} devices: ${r.onboarded} onboarded, generator CPU ${(r.cpuMs / 1000).toFixed(2)} s = ${(r.cpuMs / r.devices).toFixed(2)} ms/device ` +
      `(${(r.requests / r.devices).toFixed(1)} requests/device, ${((r.cpuMs * 1000) / r.requests).toFixed(0)} µs/request); controller CPU ${(r.controllerCpuMs / r.devices).toFixed(2)} ms/device; ${times}`
    );
  };
  console.log(`storm (${sink ? 'sink' : 'verifying'} controller, ${workers} workers${tickMs ? `, --tick ${tickMs}ms` : ''}, uniform arrivals within ${overMs / 1000} s for N, a quarter of that for N/4):`);
  console.log(`  baseline ${line(small)}`);
  console.log(`  storm    ${line(big)}`);
  const perEndpoint = Object.entries(big.summary.endpoints)
    .filter(([, e]) => e.count > 0)
    .map(([k, e]) => `${k} ${(e.count / big.devices).toFixed(2)} (p50 ${e.p50_ms} ms, p99 ${e.p99_ms} ms)`);
  console.log(`  requests per device of the storm: ${perEndpoint.join(', ')}`);
  const marginal = (big.cpuMs - small.cpuMs) / (big.devices - small.devices);
  const perCore = 1000 / marginal;
  const floorUs = (small.floorUs + big.floorUs) / 2;
  const floorMs = (floorUs * big.requests) / big.devices / 1000;
  console.log(
    `floor: one signed request (ECDSA sign of 1 KiB + a bare undici GET, kept-alive TLS) ${small.floorUs.toFixed(0)} / ${big.floorUs.toFixed(0)} µs CPU before each run; ` +
      `× ${(big.requests / big.devices).toFixed(1)} requests a device = ${floorMs.toFixed(2)} ms per device`,
  );
  console.log(
    `marginal generator CPU per onboarded device: ${marginal.toFixed(2)} ms (${perCore.toFixed(0)} devices/s per core), ${(marginal / floorMs).toFixed(1)} × the floor; goal ≤ 1 ms: ${marginal <= 1 ? 'PASS' : 'FAIL'}`,
  );
  const o = big.summary.onboarding;
  if (o) {
    const spread = o.maxMs - o.p50Ms;
    const lastGap = o.lastAtMs - o.medianAtMs;
    console.log(
      `trailing: slowest device took ${(spread / 1000).toFixed(2)} s longer than the median one; the last onboarded ${(lastGap / 1000).toFixed(2)} s after the median one ` +
        `(goal: a few seconds, ≤ 5 s: ${spread <= 5000 && lastGap <= 5000 ? 'PASS' : 'FAIL'})`,
    );
  }
} finally {
  if (!keep) rmSync(root, { recursive: true, force: true });
  else console.log(`kept ${root}`);
}

function scenarioYaml(n: number, windowMs: number): string {
  return [
    'name: onboarding-storm-bench',
    `seed: ${SEED}`,
    // An upper bound: the run is ended as soon as every device onboarded.
    'duration: 120s',
    'gracefulStop: 1s',
    'arrival:',
    '  model: uniform',
    `  over: ${Math.max(1, Math.round(windowMs))}ms`,
    'groups:',
    '  - name: storm',
    `    count: ${n}`,
    '    eveVersion: 14.5.2-kvm-amd64',
    '    logs:',
    '      linesPerSec: 0.01',
    '',
  ].join('\n');
}

async function stormRun(stateDir: string, n: number, windowMs: number): Promise<StormRun> {
  const dir = mkdtempSync(join(root, `run-${n}-`));
  const scenarioFile = join(dir, 'storm.yaml');
  writeFileSync(scenarioFile, scenarioYaml(n, windowMs));
  const controller = await startStormController(join(dir, 'controller'), { sink });
  const admin = new ControllerAdminClient(controller.adminUrl);
  try {
    // A start instant far enough ahead that the workers are ready (identities loaded) by then.
    const floorUs = await signedRequestFloorUs(controller.url, controller.rootCaFile);
    const startAtMs = Date.now() + 6000 + n;
    let cpuAtStart: NodeJS.CpuUsage | undefined;
    const startTimer = setTimeout(() => (cpuAtStart = process.cpuUsage()), startAtMs - Date.now());
    let cpuAtDone: NodeJS.CpuUsage | undefined;
    const end = new AbortController();
    const errors: string[] = [];
    const controllerCpuBefore = controller.cpuMs();
    const { summary } = await runScenario({
      scenarioFile,
      stateDir,
      fleetId: FLEET_ID,
      workers,
      startAtMs,
      ...(tickMs ? { tickMs } : {}),
      quiet: true,
      controller: stormTarget(controller),
      controllerAdmin: admin,
      endRunPhase: end.signal,
      onProgress: (agg) => {
        if (cpuAtDone === undefined && agg.onboardedEver() >= n) {
          cpuAtDone = process.cpuUsage();
          end.abort();
        }
      },
      out: () => {},
      err: (t) => errors.push(t),
    });
    clearTimeout(startTimer);
    if (!summary) throw new Error(`storm run of ${n} devices gave no summary: ${errors.join('')}`);
    if (errors.some((e) => e.includes('passed'))) throw new Error(`the workers were not ready by the start instant: ${errors.join('')}`);
    if (!cpuAtStart) throw new Error('the start instant never came');
    const doneAt = cpuAtDone ?? process.cpuUsage();
    const cpuMs = (doneAt.user - cpuAtStart.user + doneAt.system - cpuAtStart.system) / 1000;
    return {
      floorUs,
      devices: n,
      onboarded: summary.devices.onboarded,
      cpuMs,
      controllerCpuMs: controller.cpuMs() - controllerCpuBefore,
      requests: summary.overall.count,
      summary,
    };
  } finally {
    await admin.close();
    await controller.stop();
  }
}
