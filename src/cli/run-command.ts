// `evesim run SCENARIO`: maps flags onto the runner and starts the embedded controller in its
// own thread when the scenario (and no --controller flag) asks for it.
import { runScenario } from '../runner/run-scenario.js';
import { ControllerAdminClient } from '../servers/controller/controller-admin-client.js';
import { startControllerInThread } from '../servers/controller/controller-thread.js';
import { startLpsInThread } from '../servers/lps/lps-thread.js';
import { parseShardArg, type FleetShard } from '../fleet/fleet-shard.js';
import { fleetIdProblem } from '../identity/fleet-id.js';
import { durationArg } from './parse-duration-arg.js';
import { DEFAULT_METRICS_LINGER_MS } from '../runner/phases/metrics-linger.js';
import { parseStartAt } from './parse-start-at.js';
import { parseLogMemory } from './parse-log-memory.js';
import { httpUrlProblem } from '../scenario/http-url.js';
import { htmlReportFileProblem, writeHtmlReport } from './report-command.js';
import { checkOutSpecs, type OutSpec } from '../runner/series/out-spec.js';
import { parseFaultFlags } from '../faults/fault-flags.js';
import type { FaultAction } from '../faults/fault-spec.js';

export interface RunArgs {
  scenario: string;
  /** --target embedded: the embedded controller whatever the scenario's target says. */
  target?: string;
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
  /** --max-in-flight (transport/in-flight-gate.ts). */
  maxInFlight?: number;
  /** --tick (fleet/heap-scheduler.ts). */
  tick?: string;
  /** --log-memory (parse-log-memory.ts). */
  logMemory?: string;
  metricsPort?: number;
  metricsHost?: string;
  metricsLinger?: string;
  summaryJson?: string;
  /** --report FILE.html: the self-contained HTML report, written when the run ends. */
  report?: string;
  /** --out FORMAT=TARGET, repeatable (series/out-spec.ts). */
  out?: string | (string | number)[];
  junit?: string;
  record?: string;
  stateDir?: string;
  controllerAdmin?: string;
  /** --controller-v1: the API v1 base URL of the --controller, when it differs. */
  controllerV1?: string;
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
  let metricsLingerMs: number | undefined;
  let shard: FleetShard | undefined;
  let startAtMs: number | undefined;
  let tickMs: number | undefined;
  let logMemoryBytes: number | undefined;
  let outputs: OutSpec[] = [];
  let faults: FaultAction[] = [];
  try {
    outputs = checkOutSpecs((a.out === undefined ? [] : Array.isArray(a.out) ? a.out : [a.out]).map(String));
    faults = parseFaultFlags((a.fault === undefined ? [] : Array.isArray(a.fault) ? a.fault : [a.fault]).map(String));
    durationMs = durationArg(a.duration);
    arrivalOverMs = durationArg(a.arrivalOver, '--arrival-over');
    gracefulStopMs = durationArg(a.gracefulStop, '--graceful-stop');
    // A bare 0 turns the linger off (durations otherwise need a unit).
    const linger = a.metricsLinger === undefined ? undefined : String(a.metricsLinger);
    metricsLingerMs = linger === '0' ? 0 : (durationArg(linger, '--metrics-linger') ?? DEFAULT_METRICS_LINGER_MS);
    if (a.maxInFlight !== undefined && !(Number.isInteger(a.maxInFlight) && a.maxInFlight >= 1)) {
      throw new Error(`--max-in-flight: expected a whole number of requests >= 1, got ${String(a.maxInFlight)}`);
    }
    if (a.tick !== undefined) {
      tickMs = durationArg(String(a.tick), '--tick');
      if (tickMs !== undefined && tickMs > 1000) throw new Error(`--tick: at most 1s (a coarser grid would move EVE's timers noticeably), got ${String(a.tick)}`);
    }
    if (a.logMemory !== undefined) logMemoryBytes = parseLogMemory(String(a.logMemory));
    if (a.shard !== undefined) shard = parseShardArg(String(a.shard));
    // A relative --start-at counts from the start of this process, not from when flags are read.
    if (a.startAt !== undefined) startAtMs = parseStartAt(String(a.startAt), Math.round(performance.timeOrigin));
    if (a.fleetId !== undefined) {
      const problem = fleetIdProblem(String(a.fleetId));
      if (problem) throw new Error(`--fleet-id: ${problem}`);
    }
    if (a.report !== undefined) {
      const problem = htmlReportFileProblem(String(a.report));
      if (problem) throw new Error(`--report ${problem}`);
    }
  } catch (e) {
    console.error(`evesim: ${(e as Error).message}`);
    return 2;
  }
  if (a.target !== undefined) {
    const problem = targetArgProblem(String(a.target), a.controller !== undefined);
    if (problem) {
      console.error(`evesim: --target: ${problem}`);
      return 2;
    }
  }
  let controller: { url: string; v1Url?: string; rootCaFile?: string; onboardCertFile: string; onboardKeyFile: string; insecure: boolean } | undefined;
  if (a.controllerV1 !== undefined && a.controller === undefined) {
    console.error('evesim: --controller-v1 needs --controller (it is the API v1 address of that controller)');
    return 2;
  }
  if (a.controller !== undefined) {
    const urlProblem = controllerUrlProblem(a.controller);
    if (urlProblem) {
      console.error(`evesim: --controller: ${urlProblem}`);
      return 2;
    }
    // Without TLS verification the root CA is optional (the devices then take the controller's
    // signing certificates unchecked too, and the run says so).
    const needed = a.insecureSkipVerify ? (['onboardCert', 'onboardKey'] as const) : (['rootCa', 'onboardCert', 'onboardKey'] as const);
    const missing = needed.filter((k) => !a[k]);
    if (missing.length > 0) {
      const flags = missing.map((k) => '--' + k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase()));
      console.error(`evesim: --controller needs ${flags.join(', ')}`);
      return 2;
    }
    if (a.controllerV1 !== undefined) {
      const v1Problem = controllerV1UrlProblem(String(a.controllerV1));
      if (v1Problem) {
        console.error(`evesim: --controller-v1: ${v1Problem}`);
        return 2;
      }
    }
    controller = {
      url: a.controller,
      ...(a.controllerV1 !== undefined ? { v1Url: String(a.controllerV1) } : {}),
      ...(a.rootCa ? { rootCaFile: a.rootCa } : {}),
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
    return await runWith(a, { durationMs, arrivalOverMs, gracefulStopMs, metricsLingerMs, shard, startAtMs, tickMs, logMemoryBytes, controller, controllerAdmin, outputs, faults });
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
    metricsLingerMs: number;
    shard: FleetShard | undefined;
    startAtMs: number | undefined;
    tickMs: number | undefined;
    logMemoryBytes: number | undefined;
    controller: { url: string; v1Url?: string; rootCaFile?: string; onboardCertFile: string; onboardKeyFile: string; insecure: boolean } | undefined;
    controllerAdmin: ControllerAdminClient | undefined;
    outputs: OutSpec[];
    faults: FaultAction[];
  },
): Promise<number> {
  const { durationMs, arrivalOverMs, gracefulStopMs, metricsLingerMs, shard, startAtMs, tickMs, logMemoryBytes, controller, controllerAdmin, outputs, faults } = p;
  const { exitCode } = await runScenario({
    scenarioFile: a.scenario,
    devices: a.devices,
    durationMs,
    arrivalOverMs,
    gracefulStopMs,
    seed: a.seed,
    workers: a.workers,
    ...(a.maxInFlight !== undefined ? { maxInFlight: a.maxInFlight } : {}),
    ...(tickMs ? { tickMs } : {}),
    ...(logMemoryBytes !== undefined ? { logMemoryBytes } : {}),
    metricsPort: a.metricsPort,
    ...(metricsHostArg(a.metricsHost) !== undefined ? { metricsHost: metricsHostArg(a.metricsHost)! } : {}),
    metricsLingerMs,
    summaryJson: a.summaryJson,
    ...(outputs.length > 0 ? { outputs } : {}),
    ...(a.junit !== undefined ? { junit: String(a.junit) } : {}),
    ...(a.target !== undefined ? { targetEmbedded: true as const } : {}),
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
    // The HTML report is written as soon as the summary exists, before /metrics lingers.
    onSummary: (result) => {
      if (a.report === undefined || !result.summary) return;
      try {
        writeHtmlReport(String(a.report), result.summary);
        console.error(`evesim: HTML report written to ${String(a.report)}`);
      } catch (e) {
        console.error(`evesim: --report ${String(a.report)}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
        if (result.exitCode === 0) result.exitCode = 2;
      }
    },
  });
  return exitCode;
}

/** Why `text` cannot be a controller URL, or undefined when it can (checked before anything starts). */
export function controllerUrlProblem(text: string): string | undefined {
  return httpUrlProblem(text, 'https://127.0.0.1:8443');
}

/** Why `--controller-v1 URL` cannot be taken: API v1 is mutual TLS, so only https. */
export function controllerV1UrlProblem(text: string): string | undefined {
  const problem = httpUrlProblem(text, 'https://127.0.0.1:8445');
  if (problem) return problem;
  return new URL(text).protocol === 'https:' ? undefined : `API v1 is mutual TLS: an https:// URL is needed, got "${text}"`;
}

/** --metrics-host, else $EVESIM_METRICS_HOST (the container image sets 0.0.0.0 so that a Prometheus
 *  in another pod can scrape it), else undefined: the runner's 127.0.0.1. */
export function metricsHostArg(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (flag !== undefined) return flag;
  const fromEnv = env['EVESIM_METRICS_HOST'];
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;
}

/** Why `--target VALUE` cannot be taken (only `embedded` can; a real controller is --controller). */
export function targetArgProblem(value: string, withController: boolean): string | undefined {
  if (value !== 'embedded') {
    return `only "embedded" can be given here (got "${value}"); for a real controller give --controller URL with --root-ca, --onboard-cert and --onboard-key`;
  }
  if (withController) return '--target embedded and --controller contradict each other; give one';
  return undefined;
}
