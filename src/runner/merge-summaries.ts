// `evesim merge`: the summaries of the shards of one fleet combined into the summary one process
// running the whole fleet would have written. Exact where the figures allow it:
//   - latency percentiles (endpoints, overall, per API) from the sum of the shards' HDR histograms,
//     computed as a run computes them, so they equal those of one recorder that saw every request;
//   - counters summed (requests by status and error, errors, expected rejections, devices,
//     onboarded, lifecycle, undelivered, findings, attestation outcomes, LPS figures, own connections);
//   - LPS command percentiles recomputed over every shard's commands;
//   - rates: requests ÷ the seconds from the earliest shard start to the latest shard end (run and
//     drain), so shards started together give the rate of the whole fleet over the run.
// Per-device threshold bounds count the devices of the merged fleet (mergedThresholds()).
// The rest, which has no exact combination: startedAt is the earliest start, durationMs reaches
// to the latest end, the drain is complete only if every shard's was, the machine is the first
// shard's, generator workers are listed shard after shard (renumbered) and the main-thread lag
// and CPU figures are the worst shard's. The time series: merge-series.ts (counts summed by time,
// per-interval percentiles dropped); thresholds with a window are judged from it.

import { mergeOnboarding } from './onboarding-merge.js';
import { mergeFindingExamples } from './finding-examples.js';
import { judgeSaturation } from './saturation-verdict.js';
import { sumOwnConnections } from '../transport/own-connection-figures.js';
import { commandLatency } from './lps/lps-summary.js';
import type { LpsRunSummary } from './lps/lps-summary.js';
import { emptyEndpointStats, endpointStats } from './endpoint-stats.js';
import { checkShardSet, checkSummaryFile, MergeRefused, type ShardSummary } from './merge-checks.js';
import { commandsOfTimes, encodeHistogram, sumEncodedHistograms, type EncodedHistograms, type MergeableSection } from './mergeable-summary.js';
import type { ApiSummaries, ApiSummary } from './api-v1/api-breakdown.js';
import type { ApiLabel } from '../protocol/api-version.js';
import type { EndpointStats, ExpectedRejection, MeasuredRun, RunSummary } from './summary-json.js';
import { evaluateThresholds, noThresholdFailed } from './thresholds.js';
import { mergedThresholds } from './merge-thresholds.js';
import { mergeSeries } from './merge-series.js';
import { ThresholdWindows } from './series/threshold-windows.js';

export { MergeRefused };

export interface MergedRun {
  summary: RunSummary;
  /** The shards in shard order. */
  shards: ShardSummary[];
  /** Shards that ended 1 without a failed threshold (a worker died): the merge ends 1 too. */
  failedShards: string[];
}

/** Checks and merges parsed summary files; throws MergeRefused naming the file and field. */
export function mergeSummaries(files: readonly { file: string; data: unknown }[]): MergedRun {
  const shards = files.map((f) => checkSummaryFile(f.file, f.data));
  checkShardSet(shards);
  shards.sort((a, b) => (a.summary.mergeable.identity.shard?.index ?? 0) - (b.summary.mergeable.identity.shard?.index ?? 0));
  const measured = mergeMeasured(shards);
  const windows = new ThresholdWindows(measured.mergeable!.thresholds, false);
  for (const i of measured.series?.intervals ?? []) windows.addInterval(i);
  const thresholds = evaluateThresholds(measured.mergeable!.thresholds, measured, windows);
  const failedShards = shards.filter((s) => s.summary.exitCode === 1 && noThresholdFailed(s.summary.thresholds ?? [])).map((s) => s.file);
  const exitCode = failedShards.length > 0 || !noThresholdFailed(thresholds) ? 1 : 0;
  // The merge is the whole fleet again: shard 0 of 1, as a run without --shard says.
  const fleetId = measured.mergeable!.identity.fleetId;
  const shard = fleetId !== undefined ? { shard: { index: 0, count: 1, devices: measured.devices.total, fleetDevices: measured.devices.total, fleetId } } : {};
  return { summary: { ...measured, ...shard, thresholds, exitCode, saturation: judgeSaturation(measured) }, shards, failedShards };
}

function mergeMeasured(shards: readonly ShardSummary[]): MeasuredRun {
  const runs = shards.map((s) => s.summary);
  const ms = runs.map((r) => r.mergeable);
  const first = runs[0]!;
  const start = Math.min(...ms.map((m) => m.startedAtMs));
  // Offsets from the earliest start: a single shard keeps its own figures to the last bit.
  const durationMs = Math.max(...ms.map((m) => m.startedAtMs - start + m.durationMs));
  const seconds = Math.max(...ms.map((m) => (m.startedAtMs - start) / 1000 + m.rateSeconds));

  const lifecycle: Record<string, number> = {};
  for (const r of runs) addCounts(lifecycle, r.devices.byLifecycle as Record<string, number>);
  const devices: MeasuredRun['devices'] = {
    total: sum(runs.map((r) => r.devices.total)),
    onboarded: sum(runs.map((r) => r.devices.onboarded)),
    byLifecycle: lifecycle,
  };

  const histograms = mergeHistograms(ms.map((m) => m.histograms));
  const out: MeasuredRun = {
    scenario: first.scenario,
    scenarioFile: first.scenarioFile,
    seed: first.seed,
    target: first.target,
    startedAt: new Date(start).toISOString(),
    durationMs: Math.round(durationMs),
    machine: first.machine,
    devices,
    ...mergeEndpointSet(runs, ms.map((m) => m.histograms), seconds, shards),
    undelivered: sumFields(runs.map((r) => r.undelivered)),
    findings: {
      total: sum(runs.map((r) => r.findings.total)),
      byKind: sumRecords(runs.map((r) => r.findings.byKind)),
      examples: mergeFindingExamples(runs.map((r) => r.findings.examples)),
    },
    generator: mergeGenerator(runs),
  };
  const onboardingParts = ms.flatMap((m) => (m.onboarding ? [{ onboarding: m.onboarding, startOffsetMs: m.startedAtMs - start }] : []));
  const onboarding = mergeOnboarding(onboardingParts);
  if (onboarding) out.onboarding = onboarding;
  if (runs.some((r) => r.droppedByQuota)) out.droppedByQuota = { logs: sum(runs.map((r) => r.droppedByQuota?.logs ?? 0)) };
  if (runs.some((r) => r.expected)) out.expected = mergeExpected(runs);
  if (runs.some((r) => r.drain)) out.drain = mergeDrain(runs, ms.map((m) => m.histograms.drain), shards);
  if (runs.some((r) => r.attestation)) out.attestation = addDeep(runs.map((r) => r.attestation).filter((a) => a !== undefined));
  if (runs.some((r) => r.byApi)) out.byApi = mergeByApi(runs, seconds, shards);
  if (runs.some((r) => r.lps)) out.lps = mergeLps(runs);
  const connections = sumOwnConnections(runs.map((r) => r.connections));
  if (connections) out.connections = connections;
  const series = mergeSeries(runs.map((r) => ({ series: r.series, startedAtMs: r.mergeable.startedAtMs, workers: r.generator?.workers?.length ?? 0 })));
  if (series) out.series = series;

  const { thresholds, groups } = mergedThresholds(shards);
  const lpsCommands = runs.some((r) => r.mergeable.lpsCommands) ? mergeCommandTimes(ms) : undefined;
  out.mergeable = {
    version: first.mergeable.version,
    // The merge is the whole fleet: no shard.
    identity: { scenario: first.scenario, scenarioFile: first.scenarioFile, seed: first.seed, target: first.target, ...(first.mergeable.identity.fleetId !== undefined ? { fleetId: first.mergeable.identity.fleetId } : {}) },
    startedAtMs: start,
    durationMs,
    rateSeconds: seconds,
    histograms,
    ...(lpsCommands ? { lpsCommands } : {}),
    thresholds,
    groups,
  };
  return out;
}

/** `endpoints` and `overall` of a set of endpoint figures (the run's, or one API's). */
function mergeEndpointSet(
  sets: readonly { endpoints: Record<string, EndpointStats>; overall: EndpointStats }[],
  hists: readonly (EncodedHistograms | undefined)[],
  seconds: number,
  shards: readonly ShardSummary[],
  where = '',
): { endpoints: Record<string, EndpointStats>; overall: EndpointStats } {
  const keys = [...new Set(sets.flatMap((s) => Object.keys(s.endpoints)))];
  const endpoints: Record<string, EndpointStats> = {};
  for (const k of keys) {
    const parts = sets.map((s) => s.endpoints[k]);
    const encoded = hists.map((h, i) => {
      const e = h?.endpoints[k];
      if (e === undefined && (parts[i]?.count ?? 0) > 0) {
        throw new MergeRefused(`${shards[i]!.file}: mergeable.histograms${where}.endpoints["${k}"] is missing although ${k} had requests`);
      }
      return e;
    });
    endpoints[k] = mergeStats(parts, encoded, seconds);
  }
  const overall = mergeStats(sets.map((s) => s.overall), hists.map((h) => h?.overall), seconds);
  return { endpoints, overall };
}

function mergeStats(parts: readonly (EndpointStats | undefined)[], encoded: readonly (string | undefined)[], seconds: number): EndpointStats {
  const present = parts.filter((p) => p !== undefined);
  const hist = sumEncodedHistograms(encoded.filter((e) => e !== undefined));
  const n = { count: sum(present.map((p) => p.count)), errors: sum(present.map((p) => p.errors)), expected: sum(present.map((p) => p.expected ?? 0)) };
  return endpointStats(hist, n, seconds, sumRecords(present.map((p) => p.byStatus)), sumRecords(present.map((p) => p.byError)));
}

function mergeHistograms(all: readonly MergeableSection['histograms'][]): MergeableSection['histograms'] {
  const set = (hs: readonly (EncodedHistograms | undefined)[]): EncodedHistograms => {
    const keys = [...new Set(hs.flatMap((h) => Object.keys(h?.endpoints ?? {})))];
    const endpoints: Record<string, string> = {};
    for (const k of keys) endpoints[k] = encodeHistogram(sumEncodedHistograms(hs.map((h) => h?.endpoints[k]).filter((e) => e !== undefined)));
    return { endpoints, overall: encodeHistogram(sumEncodedHistograms(hs.map((h) => h?.overall).filter((e) => e !== undefined))) };
  };
  const byApi: NonNullable<MergeableSection['histograms']['byApi']> = {};
  for (const api of apiLabels(all.map((h) => h.byApi ?? {}))) byApi[api] = set(all.map((h) => h.byApi?.[api]));
  return { ...set(all), byApi, ...(all.some((h) => h.drain) ? { drain: set(all.map((h) => h.drain)) } : {}) };
}

function mergeByApi(runs: readonly ShardSummary['summary'][], seconds: number, shards: readonly ShardSummary[]): ApiSummaries {
  const out: ApiSummaries = {};
  for (const api of apiLabels(runs.map((r) => r.byApi ?? {}))) {
    const idx = runs.map((r, i) => (r.byApi?.[api] ? i : -1)).filter((i) => i >= 0);
    const parts = idx.map((i) => runs[i]!.byApi![api]!);
    const entry: ApiSummary = mergeEndpointSet(
      parts,
      idx.map((i) => runs[i]!.mergeable.histograms.byApi?.[api]),
      seconds,
      idx.map((i) => shards[i]!),
      `.byApi.${api}`,
    );
    const withDevices = parts.filter((p) => p.devices);
    if (withDevices.length > 0) entry.devices = sumFields(withDevices.map((p) => p.devices!));
    out[api] = entry;
  }
  return out;
}

function mergeExpected(runs: readonly RunSummary[]): NonNullable<MeasuredRun['expected']> {
  const byKey = new Map<string, ExpectedRejection>();
  for (const r of runs) {
    for (const x of r.expected?.rejections ?? []) {
      const key = `${x.endpoint}|${x.status}|${x.reason}`;
      const e = byKey.get(key);
      if (e) e.count += x.count;
      else byKey.set(key, { ...x });
    }
  }
  const rejections = [...byKey.values()].sort(
    (a, b) => a.endpoint.localeCompare(b.endpoint) || a.status.localeCompare(b.status) || a.reason.localeCompare(b.reason),
  );
  return { total: sum(runs.map((r) => r.expected?.total ?? 0)), rejections };
}

function mergeDrain(runs: readonly RunSummary[], hists: readonly (EncodedHistograms | undefined)[], shards: readonly ShardSummary[]): NonNullable<MeasuredRun['drain']> {
  const drains = runs.map((r) => r.drain).filter((d) => d !== undefined);
  const durationMs = Math.max(...drains.map((d) => d.durationMs));
  // The drain's own requests, merged like the run's; rates over the longest drain.
  const tables = runs.some((r) => r.drain?.overall)
    ? mergeEndpointSet(
        runs.map((r) => ({ endpoints: r.drain?.endpoints ?? {}, overall: r.drain?.overall ?? emptyEndpointStats() })),
        hists,
        durationMs / 1000,
        shards,
        '.drain',
      )
    : undefined;
  return {
    gracefulStopMs: Math.max(...drains.map((d) => d.gracefulStopMs)),
    durationMs,
    complete: drains.length === runs.length && drains.every((d) => d.complete),
    leftAtStop: sumRecords(drains.map((d) => d.leftAtStop)),
    ...(tables ?? {}),
  };
}

function mergeGenerator(runs: readonly RunSummary[]): MeasuredRun['generator'] {
  const workers: MeasuredRun['generator']['workers'] = [];
  for (const r of runs) {
    const offset = workers.length;
    for (const w of r.generator?.workers ?? []) workers.push({ ...w, worker: offset + w.worker });
  }
  return {
    workers,
    mainEventLoopLagP99Ms: Math.max(0, ...runs.map((r) => r.generator?.mainEventLoopLagP99Ms ?? 0)),
    cpuPercent: Math.max(0, ...runs.map((r) => r.generator?.cpuPercent ?? 0)),
    ...mergedMachineCpu(runs),
    ...mergedRssPeak(runs),
    ...mergedTick(runs),
  };
}

/** The shards' tick when they all ran on the same one (evesim merge is for one fleet, one command line). */
function mergedTick(runs: readonly RunSummary[]): { tickMs?: number } {
  const ticks = new Set(runs.map((r) => r.generator?.tickMs ?? 0));
  const [only] = [...ticks];
  return ticks.size === 1 && only ? { tickMs: only } : {};
}

/** Shards may share a machine or not: the busiest machine any shard saw (absent when none reported one). */
function mergedMachineCpu(runs: readonly RunSummary[]): { machineCpuPercent?: number } {
  const seen = runs.map((r) => r.generator?.machineCpuPercent).filter((p): p is number => p !== undefined);
  return seen.length > 0 ? { machineCpuPercent: Math.max(...seen) } : {};
}

/** Each shard is a process of its own: the fleet's generators together held at most the sum of
 *  their peaks (memory.rss_per_device divides it by the merged devices). Absent when a shard lacks one. */
function mergedRssPeak(runs: readonly RunSummary[]): { rssPeakBytes?: number } {
  const peaks = runs.map((r) => r.generator?.rssPeakBytes);
  return peaks.every((p): p is number => p !== undefined) ? { rssPeakBytes: peaks.reduce((a, b) => a + b, 0) } : {};
}

function mergeLps(runs: readonly ShardSummary['summary'][]): LpsRunSummary {
  const parts = runs.map((r) => r.lps).filter((l) => l !== undefined);
  // Every shard runs the scenario's sites itself: one entry per site name, with the first address.
  const sites = new Map<string, LpsRunSummary['sites'][number]>();
  for (const p of parts) for (const s of p.sites) if (!sites.has(s.name)) sites.set(s.name, s);
  const commands = commandLatency(commandsOfTimes(mergeCommandTimes(runs.map((r) => r.mergeable))));
  return {
    sites: [...sites.values()],
    commands,
    tokenRejected: addDeep(parts.map((p) => p.tokenRejected)),
    agent: addDeep(parts.map((p) => p.agent)),
    devicesByRadioState: sumRecords(parts.map((p) => p.devicesByRadioState)),
    devicesByGnssState: sumRecords(parts.map((p) => p.devicesByGnssState)),
  };
}

function mergeCommandTimes(ms: readonly MergeableSection[]): NonNullable<MergeableSection['lpsCommands']> {
  const out: NonNullable<MergeableSection['lpsCommands']> = {};
  for (const m of ms) {
    for (const [name, t] of Object.entries(m.lpsCommands ?? {})) {
      const e = (out[name] ??= { issued: 0, ackedMs: [] });
      e.issued += t.issued;
      e.ackedMs.push(...t.ackedMs);
    }
  }
  return out;
}

function apiLabels(records: readonly Partial<Record<ApiLabel, unknown>>[]): ApiLabel[] {
  const order: ApiLabel[] = ['v1', 'v2', 'lps'];
  return order.filter((api) => records.some((r) => r[api] !== undefined));
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

function addCounts(into: Record<string, number>, from: Record<string, number> | undefined): void {
  for (const [k, v] of Object.entries(from ?? {})) into[k] = (into[k] ?? 0) + v;
}

function sumRecords(records: readonly (Record<string, number> | undefined)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) addCounts(out, r);
  return out;
}

/** Field-wise sum of records with the same numeric fields. */
function sumFields<T extends object>(records: readonly T[]): T {
  return addDeep(records);
}

/** Sum of objects whose leaves are counts: numbers add, nested objects are summed key by key. */
function addDeep<T>(parts: readonly T[]): T {
  const out: Record<string, unknown> = {};
  for (const p of parts) {
    for (const [k, v] of Object.entries(p as Record<string, unknown>)) {
      if (typeof v === 'number') out[k] = ((out[k] as number | undefined) ?? 0) + v;
      else if (typeof v === 'object' && v !== null) out[k] = addDeep([out[k] ?? {}, v]);
      else if (!(k in out)) out[k] = v;
    }
  }
  return out as T;
}
