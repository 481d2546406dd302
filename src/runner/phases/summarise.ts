// Phase 6: the verdict. Builds the run summary from the merged figures (with each capability's
// section: attestation outcomes, local profile servers), judges the thresholds, prints the report,
// writes the summary JSON and decides the exit code: 0 all passed, 1 a threshold failed or a worker
// died.

import { judgeSaturation } from '../saturation-verdict.js';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { devicesByApi } from '../api-v1/api-breakdown.js';
import { buildMeasuredRun } from '../build-summary.js';
import { renderJUnit } from '../junit.js';
import { registerConflicts } from '../register-conflicts.js';
import { buildFaultSummary } from '../faults/fault-summary.js';
import { renderReport } from '../report-table.js';
import type { RunScenarioResult } from '../run-options.js';
import { writeSummaryJson, type RunSummary } from '../summary-json.js';
import { noThresholdFailed, evaluateThresholds } from '../thresholds.js';
import type { Drained, Servers, Started } from './phase-results.js';
import type { ShardSummary } from '../shard-summary.js';
import { round1, type RunContext } from './run-context.js';
import { markAbortingThreshold } from '../series/abort-on-fail.js';

/** The groups with the shard's device counts (the whole groups without --shard). */
function shardGroups<G extends { count: number }>(groups: readonly G[], plan: RunContext['plan']): G[] {
  return groups.map((g, i) => ({ ...g, count: plan.groups[i]!.devices }));
}

export async function summarise(ctx: RunContext, servers: Servers, started: Started, drained: Drained): Promise<RunScenarioResult> {
  const { opts, out, scenario } = ctx;
  const { startAtMs, mainLoop } = started;
  const wallMs = Math.max(1, drained.endMs - startAtMs);
  const cores = os.availableParallelism();
  const measured = buildMeasuredRun({
    scenario: { name: scenario.name, file: scenario.file, seed: scenario.seed, thresholds: scenario.thresholds, groups: scenario.groups },
    target: ctx.external ? ctx.external.url : 'embedded',
    startedAtMs: startAtMs,
    durationMs: wallMs,
    totalDevices: ctx.totalDevices,
    heapGrowingPercent: ctx.heapGrowingPercent,
    devicesByApi: devicesByApi(shardGroups(scenario.groups, ctx.plan)),
    aggregate: ctx.aggregate,
    // A shard of several: the merge (evesim merge) puts the shards together again.
    ...(ctx.plan.shard.count > 1 ? { shard: { index: ctx.plan.shard.index, count: ctx.plan.shard.count } } : {}),
    ...(ctx.fleetId !== undefined ? { fleetId: ctx.fleetId } : {}),
    undelivered: drained.undelivered,
    ...(drained.drain ? { drain: drained.drain } : {}),
    generator: {
      workers: drained.workerHealth,
      mainEventLoopLagP99Ms: round1(mainLoop.summary().p99Ms),
      cpuPercent: round1(((drained.cpu.user + drained.cpu.system) / 1000 / (wallMs * cores)) * 100),
      ...(drained.machineCpuPercent !== undefined ? { machineCpuPercent: round1(drained.machineCpuPercent) } : {}),
      rssPeakBytes: started.rss.stop(),
      ...(opts.tickMs ? { tickMs: opts.tickMs } : {}),
    },
  });
  mainLoop.stop();
  measured.series = started.series.finish();
  const faults = buildFaultSummary(scenario, drained.faults);
  if (faults) measured.faults = faults;
  // Every worker's latest delta (a failed worker's last one too) carries its figures so far.
  const connections = ctx.aggregate.ownConnections();
  if (connections) measured.connections = connections;
  for (const c of servers.capabilities) await c.summarise?.(measured);
  const thresholds = markAbortingThreshold(evaluateThresholds(scenario.thresholds, measured, started.series.windows), started.series.aborted());
  const exitCode = drained.workerFailed || !noThresholdFailed(thresholds) ? 1 : 0;
  started.series.end(exitCode, Math.round(wallMs));
  const { shard, fleetDevices, shardDevices } = ctx.plan;
  const conflicts = registerConflicts(measured);
  const summary: RunSummary & ShardSummary = {
    ...measured,
    ...(conflicts ? { registerConflicts: conflicts } : {}),
    shard: { index: shard.index, count: shard.count, devices: shardDevices, fleetDevices, fleetId: ctx.fleetId },
    thresholds,
    exitCode,
    // Last, over every figure above (and the time series, when the run has one).
    saturation: judgeSaturation(measured),
  };
  if (shard.count > 1) out(`evesim: shard ${shard.index}/${shard.count}: ${shardDevices} of ${fleetDevices} devices, fleet id ${ctx.fleetId}; figures and thresholds are this shard's\n`);
  out(renderReport(summary));
  if (opts.summaryJson) writeSummaryJson(opts.summaryJson, summary);
  if (opts.junit) writeFileSync(opts.junit, renderJUnit(summary));
  return { exitCode, summary };
}
