// Measures thresholds over a window of the run phase (`config.p99 < 200ms after 2m`) and, for
// abortOnFail, over the run phase so far. Fed interval by interval: the requests, errors, findings
// and each endpoint's latency histogram of every run-phase interval that starts inside the window
// are added up, so a window's p99 is the p99 of its requests (histograms merged, never percentiles
// averaged). The drain is outside every window: a window is a part of the run phase.
// `evesim merge` feeds the merged series' intervals, which carry no histograms: counts, rates,
// errors and findings are exact there, latency percentiles cannot be checked. The workers' loop lag
// over a window is the worst worker's worst interval p99.

import type { SparseHistogram } from '../../fleet/latency-histogram.js';
import { describeWindow } from '../../scenario/threshold-window.js';
import type { ThresholdSpec, ThresholdWindow } from '../../scenario/scenario-types.js';
import type { RunInterval } from '../run-series.js';
import type { ThresholdMeasure } from '../threshold-measure.js';
import type { IntervalFigures } from './interval-figures.js';
import { emptySparse, sparsePercentiles, sumSparse } from './sparse-histogram-ops.js';

/** What a threshold measured over a window is judged from. */
export interface WindowMeasures {
  measure(spec: ThresholdSpec): ThresholdMeasure;
}

interface Tally {
  window: ThresholdWindow;
  seconds: number;
  requests: Map<string, number>;
  errors: Map<string, number>;
  findings: number;
  /** The worst worker's worst per-interval event-loop lag p99, ms; undefined while no interval had worker figures. */
  loopP99Ms: number | undefined;
  /** Absent when fed without histograms (a merged series). */
  hists: Map<string, SparseHistogram> | undefined;
}

/** The whole run phase: what abortOnFail judges a threshold without a window over. */
const RUN_PHASE: ThresholdWindow = { fromMs: 0 };

export function windowOf(spec: Pick<ThresholdSpec, 'window'>): ThresholdWindow {
  return spec.window ?? RUN_PHASE;
}

export class ThresholdWindows implements WindowMeasures {
  private readonly tallies = new Map<string, Tally>();

  /** Tracks the windows of `specs` (those with a window, and the run phase for abortOnFail ones). */
  constructor(specs: readonly ThresholdSpec[], withHistograms = true) {
    for (const s of specs) {
      if (!s.window && !s.abortOnFail) continue;
      const w = windowOf(s);
      const key = windowKey(w);
      if (!this.tallies.has(key)) {
        this.tallies.set(key, { window: w, seconds: 0, requests: new Map(), errors: new Map(), findings: 0, loopP99Ms: undefined, hists: withHistograms ? new Map() : undefined });
      }
    }
  }

  /** Whether any threshold needs the intervals. */
  get empty(): boolean {
    return this.tallies.size === 0;
  }

  /** A closed interval of the recorder (with its histograms). */
  addFigures(f: IntervalFigures): void {
    for (const t of this.inWindow(f)) {
      t.seconds += f.durationMs / 1000;
      for (const [k, e] of f.endpoints) {
        add(t.requests, k, e.requests);
        add(t.errors, k, e.errors);
        if (t.hists) t.hists.set(k, sumSparse(t.hists.get(k) ?? emptySparse(), e.hist));
      }
      t.findings += Object.values(f.findings).reduce((a, b) => a + b, 0);
      for (const w of f.workers.values()) t.loopP99Ms = Math.max(t.loopP99Ms ?? 0, w.loopP99Ms);
    }
  }

  /** An interval as a summary holds it (no histograms: percentiles cannot be checked). */
  addInterval(i: RunInterval): void {
    for (const t of this.inWindow(i)) {
      t.seconds += i.durationMs / 1000;
      for (const [k, e] of Object.entries(i.endpoints)) {
        add(t.requests, k, e.requests);
        add(t.errors, k, e.errors);
      }
      t.findings += Object.values(i.findings).reduce((a, b) => a + b, 0);
      for (const w of i.workers) t.loopP99Ms = Math.max(t.loopP99Ms ?? 0, w.loopP99Ms);
    }
  }

  measure(spec: ThresholdSpec): ThresholdMeasure {
    const w = windowOf(spec);
    const t = this.tallies.get(windowKey(w));
    const where = spec.window ? `the window ${describeWindow(w)}` : 'the run phase';
    if (!t) return { cannot: `${where} was not measured` };
    if (t.seconds === 0) return { cannot: `no interval of the run phase lies in ${where}` };
    const { subject, stat } = spec;
    const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
    switch (`${subject}.${stat}`) {
      case 'errors.count':
        return { value: total(t.errors) };
      case 'errors.rate': {
        const n = total(t.requests);
        return n === 0 ? { cannot: `no requests were made in ${where}` } : { value: total(t.errors) / n };
      }
      case 'findings.count':
        return { value: t.findings };
      // The series keeps each worker's p99 per interval, not its lag histogram, so a window's p99 is
      // bounded from above by its worst interval (as merging intervals does, interval-figures.ts).
      case 'loop_lag.p99':
        return t.loopP99Ms === undefined ? { cannot: `no worker reported its event-loop lag in ${where}` } : { value: t.loopP99Ms };
    }
    const count = subject === 'all' ? total(t.requests) : (t.requests.get(subject) ?? 0);
    switch (stat) {
      case 'count':
        return { value: count };
      case 'rate':
        return { value: count / t.seconds };
      case 'p50':
      case 'p90':
      case 'p99':
      case 'max': {
        const what = subject === 'all' ? 'any endpoint' : subject;
        if (count === 0) return { cannot: `no requests to ${what} in ${where}, so no latency to check` };
        if (!t.hists) return { cannot: `the latency of ${where} needs the run's per-interval histograms, which a merged summary does not hold` };
        const hist = subject === 'all' ? [...t.hists.values()].reduce(sumSparse) : t.hists.get(subject);
        const p = hist ? sparsePercentiles(hist) : undefined;
        if (!p) return { cannot: `no latency recorded for ${what} in ${where}` };
        return { value: { p50: p.p50Ms, p90: p.p90Ms, p99: p.p99Ms, max: p.maxMs }[stat] };
      }
      default:
        return { cannot: `"${subject}.${stat}" is not measured interval by interval` };
    }
  }

  private *inWindow(i: { tMs: number; phase: RunInterval['phase'] }): Iterable<Tally> {
    if (i.phase !== 'run') return;
    for (const t of this.tallies.values()) {
      if (i.tMs >= t.window.fromMs && (t.window.toMs === undefined || i.tMs < t.window.toMs)) yield t;
    }
  }
}

function windowKey(w: ThresholdWindow): string {
  return `${w.fromMs}..${w.toMs ?? ''}`;
}

function add(m: Map<string, number>, k: string, n: number): void {
  if (n !== 0) m.set(k, (m.get(k) ?? 0) + n);
}
