// Phase 1: the run's inputs. Loads the scenario with the command-line overrides, checks the
// options (workers, shard, fleet id, start time, summary file, metrics port), reads and checks a
// real controller's files, plans this shard's part of the fleet, and opens the fleet state under
// the fleet id (creating the fleet CA once, before workers race to open the directory).
// checkRunInputs alone is what --dry-run does: nothing is written.

import { workerHeapGrowingPercent } from '../../fleet/worker-heap-flags.js';
import { processAllocator } from '../../memory/process-allocator.js';
import { allocatorAdvice } from '../allocator-advice.js';
import { accessSync, constants as fsConstants, readFileSync } from 'node:fs';
import { createPrivateKey } from 'node:crypto';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { readOnboardingFiles } from '../../fleet/shard-runner.js';
import type { TargetInfo } from '../../fleet/worker-protocol.js';
import { FleetIdentityStore } from '../../identity/fleet-identity-store.js';
import { planFleet } from '../../fleet/fleet-plan.js';
import { WHOLE_FLEET, shardProblem } from '../../fleet/fleet-shard.js';
import { fleetIdProblem, readStateDirFleetId, stateDirFleetId } from '../../identity/fleet-id.js';
import { loadScenario, type ScenarioOverrides } from '../../scenario/load-scenario.js';
import { listenHostProblem } from '../listen-host.js';
import { pemCertificateProblem } from '../pem-check.js';
import { writableDirProblem } from '../writable-dir.js';
import { workerMemoryProblem } from '../../fleet/worker-memory-budget.js';
import { MAX_TIMER_MS } from '../../scenario/scenario-limits.js';
import { formatDuration } from '../../scenario/parse-duration.js';
import type { TargetSpec } from '../../scenario/scenario-types.js';
import { FleetAggregate } from '../aggregate.js';
import { isControllerSide } from '../controller-admin.js';
import type { RunScenarioOptions } from '../run-options.js';
import { resolveShardThresholdBases } from '../shard-thresholds.js';
import { fleetWorkerFile } from '../worker-file.js';
import { Cleanups } from './cleanups.js';
import { InputError } from './input-error.js';
import type { Print, RunContext } from './run-context.js';
import { outTargetProblem } from '../series/out-spec.js';

/** A --start-at this far in the past (when the run is prepared) is still taken: clocks and startup jitter. */
export const START_AT_TOLERANCE_MS = 1000;

/** What prepare-fleet checks before anything is written: the run context but the fleet state. */
export type RunInputs = Omit<RunContext, 'store' | 'cleanups' | 'aggregate' | 'fleetId'> & {
  /** --fleet-id, else the state directory's when it has one already (a dry run makes none). */
  fleetId?: string;
};

export function prepareFleet(opts: RunScenarioOptions, out: Print, err: Print): RunContext {
  const inputs = checkRunInputs(opts, out, err);
  const { stateDir, scenario } = inputs;
  let store: FleetIdentityStore;
  let fleetId: string;
  try {
    fleetId = inputs.fleetId ?? stateDirFleetId(stateDir);
    // Creates the fleet CA once, before workers race to open the same directory.
    store = FleetIdentityStore.open({ stateDir, seed: scenario.seed, fleetId });
  } catch (e) {
    throw new InputError(`state directory ${stateDir}: ${(e as Error).message}`);
  }
  return { ...inputs, fleetId, store, cleanups: new Cleanups(), aggregate: new FleetAggregate() };
}

/** Loads the scenario and checks every option and file; writes nothing. */
export function checkRunInputs(opts: RunScenarioOptions, out: Print, err: Print): RunInputs {
  const now = opts.now ?? Date.now;
  const scenario = loadScenario(opts.scenarioFile, overridesOf(opts));
  for (const w of scenario.warnings ?? []) err(`evesim: warning: ${w}\n`);
  const workers = opts.workers ?? os.availableParallelism();
  if (!Number.isInteger(workers) || workers < 1) throw new InputError(`--workers: must be a whole number ≥ 1 (got ${opts.workers})`);
  const shard = opts.shard ?? WHOLE_FLEET;
  const shardBad = shardProblem(shard);
  if (shardBad) throw new InputError(`--shard: ${shardBad}`);
  if (opts.fleetId !== undefined) {
    const bad = fleetIdProblem(opts.fleetId);
    if (bad) throw new InputError(`--fleet-id: ${bad}`);
  }
  if (opts.startAtMs !== undefined) {
    if (!Number.isFinite(opts.startAtMs)) throw new InputError(`--start-at: not a time (got ${opts.startAtMs})`);
    const lateMs = now() - opts.startAtMs;
    if (-lateMs > MAX_TIMER_MS) {
      throw new InputError(`--start-at: ${new Date(opts.startAtMs).toISOString()} is more than ${formatDuration(MAX_TIMER_MS)} ahead, the longest timer Node.js can set`);
    }
    if (lateMs > START_AT_TOLERANCE_MS) {
      throw new InputError(`--start-at: ${new Date(opts.startAtMs).toISOString()} is ${(lateMs / 1000).toFixed(1)} s in the past; give a later time`);
    }
  }
  if (opts.summaryJson) checkWritableFile(opts.summaryJson, '--summary-json');
  for (const o of opts.outputs ?? []) {
    const bad = outTargetProblem(o);
    if (bad) throw new InputError(bad);
  }
  if (opts.junit) checkWritableFile(opts.junit, '--junit');
  if (opts.metricsPort !== undefined && (!Number.isInteger(opts.metricsPort) || opts.metricsPort < 0 || opts.metricsPort > 65535)) {
    throw new InputError(`--metrics-port: ${opts.metricsPort} is not a TCP port (0..65535)`);
  }
  const hostBad = opts.metricsHost !== undefined ? listenHostProblem(opts.metricsHost) : undefined;
  if (hostBad) throw new InputError(`--metrics-host: ${hostBad}`);
  const workerFile = fleetWorkerFile(opts.workerFile);
  const stateDir = resolve(opts.stateDir ?? '.evesim-state');
  const stateDirBad = writableDirProblem(stateDir);
  if (stateDirBad) throw new InputError(`--state-dir ${stateDir}: ${stateDirBad}`);
  if (opts.recordDir) {
    const recordBad = writableDirProblem(opts.recordDir);
    if (recordBad) throw new InputError(`--record ${opts.recordDir}: ${recordBad}`);
  }
  const external = scenario.target.kind === 'external' ? readExternalTarget(scenario.target) : undefined;
  if (scenario.target.kind === 'external' && scenario.target.insecureSkipVerify) {
    err('evesim: WARNING: TLS verification of the controller is OFF (--insecure-skip-verify); anyone on the path can impersonate it\n');
    if (scenario.target.rootCaFile === undefined) {
      err("evesim: WARNING: no --root-ca: the devices take the controller's signing certificates without checking their chain\n");
    }
  }
  if (opts.controllerAdmin && !external) throw new InputError('--controller-admin: needs --controller (the admin API of that controller)');
  const skippedActions = external && !opts.controllerAdmin ? scenario.timeline.filter(isControllerSide) : [];
  for (const a of skippedActions) {
    err(`evesim: warning: timeline action "${a.action}" at ${a.atMs} ms needs the embedded controller's admin API; skipped with a real controller\n`);
  }
  if (external && opts.controllerAdmin && shard.index !== 0 && scenario.timeline.some(isControllerSide)) {
    err(`evesim: controller-side timeline actions are applied by shard 0 (this is shard ${shard.index}/${shard.count})\n`);
  }
  let fleetId = opts.fleetId;
  if (fleetId === undefined) {
    try {
      fleetId = readStateDirFleetId(stateDir);
    } catch (e) {
      throw new InputError(`state directory ${stateDir}: ${(e as Error).message}`);
    }
  }
  const plan = planFleet(scenario, shard, workers);
  const busiest = Math.max(0, ...plan.workers.map((w) => w.count));
  const memoryBad = workerMemoryProblem(busiest, plan.workers.length);
  if (memoryBad) throw new InputError(`${opts.devices !== undefined ? '--devices' : scenario.file}: ${memoryBad}`);
  let heapGrowingPercent: number;
  try {
    heapGrowingPercent = workerHeapGrowingPercent();
  } catch (e) {
    throw new InputError((e as Error).message);
  }
  const advice = allocatorAdvice(processAllocator(), process.platform, plan.shardDevices, process.env.EVESIM_ALLOCATOR);
  if (advice) err(`evesim: ${advice}\n`);
  resolveShardThresholdBases(scenario, shard);
  return {
    opts,
    out,
    err,
    scenario,
    totalDevices: plan.shardDevices,
    plan,
    ...(fleetId !== undefined ? { fleetId } : {}),
    ...(opts.startAtMs !== undefined ? { startAtMs: opts.startAtMs } : {}),
    now,
    workers,
    workerFile,
    heapGrowingPercent,
    stateDir,
    ...(external ? { external } : {}),
  };
}

function overridesOf(opts: RunScenarioOptions): ScenarioOverrides {
  const overrides: ScenarioOverrides = {};
  if (opts.devices !== undefined) overrides.devices = opts.devices;
  if (opts.durationMs !== undefined) overrides.durationMs = opts.durationMs;
  if (opts.arrivalOverMs !== undefined) overrides.arrivalOverMs = opts.arrivalOverMs;
  if (opts.gracefulStopMs !== undefined) overrides.gracefulStopMs = opts.gracefulStopMs;
  if (opts.seed !== undefined) overrides.seed = opts.seed;
  if (opts.targetEmbedded) overrides.target = { kind: 'embedded' };
  if (opts.faults !== undefined && opts.faults.length > 0) overrides.faults = opts.faults;
  if (opts.controller) {
    const c = opts.controller;
    overrides.target = {
      kind: 'external',
      url: c.url,
      ...(c.v1Url !== undefined ? { v1Url: c.v1Url } : {}),
      ...(c.rootCaFile !== undefined ? { rootCaFile: resolve(c.rootCaFile) } : {}),
      onboardCertFile: resolve(c.onboardCertFile),
      onboardKeyFile: resolve(c.onboardKeyFile),
      insecureSkipVerify: c.insecure,
    };
  }
  return overrides;
}

function readExternalTarget(t: Extract<TargetSpec, { kind: 'external' }>): TargetInfo {
  // '' = no root CA: allowed only without TLS verification (the devices then skip the /certs chain too).
  let rootCaPem = '';
  if (t.rootCaFile === undefined) {
    if (!t.insecureSkipVerify) throw new InputError('--controller needs --root-ca (or --insecure-skip-verify)');
  } else {
    try {
      rootCaPem = readFileSync(t.rootCaFile, 'utf8');
    } catch (e) {
      throw new InputError(`controller root CA ${t.rootCaFile}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    if (!rootCaPem.includes('-----BEGIN CERTIFICATE-----')) {
      throw new InputError(`controller root CA ${t.rootCaFile}: not a PEM certificate (no "BEGIN CERTIFICATE" line)`);
    }
    const unparsable = pemCertificateProblem(rootCaPem);
    if (unparsable) throw new InputError(`controller root CA ${t.rootCaFile}: ${unparsable}`);
  }
  let onboard: { certPem: string; keyPem: string };
  try {
    onboard = readOnboardingFiles(t.onboardCertFile, t.onboardKeyFile);
  } catch (e) {
    throw new InputError((e as Error).message);
  }
  if (!onboard.certPem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new InputError(`onboarding certificate ${t.onboardCertFile}: not a PEM certificate`);
  }
  const badCert = pemCertificateProblem(onboard.certPem);
  if (badCert) throw new InputError(`onboarding certificate ${t.onboardCertFile}: ${badCert}`);
  try {
    createPrivateKey(onboard.keyPem);
  } catch (e) {
    // Never echo the key material: only the file name and the parser's verdict.
    throw new InputError(`onboarding key ${t.onboardKeyFile}: not a usable private key (${(e as Error).message.split('\n')[0]})`);
  }
  return { url: t.url, ...(t.v1Url ? { v1Url: t.v1Url } : {}), rootCaPem, insecure: t.insecureSkipVerify, onboard };
}

function checkWritableFile(file: string, what: string): void {
  const dir = dirname(resolve(file));
  try {
    accessSync(dir, fsConstants.W_OK);
  } catch {
    throw new InputError(`${what} ${file}: directory ${dir} does not exist or is not writable`);
  }
}
