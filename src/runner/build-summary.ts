// Turns the merged figures of a run into the RunSummary (before thresholds): per-endpoint and
// overall latency percentiles from the merged HDR histograms, counts by status and by transport
// error, devices, undelivered messages, findings and the generator's own health.

import { processAllocator } from '../memory/process-allocator.js';
import { processV8PoolSize } from './v8-pool-size.js';
import os from 'node:os';
import type { FleetAggregate } from './aggregate.js';
import type { DrainSummary, ExpectedRejection, GeneratorHealth, MeasuredRun } from './summary-json.js';
import { phaseEndpointTables } from './phase-endpoint-tables.js';
import { mergeableOnboarding } from './onboarding-merge.js';
import { encodeHistograms, MERGEABLE_VERSION, type BasisGroup, type MergeableSection, type ShardOfFleet } from './mergeable-summary.js';
import type { ThresholdSpec } from '../scenario/scenario-types.js';

export interface SummaryInputs {
  scenario: { name: string; file: string; seed: number; thresholds?: readonly ThresholdSpec[]; groups?: readonly BasisGroup[] };
  /** `--shard i/n`: the part of the fleet this process ran (absent: all of it). */
  shard?: ShardOfFleet;
  /** The fleet id the serials were made with (shards of one fleet share it). */
  fleetId?: string;
  target: string;
  startedAtMs: number;
  durationMs: number;
  totalDevices: number;
  /** The workers' old-generation growth the run set (fleet/worker-heap-flags.ts); absent: not recorded. */
  heapGrowingPercent?: number;
  aggregate: FleetAggregate;
  undelivered: Record<string, number>;
  generator: GeneratorHealth;
  /** The graceful stop, when the run had one. */
  drain?: DrainSummary;
  /** Devices per controller API (api-breakdown.ts devicesByApi); absent: counted as v2. */
  devicesByApi?: Partial<Record<'v1' | 'v2', number>>;
}

export function buildMeasuredRun(i: SummaryInputs): MeasuredRun {
  const agg = i.aggregate;
  // The run's figures leave the drain's requests out (they are in `drain.endpoints`), so rates are
  // over the run's duration, and the drain's over the drain's.
  const seconds = i.durationMs / 1000;
  const { endpoints, overall } = phaseEndpointTables(agg, seconds);
  const rejections: ExpectedRejection[] = [...agg.expected]
    .map(([key, count]) => {
      const [endpoint, status, reason] = key.split('|') as [string, string, string];
      return { endpoint, status, reason, count };
    })
    .sort((a, b) => a.endpoint.localeCompare(b.endpoint) || a.status.localeCompare(b.status) || a.reason.localeCompare(b.reason));

  const und = { info: i.undelivered.info ?? 0, logs: i.undelivered.logs ?? 0, flowlog: i.undelivered.flowlog ?? 0, total: 0 };
  und.total = Object.values(i.undelivered).reduce((a, b) => a + b, 0);

  const cpus = os.cpus();
  return {
    scenario: i.scenario.name,
    scenarioFile: i.scenario.file,
    seed: i.scenario.seed,
    target: i.target,
    startedAt: new Date(i.startedAtMs).toISOString(),
    durationMs: Math.round(i.durationMs),
    machine: { cpus: cpus.length, cpuModel: cpus[0]?.model.trim() ?? 'unknown', node: process.version, allocator: processAllocator(), v8PoolSize: processV8PoolSize(), ...(i.heapGrowingPercent !== undefined ? { heapGrowingPercent: i.heapGrowingPercent } : {}) },
    devices: {
      total: i.totalDevices,
      onboarded: agg.onboardedEver(),
      byLifecycle: withoutZeros(agg.lifecycle()),
    },
    ...(agg.onboarding.summary() ? { onboarding: agg.onboarding.summary()! } : {}),
    endpoints,
    overall,
    undelivered: und,
    droppedByQuota: { logs: agg.logsDroppedByQuota() },
    findings: { total: agg.totalFindings, byKind: Object.fromEntries(agg.findings), examples: agg.findingExamples.toJson() },
    expected: { total: agg.totalExpected, rejections },
    ...(i.drain ? { drain: { ...i.drain, ...drainTables(agg, i.drain) } } : {}),
    byApi: agg.byApi.summarize(seconds, i.devicesByApi ?? { v2: i.totalDevices }),
    generator: i.generator,
    mergeable: mergeableSection(i, seconds),
  };
}

/** The `mergeable` section (mergeable-summary.ts); capabilities add their parts (LPS commands). */
function mergeableSection(i: SummaryInputs, rateSeconds: number): MergeableSection {
  const agg = i.aggregate;
  const byApi: NonNullable<MergeableSection['histograms']['byApi']> = {};
  for (const [api, t] of agg.byApi.apis) byApi[api] = encodeHistograms([...t.endpoints].map(([k, lane]) => [k, lane.hist]), t.all);
  return {
    version: MERGEABLE_VERSION,
    identity: {
      scenario: i.scenario.name,
      scenarioFile: i.scenario.file,
      seed: i.scenario.seed,
      target: i.target,
      ...(i.fleetId !== undefined ? { fleetId: i.fleetId } : {}),
      ...(i.shard ? { shard: { index: i.shard.index, count: i.shard.count } } : {}),
    },
    startedAtMs: i.startedAtMs,
    durationMs: i.durationMs,
    rateSeconds,
    histograms: {
      ...encodeHistograms([...agg.endpoints].map(([k, e]) => [k, e.hist]), agg.all),
      byApi,
      ...(agg.drain.totalRequests > 0 ? { drain: encodeHistograms([...agg.drain.endpoints].map(([k, e]) => [k, e.hist]), agg.drain.all) } : {}),
    },
    ...(mergeableOnboarding(agg.onboarding) ? { onboarding: mergeableOnboarding(agg.onboarding)! } : {}),
    // Plain copies: the summary must not change when the scenario object does.
    thresholds: JSON.parse(JSON.stringify(i.scenario.thresholds ?? [])) as ThresholdSpec[],
    groups: (i.scenario.groups ?? []).map((g) => ({
      name: g.name,
      count: g.count,
      api: g.api,
      ...(g.tpmShare !== undefined ? { tpmShare: g.tpmShare } : {}),
      ...(g.tampered !== undefined ? { tampered: { ...g.tampered } } : {}),
    })),
  };
}

/** The drain's own endpoint tables, its rates over the drain's duration (absent: no request in it). */
function drainTables(agg: FleetAggregate, drain: DrainSummary): Pick<DrainSummary, 'endpoints' | 'overall'> {
  if (agg.drain.totalRequests === 0) return {};
  return phaseEndpointTables(agg.drain, drain.durationMs / 1000);
}

function withoutZeros<K extends string>(r: Record<K, number>): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const [k, v] of Object.entries(r) as [K, number][]) if (v !== 0) out[k] = v;
  return out;
}
