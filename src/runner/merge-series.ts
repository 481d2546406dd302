// `evesim merge` for the shards' time series (summary.series). What is exact and what is not:
//   - requests, errors and findings per interval are summed by time: each shard's interval is
//     placed at its own start instant's offset from the earliest shard's start, in intervals of the
//     longest length any shard kept (a shard that merged neighbours to 2 s makes the merge 2 s);
//     shards started together (--start-at) line up exactly, others to within one interval;
//   - latency percentiles are DROPPED: the summary keeps no per-interval histograms, and a p99 of
//     shards cannot be had from their p99s (the whole-run percentiles stay exact, from the
//     mergeable histograms);
//   - devices and queues (gauges at the end of an interval) are summed over the shards' last
//     interval in each merged one; workers are listed shard after shard, renumbered as in
//     generator.workers; events are the union (a controller-side action every shard marked once
//     is one event).
// Without a series in every shard there is none in the merge rather than a partial one; a single
// shard's series is kept as it is.

import { MAX_SERIES_INTERVALS, type IntervalWorker, type RunEvent, type RunInterval, type RunSeries } from './run-series.js';

export interface ShardSeries {
  series: RunSeries | undefined;
  /** The shard's start instant, epoch ms. */
  startedAtMs: number;
  /** Workers of the shard (for renumbering). */
  workers: number;
}

export function mergeSeries(shards: readonly ShardSeries[]): RunSeries | undefined {
  if (shards.length === 0 || shards.some((s) => !s.series)) return undefined;
  // One shard is its own merge, percentiles and all.
  if (shards.length === 1) return JSON.parse(JSON.stringify(shards[0]!.series)) as RunSeries;
  const start = Math.min(...shards.map((s) => s.startedAtMs));
  let length = Math.max(...shards.map((s) => s.series!.intervalMs));
  const endMs = Math.max(...shards.flatMap((s) => s.series!.intervals.map((i) => s.startedAtMs - start + i.tMs + i.durationMs)), 0);
  while (Math.ceil(endMs / length) > MAX_SERIES_INTERVALS) length *= 2;

  const buckets = new Map<number, { parts: { shard: number; i: RunInterval }[] }>();
  shards.forEach((s, shard) => {
    const offset = s.startedAtMs - start;
    for (const i of s.series!.intervals) {
      const k = Math.floor((offset + i.tMs) / length);
      let b = buckets.get(k);
      if (!b) buckets.set(k, (b = { parts: [] }));
      b.parts.push({ shard, i });
    }
  });
  const workerBase: number[] = [];
  shards.reduce((n, s, k) => ((workerBase[k] = n), n + s.workers), 0);

  const intervals: RunInterval[] = [];
  const last = Math.max(-1, ...buckets.keys());
  // The last one reaches as far as the shards' data does.
  for (let k = 0; k <= last; k++) intervals.push(mergeBucket(k * length, Math.min(length, endMs - k * length), buckets.get(k)?.parts ?? [], workerBase));

  const seen = new Set<string>();
  const events: RunEvent[] = [];
  shards.forEach((s) => {
    const offset = s.startedAtMs - start;
    for (const e of s.series!.events) {
      const moved = { ...e, tMs: e.tMs + offset };
      const key = `${moved.tMs}|${moved.kind}|${moved.label}`;
      if (!seen.has(key)) {
        seen.add(key);
        events.push(moved);
      }
    }
  });
  events.sort((a, b) => a.tMs - b.tMs);
  for (const e of events) {
    const i = intervals[Math.floor(e.tMs / length)];
    if (i) i.events.push(e);
  }
  return { intervalMs: length, intervals, events };
}

function mergeBucket(tMs: number, durationMs: number, parts: readonly { shard: number; i: RunInterval }[], workerBase: readonly number[]): RunInterval {
  const out: RunInterval = { tMs, durationMs, phase: 'run', endpoints: {}, devices: {}, queued: {}, findings: {}, events: [], workers: [] };
  // The phase of the bucket's start: 'drain' only when every part is the drain's.
  if (parts.length > 0 && parts.every((p) => p.i.phase === 'drain')) out.phase = 'drain';
  const lastOfShard = new Map<number, RunInterval>();
  const workers = new Map<number, IntervalWorker & { parts: number }>();
  for (const { shard, i } of parts) {
    for (const [k, e] of Object.entries(i.endpoints)) {
      const o = (out.endpoints[k] ??= { requests: 0, errors: 0 });
      o.requests += e.requests;
      o.errors += e.errors;
    }
    for (const [k, v] of Object.entries(i.findings)) out.findings[k] = (out.findings[k] ?? 0) + v;
    const prev = lastOfShard.get(shard);
    if (!prev || i.tMs >= prev.tMs) lastOfShard.set(shard, i);
    for (const w of i.workers) {
      const id = workerBase[shard]! + w.worker;
      const o = workers.get(id);
      if (!o) workers.set(id, { ...w, worker: id, parts: 1 });
      else {
        o.loopP99Ms = Math.max(o.loopP99Ms, w.loopP99Ms);
        o.loopMaxMs = Math.max(o.loopMaxMs, w.loopMaxMs);
        o.busy = (o.busy * o.parts + w.busy) / (o.parts + 1);
        o.parts++;
      }
    }
  }
  for (const i of lastOfShard.values()) {
    for (const [k, v] of Object.entries(i.devices)) out.devices[k as keyof RunInterval['devices']] = (out.devices[k as keyof RunInterval['devices']] ?? 0) + (v ?? 0);
    for (const [k, v] of Object.entries(i.queued)) out.queued[k] = (out.queued[k] ?? 0) + v;
  }
  out.workers = [...workers.values()].sort((a, b) => a.worker - b.worker).map(({ parts: _parts, ...w }) => w);
  return out;
}
