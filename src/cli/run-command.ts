// `evesim run SCENARIO`: maps flags onto the runner and starts the embedded controller in its
// own thread when the scenario (and no --controller flag) asks for it.
import { runScenario } from '../runner/run-scenario.js';
import { ControllerAdminClient } from '../servers/controller/controller-admin-client.js';
import { startControllerInThread } from '../servers/controller/controller-thread.js';
import { startLpsInThread } from '../servers/lps/lps-thread.js';
import { parseShardArg, type FleetShard } from '../fleet/fleet-shard.js';
import { fleetIdProblem } from '../identity/fleet-id.js';
import { durationArg } from './parse-duration-arg.js';
import { parseStartAt } from './parse-start-at.js';
import { httpUrlProblem } from '../scenario/http-url.js';
import { parseFaultFlags } from '../faults/fault-flags.js';
import type { FaultAction } from '../faults/fault-spec.js';

export interface RunArgs {
  scenario: string;
  controller?: string;
  rootCa?: string;
  onboardCert?: string;
  onboardKey?: string;
  insecureSkipVerify: boolean;
  devices?: number;
  duration?: string;
  arrivalOver?: string;
  gracefulStop?: string;
  seed?: number;
  workers?: number;
  metricsPort?: number;
  metricsHost?: string;
  summaryJson?: string;
  record?: string;
  stateDir?: string;
  controllerAdmin?: string;
  shard?: string;
  startAt?: string;
  fleetId?: string;
  dryRun?: boolean;
  /** `--fault` (repeatable): faults appended to the scenario's timeline. */
  fault?: string | string[];
  quiet: boolean;
}

export async function runRun(a: RunArgs): Promise<number> {
  let durationMs: number | undefined;
  let arrivalOverMs: number | undefined;
  let gracefulStopMs: number | undefined;
  let shard: FleetShard | undefined;
  let startAtMs: number | undefined;
  let faults: FaultAction[] = [];
  try {
    faults = parseFaultFlags((a.fault === undefined ? [] : Array.isArray(a.fault) ? a.fault : [a.fault]).map(String));
    durationMs = durationArg(a.duration);
    arrivalOverMs = durationArg(a.arrivalOver, '--arrival-over');
    gracefulStopMs = durationArg(a.gracefulStop, '--graceful-stop');
    if (a.shard !== undefined) shard = parseShardArg(String(a.shard));
    // A relative --start-at counts from the start of this process, not from when flags are read.
    if (a.startAt !== undefined) startAtMs = parseStartAt(String(a.startAt), Math.round(performance.timeOrigin));
    if (a.fleetId !== undefined) {
      const problem = fleetIdProblem(String(a.fleetId));
      if (problem) throw new Error(`--fleet-id: ${problem}`);
    }
  } catch (e) {
    console.error(`evesim: ${(e as Error).message}`);
    return 2;
  }
  let controller: { url: string; rootCaFile: string; onboardCertFile: string; onboardKeyFile: string; insecure: boolean } | undefined;
  if (a.controller !== undefined) {
    const urlProblem = controllerUrlProblem(a.controller);
    if (urlProblem) {
      console.error(`evesim: --controller: ${urlProblem}`);
      return 2;
    }
    const missing = (['rootCa', 'onboardCert', 'onboardKey'] as const).filter((k) => !a[k]);
    if (missing.length > 0) {
      const flags = missing.map((k) => '--' + k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase()));
      console.error(`evesim: --controller needs ${flags.join(', ')}`);
      return 2;
    }
    controller = {
      url: a.controller,
      rootCaFile: a.rootCa!,
      onboardCertFile: a.onboardCert!,
      onboardKeyFile: a.onboardKey!,
      insecure: a.insecureSkipVerify,
    };
  }
  let controllerAdmin: ControllerAdminClient | undefined;
  if (a.controllerAdmin !== undefined) {
    const urlProblem = httpUrlProblem(String(a.controllerAdmin), 'http://127.0.0.1:8444');
    if (urlProblem) {
      console.error(`evesim: --controller-admin: ${urlProblem}`);
      return 2;
    }
    controllerAdmin = new ControllerAdminClient(String(a.controllerAdmin));
  }
  try {
    return await runWith(a, { durationMs, arrivalOverMs, gracefulStopMs, shard, startAtMs, controller, controllerAdmin, faults });
  } finally {
    await controllerAdmin?.close();
  }
}

async function runWith(
  a: RunArgs,
  p: {
    durationMs: number | undefined;
    arrivalOverMs: number | undefined;
    gracefulStopMs: number | undefined;
    shard: FleetShard | undefined;
    startAtMs: number | undefined;
    controller: { url: string; rootCaFile: string; onboardCertFile: string; onboardKeyFile: string; insecure: boolean } | undefined;
    controllerAdmin: ControllerAdminClient | undefined;
    faults: FaultAction[];
  },
): Promise<number> {
  const { durationMs, arrivalOverMs, gracefulStopMs, shard, startAtMs, controller, controllerAdmin, faults } = p;
  const { exitCode } = await runScenario({
    scenarioFile: a.scenario,
    devices: a.devices,
    durationMs,
    arrivalOverMs,
    gracefulStopMs,
    seed: a.seed,
    workers: a.workers,
    metricsPort: a.metricsPort,
    ...(a.metricsHost !== undefined ? { metricsHost: a.metricsHost } : {}),
    summaryJson: a.summaryJson,
    recordDir: a.record,
    stateDir: a.stateDir,
    controller,
    ...(controllerAdmin ? { controllerAdmin } : {}),
    ...(shard ? { shard } : {}),
    ...(startAtMs !== undefined ? { startAtMs } : {}),
    ...(a.fleetId !== undefined ? { fleetId: String(a.fleetId) } : {}),
    ...(a.dryRun ? { dryRun: true } : {}),
    ...(faults.length > 0 ? { faults } : {}),
    quiet: a.quiet,
    startEmbeddedController: startControllerInThread,
    startLps: startLpsInThread,
  });
  return exitCode;
}

/** Why `text` cannot be a controller URL, or undefined when it can (checked before anything starts). */
export function controllerUrlProblem(text: string): string | undefined {
  return httpUrlProblem(text, 'https://127.0.0.1:8443');
}
