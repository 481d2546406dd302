// Phase 4: the run itself. Starts every worker at one common instant, schedules the timeline
// actions that go through the embedded controller's admin API and those of the capabilities (the
// sites' LPSs), and turns Ctrl-C into an orderly stop (devices stop, what was measured is reported).

import { LoopMonitor } from '../../fleet/loop-monitor.js';
import type { Scenario } from '../../scenario/scenario-types.js';
import { applyTimelineAction, isControllerSide, type ControllerAdminApi } from '../controller-admin.js';
import type { Servers, Started, Workers } from './phase-results.js';
import { reason, type Print, type RunContext } from './run-context.js';
import { broadcast } from './start-workers.js';

export function runTimeline(ctx: RunContext, servers: Servers, workers: Workers): Started {
  const { err, scenario, cleanups } = ctx;
  const { progress, admin } = servers;
  const mainLoop = new LoopMonitor();
  const cpuStart = process.cpuUsage();
  const startAtMs = Date.now() + 250;
  broadcast(workers.ports, { type: 'go', startAtMs });
  progress?.setNote(undefined);
  progress?.start(startAtMs);
  const timelineTimers = scheduleControllerTimeline(scenario, startAtMs, admin, err);
  cleanups.add(() => timelineTimers.forEach(clearTimeout));
  for (const c of servers.capabilities) {
    const timers = c.scheduleTimeline?.(startAtMs) ?? [];
    cleanups.add(() => timers.forEach(clearTimeout));
  }
  const onSigint = () => {
    err('\nevesim: interrupted: stopping devices and reporting what was measured\n');
    broadcast(workers.ports, { type: 'stop' });
  };
  process.once('SIGINT', onSigint);
  cleanups.add(() => void process.off('SIGINT', onSigint));
  const mainLoopSampler = setInterval(() => mainLoop.sample(), 1000);
  cleanups.add(() => clearInterval(mainLoopSampler));
  return { startAtMs, cpuStart, mainLoop };
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
