// What the workers hand back at the end of the drain phase: their final deltas
// are merged, undelivered messages added up, each worker's health and the drain summarised. A
// failed worker fails the run; its health and undelivered messages come from its last deltas.

import type { ShardResult } from '../../fleet/worker-protocol.js';
import { sumFaultTallies, type FaultTally } from '../../faults/fault-tally.js';
import type { FleetAggregate } from '../aggregate.js';
import type { DrainSummary, RunSummary } from '../summary-json.js';
import { reason, round1, type Print } from './run-context.js';

/** A share (0..1) to three decimals. */
const round3 = (v: number): number => Math.round(v * 1000) / 1000;

export interface WorkerFigures {
  undelivered: Record<string, number>;
  workerHealth: RunSummary['generator']['workers'];
  /** A worker failed or was given up on: the run fails. */
  workerFailed: boolean;
  drain?: DrainSummary;
  /** What each fault did, summed over the workers that reported (absent: no faults). */
  faults?: FaultTally[];
}

export function collectWorkerResults(
  results: readonly PromiseSettledResult<ShardResult>[],
  gracefulStopMs: number,
  aggregate: FleetAggregate,
  err: Print,
): WorkerFigures {
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
        workerHealth.push({
          worker: workerId,
          eventLoopLagP99Ms: round1(seen.worstLoopP99Ms),
          eventLoopLagMaxMs: round1(seen.worstLoopMaxMs),
          ...(seen.samples > 0 ? { busy: round3(seen.utilisationSum / seen.samples) } : {}),
        });
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
      eventLoopLagMaxMs: round1(res.loop.maxMs),
      busy: round3(res.loop.meanUtilisation),
      heapPeakMiB: round1(res.memory.heapUsedPeak / 2 ** 20),
      ...(res.memory.atSampleUsage
        ? { atSampleMiB: Object.fromEntries(Object.entries(res.memory.atSampleUsage).map(([k, v]) => [k, round1(v / 2 ** 20)])) as NonNullable<RunSummary['generator']['workers'][number]['atSampleMiB']> }
        : {}),
      ...(res.memory.settledBytesPerDevice !== undefined ? { settledKiBPerDevice: round1(res.memory.settledBytesPerDevice / 1024) } : {}),
      ...(res.memory.atSample
        ? {
            atMemorySample: {
              inFlight: res.memory.atSample.inFlight,
              queuedReliable: res.memory.atSample.backlog.info + res.memory.atSample.backlog.logs + res.memory.atSample.backlog.flowlog,
              ...(res.memory.atSample.logFiles
                ? { logFilesKeptKiB: round1(res.memory.atSample.logFiles.keptBytes / 1024), logFilesInMemoryKiB: round1(res.memory.atSample.logFiles.memoryBytes / 1024) }
                : {}),
            },
          }
        : {}),
      ...(res.inFlight ? { inFlight: roundedInFlight(res.inFlight) } : {}),
    });
    if (res.record) {
      err(`evesim: recorded ${res.record.exchanges} exchanges in ${res.record.dir}${res.record.dropped ? ` (${res.record.dropped} dropped)` : ''}\n`);
    }
  });
  const ok = results.filter((r): r is PromiseFulfilledResult<ShardResult> => r.status === 'fulfilled').map((r) => r.value);
  const resumed = ok.reduce((a, r) => a + (r.resumed ?? 0), 0);
  if (resumed > 0) {
    err(`evesim: ${resumed} devices resumed from the state directory (the previous run with this seed was cut off): they kept their UUIDs and booted with reason power-fail instead of onboarding\n`);
  }
  const drain = drainSummary(ok, gracefulStopMs, workerFailed);
  if (ok.length > 0) {
    const heap = ok.reduce((a, r) => a + r.memory.heapUsedPeak, 0);
    const inFlight = ok.reduce((a, r) => a + r.inFlightAtEnd, 0);
    const busy = ok.map((r) => `w${r.workerId} ${(r.loop.meanUtilisation * 100).toFixed(0)}%`).join(', ');
    err(
      `evesim: workers: heap peak ${(heap / 2 ** 20).toFixed(1)} MiB (garbage included; bench/steady-state.js measures live memory per device), ` +
        `busy ${busy}, ${inFlight} requests in flight at the end (counted as unfinished)\n`,
    );
  }
  const faults = sumFaultTallies(ok.map((r) => r.faults));
  return { undelivered, workerHealth, workerFailed, ...(drain ? { drain } : {}), ...(faults ? { faults } : {}) };
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

/** The gate's figures with its milliseconds to a tenth, as the summary's other times. */
function roundedInFlight(f: import('../../transport/in-flight-gate.js').InFlightStats): import('../../transport/in-flight-gate.js').InFlightStats {
  return {
    ...f,
    worstWaitMs: round1(f.worstWaitMs),
    ...(f.waitMsTotal !== undefined ? { waitMsTotal: round1(f.waitMsTotal) } : {}),
    ...(f.handedOnMsTotal !== undefined ? { handedOnMsTotal: round1(f.handedOnMsTotal) } : {}),
  };
}
