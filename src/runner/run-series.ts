// The run's time series: what `summary.series` holds and what `--out jsonl=FILE` streams, one
// RunInterval per line, while the run goes. Plain JSON data and a contract with users (the HTML
// report, dashboards, scripts): add fields rather than rename them.
//
// Intervals are contiguous and of one length per run (1 s for short runs, coarser for long ones so
// memory stays bounded: at most MAX_SERIES_INTERVALS kept in the summary; the JSONL stream keeps
// every interval it wrote). Times are ms since the run's start instant (negative never; the drain's
// intervals follow the run phase's and are marked `phase: 'drain'`).

import type { DeviceLifecycle } from '../device/device-options.js';

/** The summary keeps at most this many intervals; a long run merges neighbours (2 s, 4 s, …). */
export const MAX_SERIES_INTERVALS = 1800;

/** One endpoint's requests finished within one interval. */
export interface IntervalEndpoint {
  requests: number;
  /** Requests that count as errors (see isErrorStatus), expected rejections excluded. */
  errors: number;
  /** Latency percentiles of the requests finished in the interval, ms; absent when none finished. */
  p50Ms?: number;
  p90Ms?: number;
  p99Ms?: number;
  maxMs?: number;
}

/** One worker's health over one interval. */
export interface IntervalWorker {
  worker: number;
  loopP99Ms: number;
  loopMaxMs: number;
  /** Share of the interval the worker's thread was busy, 0..1. */
  busy: number;
}

export interface RunInterval {
  /** Start of the interval, ms since the run's start instant. */
  tMs: number;
  /** Length of the interval, ms. */
  durationMs: number;
  phase: 'run' | 'drain';
  /** Keyed by endpoint key ('config', 'newlogs', 'lps.radio', …); endpoints with no request absent. */
  endpoints: Record<string, IntervalEndpoint>;
  /** Devices in each lifecycle state at the end of the interval. */
  devices: Partial<Record<DeviceLifecycle, number>>;
  /** Reliable messages queued on the devices at the end of the interval, by kind. */
  queued: Record<string, number>;
  /** Findings made within the interval, by kind. */
  findings: Record<string, number>;
  /** Timeline actions and faults that began (or ended) within the interval. */
  events: RunEvent[];
  workers: IntervalWorker[];
  /** Figures of the embedded controller over the interval, when it runs in this process. */
  controller?: { requests: number; busy?: number };
}

/** A marker on the time line: a scenario timeline action, a fault's start or end, a threshold abort. */
export interface RunEvent {
  /** ms since the run's start instant. */
  tMs: number;
  kind: 'action' | 'fault-start' | 'fault-end' | 'abort' | 'drain';
  /** What happened, as the report shows it: 'revoke-app group=edge', 'partition 30% of group=a'. */
  label: string;
}

export interface RunSeries {
  /** Interval length in the summary, ms (after any merging of neighbours). */
  intervalMs: number;
  intervals: RunInterval[];
  events: RunEvent[];
}
