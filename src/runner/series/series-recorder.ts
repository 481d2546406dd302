// Turns the workers' deltas (FleetDelta, about one a second per worker) into the run's time series:
// 1 s intervals counted from the run's start instant. Each closed interval goes to the listeners
// (the JSONL stream, threshold windows, abortOnFail) and into the bounded list the summary keeps.
//
// Which interval a delta belongs to: the one holding the middle of the time it covers
// (atMs − intervalMs/2). A worker's deltas are ~1 s apart but not aligned with the start instant,
// so a delta's requests can lie on both sides of a boundary; the middle puts them where most of
// them finished (a delta cannot be split: its histogram has no times). An interval closes
// `closeLagMs` after its end, by then every worker's delta for it has arrived; a delta later than
// that (a stalled worker) goes into the oldest interval still open rather than being lost.
// Intervals that start at or after the run phase's end (markRunPhaseEnd) are phase 'drain'.

import type { FleetDelta } from '../../fleet/fleet-delta.js';
import { LIFECYCLES } from '../../fleet/fleet-delta.js';
import { MAX_SERIES_INTERVALS, type RunEvent, type RunInterval, type RunSeries } from '../run-series.js';
import { BoundedIntervals } from './bounded-intervals.js';
import { emptyIntervalFigures, endpointFigures, toRunInterval, type IntervalFigures } from './interval-figures.js';
import { sumSparse } from './sparse-histogram-ops.js';

export interface SeriesRecorderOptions {
  /** The run's start instant, epoch ms. */
  startAtMs: number;
  /** Length of an interval, ms (default 1000). */
  intervalMs?: number;
  /** How long after its end an interval closes, ms (default 1500). */
  closeLagMs?: number;
  /** Intervals the summary keeps at most (default MAX_SERIES_INTERVALS). */
  maxIntervals?: number;
}

/** A closed interval: as shown (RunInterval) and with its histograms (for threshold windows). */
export type IntervalListener = (interval: RunInterval, figures: IntervalFigures) => void;

interface WorkerGauges {
  lifecycle: FleetDelta['lifecycle'];
  queueBacklog: Record<string, number>;
}

export class SeriesRecorder {
  readonly startAtMs: number;
  readonly intervalMs: number;
  private readonly closeLagMs: number;
  private readonly kept: BoundedIntervals;
  private readonly open = new Map<number, IntervalFigures>();
  /** Each worker's latest gauges in each open interval, and as of the last closed one. */
  private readonly openGauges = new Map<number, Map<number, WorkerGauges>>();
  private readonly gauges = new Map<number, WorkerGauges>();
  private readonly events: RunEvent[] = [];
  private readonly listeners: IntervalListener[] = [];
  /** Index of the next interval to close. */
  private next = 0;
  /** Highest interval index given anything (a delta or an event). */
  private last = -1;
  private runPhaseEndMs: number | undefined;

  constructor(o: SeriesRecorderOptions) {
    this.startAtMs = o.startAtMs;
    this.intervalMs = o.intervalMs ?? 1000;
    this.closeLagMs = o.closeLagMs ?? 1500;
    this.kept = new BoundedIntervals(this.intervalMs, o.maxIntervals ?? MAX_SERIES_INTERVALS);
  }

  onInterval(listener: IntervalListener): void {
    this.listeners.push(listener);
  }

  /** Intervals starting at or after this instant (epoch ms) belong to the drain. */
  markRunPhaseEnd(atMs: number): void {
    this.runPhaseEndMs ??= atMs;
  }

  /** A timeline action, fault, drain or abort at `atMs` (epoch ms). */
  event(atMs: number, kind: RunEvent['kind'], label: string): void {
    const e: RunEvent = { tMs: Math.max(0, Math.round(atMs - this.startAtMs)), kind, label };
    this.events.push(e);
    this.intervalAt(this.indexOf(atMs)).events.push(e);
  }

  /**
   * A sample of the embedded controller: `requests` answered and `busy` (0..1) over the `spanMs`
   * before `atMs`; counted, like a delta, in the interval holding the middle of that span.
   */
  controller(atMs: number, spanMs: number, requests: number, busy: number): void {
    const f = this.intervalAt(this.indexOf(atMs - spanMs / 2));
    const c = (f.controller ??= { requests: 0, busyMs: 0, coveredMs: 0 });
    c.requests += requests;
    c.busyMs += busy * spanMs;
    c.coveredMs += spanMs;
  }

  add(d: FleetDelta): void {
    const i = this.indexOf(d.atMs - d.intervalMs / 2);
    const f = this.intervalAt(i);
    for (const s of d.series) {
      const e = endpointFigures(f, s.endpoint);
      e.requests += s.count;
      e.hist = sumSparse(e.hist, s.hist);
    }
    for (const c of d.errors) endpointFigures(f, c.endpoint).errors += c.count;
    for (const x of d.findings) f.findings[x.kind] = (f.findings[x.kind] ?? 0) + x.count;
    const w = f.workers.get(d.workerId) ?? { loopP99Ms: 0, loopMaxMs: 0, busyMs: 0, coveredMs: 0 };
    w.loopP99Ms = Math.max(w.loopP99Ms, d.loop.p99Ms);
    w.loopMaxMs = Math.max(w.loopMaxMs, d.loop.maxMs);
    w.busyMs += d.loop.utilisation * d.intervalMs;
    w.coveredMs += d.intervalMs;
    f.workers.set(d.workerId, w);
    let g = this.openGauges.get(i);
    if (!g) this.openGauges.set(i, (g = new Map()));
    g.set(d.workerId, { lifecycle: d.lifecycle, queueBacklog: d.queueBacklog });
  }

  /** Closes the intervals whose end lies `closeLagMs` or more before `nowMs`. */
  closeDue(nowMs: number): void {
    while (this.startAtMs + (this.next + 1) * this.intervalMs + this.closeLagMs <= nowMs) this.closeNext();
  }

  /** The run is over (every worker's final delta is in): closes every interval that has anything. */
  finish(): void {
    while (this.next <= this.last) this.closeNext();
  }

  series(): RunSeries {
    return { intervalMs: this.kept.intervalMs, intervals: this.kept.all().map(toRunInterval), events: this.events.map((e) => ({ ...e })) };
  }

  private indexOf(atMs: number): number {
    // Before the start (a worker's first delta began before 'go') counts as the first interval;
    // into a closed interval, as the oldest open one.
    return Math.max(this.next, Math.floor((atMs - this.startAtMs) / this.intervalMs));
  }

  private intervalAt(i: number): IntervalFigures {
    let f = this.open.get(i);
    if (!f) this.open.set(i, (f = emptyIntervalFigures(i * this.intervalMs, this.intervalMs, 'run')));
    if (i > this.last) this.last = i;
    return f;
  }

  private closeNext(): void {
    const i = this.next++;
    const f = this.open.get(i) ?? emptyIntervalFigures(i * this.intervalMs, this.intervalMs, 'run');
    this.open.delete(i);
    if (this.runPhaseEndMs !== undefined && this.startAtMs + f.tMs >= this.runPhaseEndMs) f.phase = 'drain';
    for (const [w, g] of this.openGauges.get(i) ?? []) this.gauges.set(w, g);
    this.openGauges.delete(i);
    // Gauges at the end of the interval: each worker's latest (a worker silent in this interval
    // keeps its previous figures).
    const devices: Record<string, number> = {};
    const queued: Record<string, number> = {};
    for (const g of this.gauges.values()) {
      for (const k of LIFECYCLES) if (g.lifecycle[k]) devices[k] = (devices[k] ?? 0) + g.lifecycle[k];
      for (const [k, v] of Object.entries(g.queueBacklog)) queued[k] = (queued[k] ?? 0) + v;
    }
    f.devices = devices;
    f.queued = queued;
    this.kept.push(f);
    if (this.listeners.length === 0) return;
    const shown = toRunInterval(f);
    for (const l of this.listeners) l(shown, f);
  }
}
