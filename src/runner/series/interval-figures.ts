// One interval of the run's series as the recorder keeps it: like RunInterval (run-series.ts), but
// with each endpoint's latencies as a sparse histogram instead of percentiles, so neighbouring
// intervals (and threshold windows) merge exactly; toRunInterval() computes the percentiles.

import type { SparseHistogram } from '../../fleet/latency-histogram.js';
import type { RunEvent, RunInterval } from '../run-series.js';
import { emptySparse, sparsePercentiles, sumSparse } from './sparse-histogram-ops.js';

export interface EndpointFigures {
  requests: number;
  errors: number;
  hist: SparseHistogram;
}

export interface WorkerFigures {
  loopP99Ms: number;
  loopMaxMs: number;
  /** Busy share × the time the worker's deltas covered, and that time (ms): busy = busyMs / coveredMs. */
  busyMs: number;
  coveredMs: number;
}

/** The embedded controller over the interval: requests it answered, and its thread's busy time. */
export interface ControllerFigures {
  requests: number;
  busyMs: number;
  coveredMs: number;
}

export interface IntervalFigures {
  tMs: number;
  durationMs: number;
  phase: RunInterval['phase'];
  endpoints: Map<string, EndpointFigures>;
  devices: RunInterval['devices'];
  queued: Record<string, number>;
  findings: Record<string, number>;
  events: RunEvent[];
  workers: Map<number, WorkerFigures>;
  /** Absent when no controller sample fell in the interval (a real controller: never). */
  controller?: ControllerFigures;
}

export function emptyIntervalFigures(tMs: number, durationMs: number, phase: RunInterval['phase']): IntervalFigures {
  return { tMs, durationMs, phase, endpoints: new Map(), devices: {}, queued: {}, findings: {}, events: [], workers: new Map() };
}

export function endpointFigures(f: IntervalFigures, endpoint: string): EndpointFigures {
  let e = f.endpoints.get(endpoint);
  if (!e) f.endpoints.set(endpoint, (e = { requests: 0, errors: 0, hist: emptySparse() }));
  return e;
}

/**
 * `a` followed by `b` as one interval. Counts and histograms add up exactly (so do the merged
 * percentiles); the gauges (devices, queued) are those at the end, i.e. `b`'s; a worker's loop p99
 * is the worse of the two (a p99 of p99s cannot be had exactly), its max the max, its busy share
 * time-weighted. The phase is that of the start: a merged interval that straddles the end of the run
 * phase is 'run', and the 'drain' event marks the exact instant.
 */
export function mergeIntervalFigures(a: IntervalFigures, b: IntervalFigures): IntervalFigures {
  const out = emptyIntervalFigures(a.tMs, a.durationMs + b.durationMs, a.phase);
  for (const part of [a, b]) {
    for (const [k, e] of part.endpoints) {
      const o = endpointFigures(out, k);
      o.requests += e.requests;
      o.errors += e.errors;
      o.hist = sumSparse(o.hist, e.hist);
    }
    for (const [k, v] of Object.entries(part.findings)) out.findings[k] = (out.findings[k] ?? 0) + v;
    out.events.push(...part.events);
    if (part.controller) {
      const c = (out.controller ??= { requests: 0, busyMs: 0, coveredMs: 0 });
      c.requests += part.controller.requests;
      c.busyMs += part.controller.busyMs;
      c.coveredMs += part.controller.coveredMs;
    }
    for (const [w, f] of part.workers) {
      const o = out.workers.get(w);
      out.workers.set(
        w,
        o
          ? { loopP99Ms: Math.max(o.loopP99Ms, f.loopP99Ms), loopMaxMs: Math.max(o.loopMaxMs, f.loopMaxMs), busyMs: o.busyMs + f.busyMs, coveredMs: o.coveredMs + f.coveredMs }
          : { ...f },
      );
    }
  }
  out.devices = { ...b.devices };
  out.queued = { ...b.queued };
  return out;
}

/** The interval as the summary and the JSONL stream show it. */
export function toRunInterval(f: IntervalFigures): RunInterval {
  const endpoints: RunInterval['endpoints'] = {};
  for (const k of [...f.endpoints.keys()].sort()) {
    const e = f.endpoints.get(k)!;
    if (e.requests === 0 && e.errors === 0) continue;
    endpoints[k] = { requests: e.requests, errors: e.errors, ...(sparsePercentiles(e.hist) ?? {}) };
  }
  return {
    tMs: f.tMs,
    durationMs: f.durationMs,
    phase: f.phase,
    endpoints,
    devices: { ...f.devices },
    queued: { ...f.queued },
    findings: { ...f.findings },
    events: f.events.map((e) => ({ ...e })),
    workers: [...f.workers]
      .sort(([a], [b]) => a - b)
      .map(([worker, w]) => ({
        worker,
        loopP99Ms: round1(w.loopP99Ms),
        loopMaxMs: round1(w.loopMaxMs),
        busy: w.coveredMs > 0 ? Math.round((w.busyMs / w.coveredMs) * 1000) / 1000 : 0,
      })),
    ...(f.controller
      ? { controller: { requests: f.controller.requests, ...(f.controller.coveredMs > 0 ? { busy: Math.round((f.controller.busyMs / f.controller.coveredMs) * 1000) / 1000 } : {}) } }
      : {}),
  };
}

function round1(v: number): number {
  return Math.round(v * 10) / 10;
}
