// Runs a scenario from the main thread, as a list of phases (src/runner/phases/), each one screen:
//   prepare-fleet   load the scenario, check options and target files, open the fleet state
//   start-servers   embedded controller (or the real one), LPS sites, metrics server, progress line
//   start-workers   one piscina worker per shard loads its identities; fleet map to the controller
//   run-timeline    every worker starts at one instant; controller and LPS timeline actions
//   drain           devices deliver their queues, workers report (or are given up on)
//   summarise       RunSummary, thresholds, report, summary JSON, exit code
// Whatever happens, what the phases started is undone in reverse order. Exit codes: 0 all
// thresholds passed, 1 a threshold failed (or a worker died), 2 bad input.

import { ScenarioError } from '../scenario/scenario-error.js';
import type { ControllerAdminApi } from './controller-admin.js';
import type { StartEmbeddedLps } from './lps/lps-sites.js';
import { drain } from './phases/drain.js';
import { InputError } from './phases/input-error.js';
import { prepareFleet } from './phases/prepare-fleet.js';
import { runTimeline } from './phases/run-timeline.js';
import { startServers } from './phases/start-servers.js';
import { startWorkers } from './phases/start-workers.js';
import { summarise } from './phases/summarise.js';
import type { RunSummary } from './summary-json.js';

export interface RunScenarioOptions {
  scenarioFile: string;
  /** Scale the fleet to this many devices. */
  devices?: number;
  durationMs?: number;
  /** `--arrival-over`: devices come online spread evenly over this window, ms. */
  arrivalOverMs?: number;
  /** --graceful-stop: how long devices may deliver their queues after the duration, ms. */
  gracefulStopMs?: number;
  seed?: number;
  /** Worker threads; default one per core (never more than devices). */
  workers?: number;
  /** Serve Prometheus metrics on 127.0.0.1:PORT/metrics during the run. */
  metricsPort?: number;
  summaryJson?: string;
  /** --record: every exchange goes to DIR/worker-<n>/. */
  recordDir?: string;
  /** Fleet state (identities, controller PKI); default .evesim-state in the current directory. */
  stateDir?: string;
  /** A real controller instead of the scenario's target. */
  controller?: { url: string; rootCaFile: string; onboardCertFile: string; onboardKeyFile: string; insecure: boolean };
  /** No live progress line. */
  quiet?: boolean;
  /** Starts the embedded controller (the CLI passes startControllerInThread); see defaultEmbeddedController. */
  startEmbeddedController?: StartEmbeddedController;
  /** Starts a site's embedded LPS (the CLI passes startLpsInThread); default: a lazy import of it. */
  startLps?: StartEmbeddedLps;
  /** Where the report and messages go (tests); default process.stdout / process.stderr. */
  out?: (text: string) => void;
  err?: (text: string) => void;
  /** The compiled worker file (tests); default: found next to the compiled runner (worker-file.ts). */
  workerFile?: string;
}

export interface RunScenarioResult {
  exitCode: number;
  /** Absent when the run never started (bad input). */
  summary?: RunSummary;
}

/** What the runner needs of a started embedded controller (startControllerInThread's result fits). */
export interface EmbeddedController {
  url: string;
  adminUrl: string;
  /** Controller API v1 (mutual TLS) base URL, when the controller serves it. */
  v1Url?: string;
  rootCaPem: string;
  admin: ControllerAdminApi;
  stop(): Promise<void>;
}

/** The subset of the controller's options the runner sets. */
export interface EmbeddedControllerOptions {
  stateDir: string;
  onboardingCaPems: string[];
}

export type StartEmbeddedController = (opts: EmbeddedControllerOptions) => Promise<EmbeddedController>;

export async function runScenario(opts: RunScenarioOptions): Promise<RunScenarioResult> {
  const out = opts.out ?? ((t: string) => void process.stdout.write(t));
  const err = opts.err ?? ((t: string) => void process.stderr.write(t));
  try {
    return await runPhases(opts, out, err);
  } catch (e) {
    if (e instanceof ScenarioError || e instanceof InputError) {
      err(`evesim: ${e.message}\n`);
      return { exitCode: 2 };
    }
    throw e;
  }
}

async function runPhases(opts: RunScenarioOptions, out: (t: string) => void, err: (t: string) => void): Promise<RunScenarioResult> {
  const ctx = prepareFleet(opts, out, err);
  try {
    const servers = await startServers(ctx);
    const workers = await startWorkers(ctx, servers);
    const started = runTimeline(ctx, servers, workers);
    const drained = await drain(ctx, servers, workers, started);
    return await summarise(ctx, servers, started, drained);
  } finally {
    await ctx.cleanups.runAll(err);
  }
}
