// Phase 5: the end of the run. After the duration (or once the caller ended the run phase early)
// the workers drain (devices deliver their queues, up to gracefulStop, paced as EVE sends a backlog
// from seeded starts spread over the window: src/device/core/graceful-drain.ts) and report; a worker stuck
// past the end is given up on. What they handed back (final deltas, undelivered messages, health,
// the drain) is collected by worker-results.ts.

import os from 'node:os';
import { DEFAULT_GRACEFUL_STOP_MS } from '../../scenario/scenario-defaults.js';
import type { Drained, Servers, Started, Workers } from './phase-results.js';
import type { RunContext } from './run-context.js';
import { settleBy } from './settle-by.js';
import { collectWorkerResults } from './worker-results.js';
import { machineBusyPercent, sampleMachineCpu } from '../machine-cpu.js';

/** How long workers get after the planned end to stop their devices and report. */
const STOP_GRACE_MS = 30_000;

export async function drain(ctx: RunContext, servers: Servers, workers: Workers, started: Started): Promise<Drained> {
  const { err, scenario, aggregate } = ctx;
  const { progress } = servers;
  const { runPhase } = started;
  const gracefulStopMs = scenario.gracefulStopMs ?? DEFAULT_GRACEFUL_STOP_MS;
  let finished = false;
  if (progress && gracefulStopMs > 0) {
    void runPhase.ended.then(() => {
      if (!finished) progress.setNote(`draining: devices deliver what they have queued at EVE's pace (up to ${formatSeconds(gracefulStopMs)})`);
    });
  }
  // A worker stuck in device code past the end is given up on (pool.destroy() ends its thread in
  // cleanup); its figures since its last delta are lost, and the run fails. The deadline counts
  // from the planned end, or from the early end once the caller ended the run phase.
  const lateReason = `did not finish within ${STOP_GRACE_MS / 1000} s after the end of the run and its drain (stuck in device code?); its last second of figures is lost`;
  const giveUpAfterMs = gracefulStopMs + STOP_GRACE_MS;
  const results = await Promise.race([
    settleBy(workers.tasks, runPhase.plannedEndMs + giveUpAfterMs, lateReason),
    runPhase.ended.then((endedAtMs) => settleBy(workers.tasks, endedAtMs + giveUpAfterMs, lateReason)),
  ]);
  finished = true;
  // The measured window: the planned end, the early end, or earlier when stopped (Ctrl-C);
  // stopping takes a moment after it, which is not part of the run.
  const endMs = runPhase.windowEndMs();
  const cpu = process.cpuUsage(started.cpuStart);
  const machineCpuPercent = machineBusyPercent(started.machineCpuStart, sampleMachineCpu(), os.availableParallelism());
  progress?.stop();

  return { endMs, cpu, machineCpuPercent, ...collectWorkerResults(results, gracefulStopMs, aggregate, err) };
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}
