// The intervals the summary keeps: at most `max` of them. When one more would not fit, neighbours
// are merged pairwise (1 s → 2 s → 4 s …) and later intervals are gathered at the new length before
// they are kept. Each kept interval holds its endpoints' sparse histograms (a few hundred bytes
// each; interval-figures.ts), so merged intervals have exact percentiles, not averaged ones: the
// memory is bounded by max × endpoints × the latency buckets an interval used.

import { mergeIntervalFigures, type IntervalFigures } from './interval-figures.js';

export class BoundedIntervals {
  /** Length of a kept interval, ms. */
  intervalMs: number;
  private kept: IntervalFigures[] = [];
  /** Intervals gathered towards the next kept one (coarser than what is pushed). */
  private pending: IntervalFigures | undefined;

  constructor(
    baseMs: number,
    private readonly max: number,
  ) {
    if (max < 2 || max % 2 !== 0) throw new Error('BoundedIntervals needs room for an even number (≥ 2) of intervals');
    this.intervalMs = baseMs;
  }

  /** Adds the next interval (contiguous with the previous one, of the base length). */
  push(f: IntervalFigures): void {
    // Full, and this one would be one more: halve first (max is even, so no odd one out then).
    if (!this.pending && this.kept.length >= this.max) this.coarsen();
    this.pending = this.pending ? mergeIntervalFigures(this.pending, f) : f;
    if (this.pending.durationMs < this.intervalMs) return;
    this.kept.push(this.pending);
    this.pending = undefined;
  }

  /** The intervals kept (at most `max`), the last possibly shorter (one still being gathered when the run ended). */
  all(): IntervalFigures[] {
    return this.pending ? [...this.kept, this.pending] : [...this.kept];
  }

  private coarsen(): void {
    this.intervalMs *= 2;
    const merged: IntervalFigures[] = [];
    for (let i = 0; i + 1 < this.kept.length; i += 2) merged.push(mergeIntervalFigures(this.kept[i]!, this.kept[i + 1]!));
    // An odd one out is half of the next kept interval.
    if (this.kept.length % 2 === 1) this.pending = this.kept[this.kept.length - 1];
    this.kept = merged;
  }
}
