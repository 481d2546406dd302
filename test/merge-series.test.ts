// `evesim merge` with the shards' time series: requests, errors and findings summed per interval by
// time (shards placed at their own start's offset), per-interval percentiles dropped (the summaries
// hold no per-interval histograms), events once, thresholds with a window judged on the merged
// counts and unable to judge a windowed percentile.

import { describe, expect, it } from 'vitest';
import type { FleetDelta } from '../src/fleet/fleet-delta.js';
import { FleetAggregate } from '../src/runner/aggregate.js';
import { buildMeasuredRun } from '../src/runner/build-summary.js';
import { mergeSummaries } from '../src/runner/merge-summaries.js';
import { SeriesRecorder } from '../src/runner/series/series-recorder.js';
import { ThresholdWindows } from '../src/runner/series/threshold-windows.js';
import { summaryToJson, type RunSummary } from '../src/runner/summary-json.js';
import { evaluateThresholds, noThresholdFailed } from '../src/runner/thresholds.js';
import { parseThreshold } from '../src/scenario/parse-threshold.js';
import { syntheticDelta } from './fakes/synthetic-delta.js';

const STARTED = Date.UTC(2026, 10, 24, 12);
const THRESHOLDS = ['config.count == 90 after 1s', 'config.p99 < 1s after 1s', 'errors.count == 5 during 2s..4s'];

interface Plan {
  index: number;
  /** Shards of the fleet (default 2). */
  count?: number;
  startedAtMs: number;
  seconds: number;
  /** Config requests a second, and errors a second. */
  perSecond: number;
  errors: number;
  maxIntervals?: number;
  withoutSeries?: boolean;
}

function shardSummary(p: Plan): RunSummary {
  const thresholds = THRESHOLDS.map((t) => parseThreshold(t));
  const recorder = new SeriesRecorder({ startAtMs: p.startedAtMs, ...(p.maxIntervals ? { maxIntervals: p.maxIntervals } : {}) });
  const windows = new ThresholdWindows(thresholds);
  recorder.onInterval((_, f) => windows.addFigures(f));
  const agg = new FleetAggregate();
  agg.onDelta((d) => recorder.add(d));
  for (let s = 0; s < p.seconds; s++) {
    const d: FleetDelta = syntheticDelta({ atMs: p.startedAtMs + (s + 1) * 1000, latencies: { config: Array(p.perSecond).fill(20 + s) }, errors: p.errors ? { config: p.errors } : {}, onboarded: 2 });
    agg.merge(d);
  }
  recorder.event(STARTED + 2500, 'action', 'reboot group=a');
  recorder.finish();
  const measured = buildMeasuredRun({
    scenario: { name: 'merge-series', file: 'merge-series.yaml', seed: 1, thresholds },
    shard: { index: p.index, count: p.count ?? 2 },
    target: 'embedded',
    startedAtMs: p.startedAtMs,
    durationMs: p.seconds * 1000,
    totalDevices: 2,
    aggregate: agg,
    undelivered: {},
    generator: { workers: [{ worker: 0, eventLoopLagP99Ms: 2 }], mainEventLoopLagP99Ms: 1, cpuPercent: 5 },
  });
  if (!p.withoutSeries) measured.series = recorder.series();
  const results = evaluateThresholds(thresholds, measured, windows);
  return JSON.parse(summaryToJson({ ...measured, thresholds: results, exitCode: noThresholdFailed(results) ? 0 : 1 })) as RunSummary;
}

const asFiles = (summaries: RunSummary[]) => summaries.map((data, i) => ({ file: `shard-${i}.json`, data: data as unknown }));

describe('evesim merge: the series', () => {
  it('sums requests and errors per interval by time, drops per-interval percentiles, keeps each event once', () => {
    const a = shardSummary({ index: 0, startedAtMs: STARTED, seconds: 5, perSecond: 10, errors: 0 });
    const b = shardSummary({ index: 1, startedAtMs: STARTED + 1000, seconds: 5, perSecond: 10, errors: 1 });
    expect(a.series!.intervals[0]!.endpoints.config!.p99Ms).toBeGreaterThan(0);
    const { summary } = mergeSummaries(asFiles([a, b]));
    const s = summary.series!;
    expect(s.intervalMs).toBe(1000);
    expect(s.intervals.map((i) => i.tMs)).toEqual([0, 1000, 2000, 3000, 4000, 5000]);
    expect(s.intervals.map((i) => i.endpoints.config?.requests)).toEqual([10, 20, 20, 20, 20, 10]);
    expect(s.intervals.map((i) => i.endpoints.config?.errors)).toEqual([0, 1, 1, 1, 1, 1]);
    // No percentile the merge could not compute exactly.
    for (const i of s.intervals) expect(Object.keys(i.endpoints.config!).sort()).toEqual(['errors', 'requests']);
    const total = s.intervals.reduce((n, i) => n + (i.endpoints.config?.requests ?? 0), 0);
    expect(total).toBe(summary.endpoints.config!.count);
    expect(s.intervals[1]!.devices).toEqual({ onboarded: 4 });
    expect(s.intervals[1]!.workers.map((w) => w.worker)).toEqual([0, 1]);
    // Both shards marked the same action at the same instant: one event.
    expect(s.events).toEqual([{ tMs: 2500, kind: 'action', label: 'reboot group=a' }]);
    expect(s.intervals[2]!.events).toEqual(s.events);
  });

  it('judges windowed counts on the merged series; a windowed percentile cannot be judged and fails', () => {
    const a = shardSummary({ index: 0, startedAtMs: STARTED, seconds: 5, perSecond: 10, errors: 0 });
    const b = shardSummary({ index: 1, startedAtMs: STARTED + 1000, seconds: 5, perSecond: 10, errors: 1 });
    const { summary } = mergeSummaries(asFiles([a, b]));
    const [count, p99, errors] = summary.thresholds;
    expect(count).toMatchObject({ status: 'passed', actual: 90 });
    expect(p99).toMatchObject({ status: 'failed', actual: null });
    expect(p99!.detail).toContain('a merged summary does not hold');
    expect(errors).toMatchObject({ status: 'failed', actual: 2 });
  });

  it('merges at the coarsest interval length a shard kept, counts conserved', () => {
    const a = shardSummary({ index: 0, startedAtMs: STARTED, seconds: 9, perSecond: 3, errors: 0, maxIntervals: 4 });
    const b = shardSummary({ index: 1, startedAtMs: STARTED, seconds: 9, perSecond: 5, errors: 0 });
    expect(a.series!.intervalMs).toBe(4000);
    const s = mergeSummaries(asFiles([a, b])).summary.series!;
    expect(s.intervalMs).toBe(4000);
    expect(s.intervals.map((i) => [i.tMs, i.durationMs])).toEqual([
      [0, 4000],
      [4000, 4000],
      [8000, 1000],
    ]);
    expect(s.intervals.map((i) => i.endpoints.config?.requests)).toEqual([32, 32, 8]);
  });

  it("keeps a single shard's series as it is, percentiles included", () => {
    const a = shardSummary({ index: 0, count: 1, startedAtMs: STARTED, seconds: 3, perSecond: 4, errors: 0 });
    expect(a.series!.intervals[0]!.endpoints.config!.p50Ms).toBeGreaterThan(0);
    expect(mergeSummaries(asFiles([a])).summary.series).toEqual(a.series);
  });

  it('has no series when a shard has none (an older version), rather than a partial one', () => {
    const a = shardSummary({ index: 0, startedAtMs: STARTED, seconds: 3, perSecond: 1, errors: 0 });
    const b = shardSummary({ index: 1, startedAtMs: STARTED, seconds: 3, perSecond: 1, errors: 0, withoutSeries: true });
    expect(mergeSummaries(asFiles([a, b])).summary.series).toBeUndefined();
  });
});
