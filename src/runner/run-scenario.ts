// Runs a scenario from the main thread, as a list of phases (src/runner/phases/), each one screen:
//   prepare-fleet   load the scenario, check options and target files, open the fleet state
//   start-servers   embedded controller (or the real one), LPS sites, metrics server, progress line
//   start-workers   one piscina worker per shard loads its identities; fleet map to the controller
//   run-timeline    every worker starts at one instant; controller and LPS timeline actions
//   drain           devices deliver their queues, workers report (or are given up on)
//   summarise       RunSummary, thresholds, report, summary JSON, exit code
//   metrics-linger  /metrics stays up for --metrics-linger so Prometheus sees the final figures
// --dry-run stops after checking the inputs and prints the fleet plan (dry-run.ts).
// Whatever happens, what the phases started is undone in reverse order. Exit codes: 0 all
// thresholds passed, 1 a threshold failed (or a worker died), 2 bad input.

import { ScenarioError } from '../scenario/scenario-error.js';
import { drain } from './phases/drain.js';
import { lingerMetrics } from './phases/metrics-linger.js';
import { InputError } from './phases/input-error.js';
import { checkRunInputs, prepareFleet } from './phases/prepare-fleet.js';
import { printDryRun } from './dry-run.js';
import { runTimeline } from './phases/run-timeline.js';
import { startServers } from './phases/start-servers.js';
import { startWorkers } from './phases/start-workers.js';
import { summarise } from './phases/summarise.js';
import type { RunScenarioOptions, RunScenarioResult } from './run-options.js';

export type { EmbeddedController, EmbeddedControllerOptions, RunScenarioOptions, RunScenarioResult, StartEmbeddedController } from './run-options.js';

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
  if (opts.dryRun) return printDryRun(checkRunInputs(opts, out, err));
  const ctx = prepareFleet(opts, out, err);
  try {
    const servers = await startServers(ctx);
    const workers = await startWorkers(ctx, servers);
    const started = runTimeline(ctx, servers, workers);
    const drained = await drain(ctx, servers, workers, started);
    const result = await summarise(ctx, servers, started, drained);
    opts.onSummary?.(result);
    await lingerMetrics(ctx, servers, started);
    return result;
  } finally {
    await ctx.cleanups.runAll(err);
  }
}
