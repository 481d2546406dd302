// Phase 5: the end of the run. After the duration the workers drain (devices deliver their queues,
// up to gracefulStop) and report; a worker stuck past the end is given up on. Collects what the
// workers handed back: final deltas, undelivered messages, their health and the drain.

import type { ShardResult } from '../../fleet/worker-protocol.js';
import { DEFAULT_GRACEFUL_STOP_MS } from '../../scenario/scenario-defaults.js';
import type { DrainSummary, RunSummary } from '../summary-json.js';
import { reason, round1, type RunContext } from './run-context.js';
import type { Started } from './run-timeline.js';
import type { Servers } from './start-servers.js';
import type { Workers } from './start-workers.js';

/** How long workers get after the planned end to stop their devices and report. */
const STOP_GRACE_MS = 30_000;

export interface Drained {
  /** End of the measured window, epoch ms: the planned end, or earlier when stopped (Ctrl-C). */
  endMs: number;
  /** Process CPU use since the start. */
  cpu: NodeJS.CpuUsage;
  undelivered: Record<string, number>;
  workerHealth: RunSummary['generator']['workers'];
  /** A worker failed or was given up on: the run fails. */
  workerFailed: boolean;
  drain?: DrainSummary;
}

export async function drain(ctx: RunContext, servers: Servers, workers: Workers, started: Started): Promise<Drained> {
  const { err, scenario, cleanups, aggregate } = ctx;
  const { progress } = servers;
  const { startAtMs } = started;
  const gracefulStopMs = scenario.gracefulStopMs ?? DEFAULT_GRACEFUL_STOP_MS;
  if (progress && gracefulStopMs > 0) {
    const note = setTimeout(
      () => progress.setNote(`draining: devices deliver what they have queued (up to ${formatSeconds(gracefulStopMs)})`),
      Math.max(0, startAtMs + scenario.durationMs - Date.now()),
    );
    cleanups.add(() => clearTimeout(note));
  }
  // A worker stuck in device code past the end is given up on (pool.destroy() ends its thread in
  // cleanup); its figures since its last delta are lost, and the run fails.
  const results = await settleBy(workers.tasks, startAtMs + scenario.durationMs + gracefulStopMs + STOP_GRACE_MS);
  // The measured window: the planned end, or earlier when stopped (Ctrl-C); stopping takes a
  // moment after it, which is not part of the run.
  const endMs = Math.min(Date.now(), startAtMs + scenario.durationMs);
  const cpu = process.cpuUsage(started.cpuStart);
  progress?.stop();

  const undelivered: Record<string, number> = {};
  const workerHealth: RunSummary['generator']['workers'] = [];
  let workerFailed = false;
  results.forEach((r, workerId) => {
    if (r.status === 'rejected') {
      workerFailed = true;
      err(`evesim: worker ${workerId} failed: ${reason(r.reason)}\n`);
      // Its health from the deltas it sent (worst 1 s interval), rather than nothing.
      const seen = aggregate.workers.get(workerId);
      if (seen) {
        workerHealth.push({ worker: workerId, eventLoopLagP99Ms: round1(seen.worstLoopP99Ms) });
        for (const [k, v] of Object.entries(seen.undelivered)) undelivered[k] = (undelivered[k] ?? 0) + v;
      }
      return;
    }
    const res = r.value;
    aggregate.merge(res.finalDelta);
    for (const [k, v] of Object.entries(res.undelivered)) undelivered[k] = (undelivered[k] ?? 0) + v;
    workerHealth.push({
      worker: res.workerId,
      eventLoopLagP99Ms: round1(res.loop.p99Ms),
      heapPeakMiB: round1(res.memory.heapUsedPeak / 2 ** 20),
      ...(res.memory.settledBytesPerDevice !== undefined ? { settledKiBPerDevice: round1(res.memory.settledBytesPerDevice / 1024) } : {}),
      ...(res.memory.atSample
        ? {
            atMemorySample: {
              inFlight: res.memory.atSample.inFlight,
              queuedReliable: res.memory.atSample.backlog.info + res.memory.atSample.backlog.logs + res.memory.atSample.backlog.flowlog,
            },
          }
        : {}),
    });
    if (res.record) {
      err(`evesim: recorded ${res.record.exchanges} exchanges in ${res.record.dir}${res.record.dropped ? ` (${res.record.dropped} dropped)` : ''}\n`);
    }
  });
  const ok = results.filter((r): r is PromiseFulfilledResult<ShardResult> => r.status === 'fulfilled').map((r) => r.value);
  const drained = drainSummary(ok, gracefulStopMs, workerFailed);
  if (ok.length > 0) {
    const heap = ok.reduce((a, r) => a + r.memory.heapUsedPeak, 0);
    const inFlight = ok.reduce((a, r) => a + r.inFlightAtEnd, 0);
    const busy = ok.map((r) => `w${r.workerId} ${(r.loop.meanUtilisation * 100).toFixed(0)}%`).join(', ');
    err(
      `evesim: workers: heap peak ${(heap / 2 ** 20).toFixed(1)} MiB (garbage included; bench/steady-state.js measures live memory per device), ` +
        `busy ${busy}, ${inFlight} requests in flight at the end (not counted)\n`,
    );
  }
  return { endMs, cpu, undelivered, workerHealth, workerFailed, ...(drained ? { drain: drained } : {}) };
}

/** Settles every task, or marks those still running at `deadline` (epoch ms) as failed. */
async function settleBy<T>(tasks: Promise<T>[], deadline: number): Promise<PromiseSettledResult<T>[]> {
  const states: (PromiseSettledResult<T> | undefined)[] = tasks.map(() => undefined);
  tasks.forEach((t, i) =>
    t.then(
      (value) => (states[i] = { status: 'fulfilled', value }),
      (reason: unknown) => (states[i] = { status: 'rejected', reason }),
    ),
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(tasks),
    new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, deadline - Date.now())))),
  ]);
  clearTimeout(timer);
  return states.map(
    (s) =>
      s ?? {
        status: 'rejected',
        reason: new Error(`did not finish within ${STOP_GRACE_MS / 1000} s after the end of the run and its drain (stuck in device code?); its last second of figures is lost`),
      },
  );
}

/** The drain as the summary reports it: the slowest worker's time; absent when no worker drained. */
function drainSummary(results: ShardResult[], gracefulStopMs: number, workerFailed: boolean): DrainSummary | undefined {
  const drained = results.filter((r) => r.drain !== undefined);
  if (drained.length === 0) return undefined;
  const leftAtStop: Record<string, number> = {};
  for (const r of drained) for (const [k, v] of Object.entries(r.drain!.leftAtStop)) leftAtStop[k] = (leftAtStop[k] ?? 0) + v;
  return {
    gracefulStopMs,
    durationMs: Math.round(Math.max(...drained.map((r) => r.drain!.ms))),
    complete: !workerFailed && drained.length === results.length && drained.every((r) => r.drain!.complete),
    leftAtStop,
  };
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}
