// How long devices took to onboard: for each device's first 'onboarded' of the run, the time from
// its scheduled arrival (the open model's due time, so a generator that started it late does not
// hide that) and the moment, both in ms. A worker records them into two HDR histograms and sends
// what is new with each delta; the main thread adds them up for the summary (onboarding section):
// median, p99 and the slowest device, and when the last device onboarded against the median one,
// which is what says whether a storm leaves devices trailing.

import { addSparse, newLatencyHistogram, percentileMs, recordLatencyMs, toSparse, type LatencyHistogram, type SparseHistogram } from './latency-histogram.js';

/** What a worker's delta carries: the devices onboarded since the last delta. */
export interface OnboardingDelta {
  /** Time from the device's scheduled arrival to its first 'onboarded', ms. */
  took: SparseHistogram;
  /** The moment of that first 'onboarded', ms since the run's start instant. */
  at: SparseHistogram;
  /** The latest such moment of the worker so far, ms since the start (exact, not bucketed). */
  lastAtMs: number;
  /** The slowest device of the worker so far, ms (exact). */
  maxTookMs: number;
}

/** Worker side: one record per device's first onboarding. */
export class OnboardingClock {
  private took = newLatencyHistogram();
  private at = newLatencyHistogram();
  private lastAtMs = 0;
  private maxTookMs = 0;
  private fresh = false;

  constructor(private readonly startAtMs: number) {}

  record(dueAtMs: number, nowMs: number): void {
    const took = nowMs - dueAtMs;
    const at = nowMs - this.startAtMs;
    recordLatencyMs(this.took, took);
    recordLatencyMs(this.at, at);
    if (at > this.lastAtMs) this.lastAtMs = at;
    if (took > this.maxTookMs) this.maxTookMs = took;
    this.fresh = true;
  }

  /** What is new since the last call, or undefined when no device onboarded meanwhile. */
  take(): OnboardingDelta | undefined {
    if (!this.fresh) return undefined;
    const d: OnboardingDelta = { took: toSparse(this.took), at: toSparse(this.at), lastAtMs: this.lastAtMs, maxTookMs: this.maxTookMs };
    this.took.reset();
    this.at.reset();
    this.fresh = false;
    return d;
  }
}

/** The summary's onboarding section. */
export interface OnboardingSummary {
  /** Devices that onboarded (first time in the run). */
  devices: number;
  /** Time from scheduled arrival to onboarded, ms. */
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** When the median and the last device onboarded, ms since the run's start. */
  medianAtMs: number;
  lastAtMs: number;
}

/** Main-thread side: the sum of every worker's deltas. */
export class OnboardingTimes {
  readonly took: LatencyHistogram = newLatencyHistogram();
  readonly at: LatencyHistogram = newLatencyHistogram();
  lastAtMs = 0;
  maxTookMs = 0;

  merge(d: OnboardingDelta | undefined): void {
    if (!d) return;
    addSparse(this.took, d.took);
    addSparse(this.at, d.at);
    this.lastAtMs = Math.max(this.lastAtMs, d.lastAtMs);
    this.maxTookMs = Math.max(this.maxTookMs, d.maxTookMs);
  }

  summary(): OnboardingSummary | undefined {
    return onboardingSummaryOf(this.took, this.at, this.lastAtMs, this.maxTookMs);
  }
}

/** The summary section from the summed histograms and exact extremes (also what `evesim merge` uses). */
export function onboardingSummaryOf(took: LatencyHistogram, at: LatencyHistogram, lastAtMs: number, maxTookMs: number): OnboardingSummary | undefined {
  if (took.totalCount === 0) return undefined;
  const r = (x: number): number => Math.round(x);
  return {
    devices: took.totalCount,
    p50Ms: r(percentileMs(took, 50)),
    p90Ms: r(percentileMs(took, 90)),
    p99Ms: r(percentileMs(took, 99)),
    maxMs: r(maxTookMs),
    medianAtMs: r(percentileMs(at, 50)),
    lastAtMs: r(lastAtMs),
  };
}
