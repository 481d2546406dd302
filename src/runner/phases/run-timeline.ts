// Phase 4: the run itself. Starts every worker at one common instant, schedules the timeline
// actions that go through the embedded controller's admin API and those of the capabilities (the
// sites' LPSs), and turns Ctrl-C into an orderly stop (devices stop, what was measured is reported).
// The caller's endRunPhase signal ends the run phase early, as if the duration were over: the
// workers drain as at the planned end; so does a threshold with abortOnFail that fails (the run's
// time series judges it, series/series-run.ts).
// With --shard every process applies the controller-side actions to its own embedded controller,
// which serves only that shard's devices, so each device sees each action once, as in a single run.
// An `evesim controller` the shards share (--controller --controller-admin) gets them from shard 0
// alone; a real controller without an admin API gets none (prepare-fleet warns).

import { LoopMonitor } from '../../fleet/loop-monitor.js';
import type { Scenario } from '../../scenario/scenario-types.js';
import { applyTimelineAction, isControllerSide, type ControllerAdminApi } from '../controller-admin.js';
import type { Servers, Started, Workers } from './phase-results.js';
import { RunPhaseEnd } from './run-phase-end.js';
import { reason, type Print, type RunContext } from './run-context.js';
import { broadcast } from './start-workers.js';
import { startSeries } from '../series/series-run.js';
import { RssPeak } from '../rss-peak.js';
import { STOP_SIGNALS } from './stop-signals.js';
import { sampleMachineCpu } from '../machine-cpu.js';

/** Lead time between the workers' 'go' and the start, so every worker gets the message first. */
const GO_LEAD_MS = 250;

/**
 * The common start instant: --start-at when given (every shard given the same time starts
 * together, whenever its process started), else a moment after now. A --start-at that preparing
 * the workers overran is kept, so the schedules stay aligned with the other shards': the devices
 * due meanwhile arrive at once.
 */
export function startInstant(ctx: Pick<RunContext, 'startAtMs' | 'now' | 'err'>): number {
  const now = ctx.now();
  if (ctx.startAtMs === undefined) return now + GO_LEAD_MS;
  const lateMs = now - ctx.startAtMs;
  if (lateMs > 0) {
    ctx.err(`evesim: warning: --start-at ${new Date(ctx.startAtMs).toISOString()} passed ${(lateMs / 1000).toFixed(1)} s ago while preparing; starting now on that schedule (devices due meanwhile arrive at once)\n`);
  } else if (-lateMs > 2000) {
    ctx.err(`evesim: waiting ${(-lateMs / 1000).toFixed(1)} s for --start-at ${new Date(ctx.startAtMs).toISOString()}\n`);
  }
  return ctx.startAtMs;
}

export function runTimeline(ctx: RunContext, servers: Servers, workers: Workers): Started {
  const { err, scenario, cleanups, opts } = ctx;
  const { progress, admin } = servers;
  const mainLoop = new LoopMonitor();
  const cpuStart = process.cpuUsage();
  const machineCpuStart = sampleMachineCpu();
  const startAtMs = startInstant(ctx);
  broadcast(workers.ports, { type: 'go', startAtMs });
  const runPhase = new RunPhaseEnd(startAtMs, startAtMs + scenario.durationMs);
  cleanups.add(() => runPhase.dispose());
  progress?.setNote(undefined);
  progress?.start(startAtMs);
  // A controller the shards share (--controller-admin) gets each controller-side action once: from shard 0.
  const appliesControllerActions = !servers.adminShared || ctx.plan.shard.index === 0;
  const timelineTimers = scheduleControllerTimeline(scenario, startAtMs, appliesControllerActions ? admin : undefined, err);
  for (const c of servers.capabilities) timelineTimers.push(...(c.scheduleTimeline?.(startAtMs) ?? []));
  cleanups.add(() => timelineTimers.forEach(clearTimeout));
  // The workers get it after 'go' (one port each, in order), however early the caller fired it.
  // Timeline actions still due belong to the run phase, which is over.
  let ended = false;
  const onEnd = () => {
    if (ended) return;
    ended = true;
    runPhase.end();
    timelineTimers.forEach(clearTimeout);
    broadcast(workers.ports, { type: 'end-run-phase' });
  };
  // The time series (summary.series, --out); a threshold with abortOnFail ends the run phase through onEnd.
  const series = startSeries(ctx, startAtMs, runPhase, onEnd, servers.controllerLoad);
  const signal = opts.endRunPhase;
  if (signal) {
    if (signal.aborted) onEnd();
    else {
      signal.addEventListener('abort', onEnd, { once: true });
      cleanups.add(() => signal.removeEventListener('abort', onEnd));
    }
  }
  // Ctrl-C, or a supervisor's SIGTERM (Kubernetes deleting the pod): the devices stop and the run
  // reports what was measured. A second signal of either kind finds no handler and ends the process.
  const onStopSignal = (signal: NodeJS.Signals) => {
    stopInterruptHandler();
    err(`\nevesim: ${signal === 'SIGINT' ? 'interrupted' : signal}: stopping devices and reporting what was measured\n`);
    broadcast(workers.ports, { type: 'stop' });
  };
  for (const s of STOP_SIGNALS) process.on(s, onStopSignal);
  const stopInterruptHandler = () => STOP_SIGNALS.forEach((s) => process.off(s, onStopSignal));
  cleanups.add(stopInterruptHandler);
  const mainLoopSampler = setInterval(() => mainLoop.sample(), 1000);
  cleanups.add(() => clearInterval(mainLoopSampler));
  const rss = new RssPeak();
  cleanups.add(() => void rss.stop());
  return { startAtMs, cpuStart, machineCpuStart, mainLoop, runPhase, stopInterruptHandler, series, rss };
}

function scheduleControllerTimeline(
  scenario: Scenario,
  startAtMs: number,
  admin: ControllerAdminApi | undefined,
  err: Print,
): NodeJS.Timeout[] {
  if (!admin) return [];
  const groups = scenario.groups.map((g) => g.name);
  // Actions run one after another in timeline order, even when an admin call is slow.
  let chain = Promise.resolve();
  return scenario.timeline.filter(isControllerSide).map((action) =>
    setTimeout(
      () => {
        chain = chain
          .then(() => applyTimelineAction(admin, action, groups))
          .catch((e: unknown) => err(`evesim: timeline action "${action.action}" at ${action.atMs} ms failed: ${reason(e)}\n`));
      },
      Math.max(0, startAtMs + action.atMs - Date.now()),
    ),
  );
}
