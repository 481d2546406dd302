// Phase 1: the run's inputs. Loads the scenario with the command-line overrides, checks the
// options (workers, summary file, metrics port), reads and checks a real controller's files, and
// opens the fleet state (creating the fleet CA once, before workers race to open the directory).

import { accessSync, constants as fsConstants, readFileSync } from 'node:fs';
import { createPrivateKey } from 'node:crypto';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { readOnboardingFiles } from '../../fleet/shard-runner.js';
import type { TargetInfo } from '../../fleet/worker-protocol.js';
import { FleetIdentityStore } from '../../identity/fleet-identity-store.js';
import { loadScenario, totalDevices, type ScenarioOverrides } from '../../scenario/load-scenario.js';
import type { TargetSpec } from '../../scenario/scenario-types.js';
import { FleetAggregate } from '../aggregate.js';
import { isControllerSide } from '../controller-admin.js';
import type { RunScenarioOptions } from '../run-options.js';
import { fleetWorkerFile } from '../worker-file.js';
import { Cleanups } from './cleanups.js';
import { InputError } from './input-error.js';
import type { Print, RunContext } from './run-context.js';

export function prepareFleet(opts: RunScenarioOptions, out: Print, err: Print): RunContext {
  const scenario = loadScenario(opts.scenarioFile, overridesOf(opts));
  for (const w of scenario.warnings ?? []) err(`evesim: warning: ${w}\n`);
  const workers = opts.workers ?? os.availableParallelism();
  if (!Number.isInteger(workers) || workers < 1) throw new InputError(`--workers: must be a whole number ≥ 1 (got ${opts.workers})`);
  if (opts.summaryJson) checkWritableFile(opts.summaryJson, '--summary-json');
  if (opts.metricsPort !== undefined && (!Number.isInteger(opts.metricsPort) || opts.metricsPort < 0 || opts.metricsPort > 65535)) {
    throw new InputError(`--metrics-port: ${opts.metricsPort} is not a TCP port (0..65535)`);
  }
  const workerFile = fleetWorkerFile(opts.workerFile);
  const stateDir = resolve(opts.stateDir ?? '.evesim-state');
  const external = scenario.target.kind === 'external' ? readExternalTarget(scenario.target) : undefined;
  if (scenario.target.kind === 'external' && scenario.target.insecureSkipVerify) {
    err('evesim: WARNING: TLS verification of the controller is OFF (--insecure-skip-verify); anyone on the path can impersonate it\n');
  }
  const skippedActions = external ? scenario.timeline.filter(isControllerSide) : [];
  for (const a of skippedActions) {
    err(`evesim: warning: timeline action "${a.action}" at ${a.atMs} ms needs the embedded controller's admin API; skipped with a real controller\n`);
  }
  let store: FleetIdentityStore;
  try {
    // Creates the fleet CA once, before workers race to open the same directory.
    store = FleetIdentityStore.open({ stateDir, seed: scenario.seed });
  } catch (e) {
    throw new InputError(`state directory ${stateDir}: ${(e as Error).message}`);
  }
  return {
    opts,
    out,
    err,
    scenario,
    totalDevices: totalDevices(scenario),
    workers,
    workerFile,
    stateDir,
    ...(external ? { external } : {}),
    store,
    cleanups: new Cleanups(),
    aggregate: new FleetAggregate(),
  };
}

function overridesOf(opts: RunScenarioOptions): ScenarioOverrides {
  const overrides: ScenarioOverrides = {};
  if (opts.devices !== undefined) overrides.devices = opts.devices;
  if (opts.durationMs !== undefined) overrides.durationMs = opts.durationMs;
  if (opts.arrivalOverMs !== undefined) overrides.arrivalOverMs = opts.arrivalOverMs;
  if (opts.gracefulStopMs !== undefined) overrides.gracefulStopMs = opts.gracefulStopMs;
  if (opts.seed !== undefined) overrides.seed = opts.seed;
  if (opts.controller) {
    const c = opts.controller;
    overrides.target = {
      kind: 'external',
      url: c.url,
      rootCaFile: resolve(c.rootCaFile),
      onboardCertFile: resolve(c.onboardCertFile),
      onboardKeyFile: resolve(c.onboardKeyFile),
      insecureSkipVerify: c.insecure,
    };
  }
  return overrides;
}

function readExternalTarget(t: Extract<TargetSpec, { kind: 'external' }>): TargetInfo {
  let rootCaPem: string;
  try {
    rootCaPem = readFileSync(t.rootCaFile, 'utf8');
  } catch (e) {
    throw new InputError(`controller root CA ${t.rootCaFile}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (!rootCaPem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new InputError(`controller root CA ${t.rootCaFile}: not a PEM certificate (no "BEGIN CERTIFICATE" line)`);
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
