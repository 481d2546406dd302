// Whether the generator itself limited the run: a worker whose event loop lagged (devices fired
// late) over the run or through a good part of it, or was busy nearly all the time, or a process
// using nearly every core. Pure: the summary's generator figures (and its time series, when it has
// one) → verdict with reasons. The report and the saturation verdict both use it.

import type { GeneratorHealth } from './summary-json.js';
import type { RunSeries } from './run-series.js';
import { formatMs } from './format-values.js';

/** Event-loop lag p99 above this means devices fired late because the generator was busy. */
export const LAG_LIMIT_MS = 100;
/** CPU use (percent of all cores) at or above this means the generator was saturated. */
export const CPU_LIMIT_PERCENT = 90;
/** A worker thread busy (event-loop utilisation) this share of the run or more was saturated. */
export const BUSY_LIMIT = 0.9;

/**
 * A worker's loop-lag p99 over LAG_LIMIT_MS in this share of the run phase's intervals or more
 * (and in at least LAGGING_INTERVALS_MIN of them) means devices fired late through a good part of
 * the run, however the whole run's p99 came out: a fleet that outgrows its machine lags in its
 * second half, which a p99 over all of it can still hide.
 */
export const LAGGING_INTERVALS_SHARE = 0.1;
export const LAGGING_INTERVALS_MIN = 5;

/**
 * The workers' in-flight caps (--max-in-flight) set the pace when requests waited for a slot this
 * long on average, ms, ...
 */
export const CAP_WAIT_MIN_MS = 50;
/** ... and at least this many times as long as a request then took from hand-on to answer: the
 *  controller answered quickly, and the generator's own queue was the wait. A slow controller
 *  makes the cap fill too, but then the time on the wire is of the wait's order. */
export const CAP_WAIT_FACTOR = 10;

export interface GeneratorVerdict {
  bottleneck: boolean;
  reasons: string[];
  /** The in-flight caps were the bottleneck (one of the reasons): the latencies include the
   *  generator's own queue, and the request rate is the caps', not the fleet's. */
  inFlightCapped?: boolean;
}

export function judgeGenerator(g: GeneratorHealth, series?: Pick<RunSeries, 'intervalMs' | 'intervals'>): GeneratorVerdict {
  const reasons: string[] = [];
  for (const w of g.workers) {
    if (w.eventLoopLagP99Ms > LAG_LIMIT_MS) {
      reasons.push(`worker ${w.worker} event-loop lag p99 ${formatMs(w.eventLoopLagP99Ms)} ms > ${LAG_LIMIT_MS} ms`);
    }
    if (w.busy !== undefined && w.busy >= BUSY_LIMIT) {
      reasons.push(`worker ${w.worker} busy ${(w.busy * 100).toFixed(0)}% of the run ≥ ${(BUSY_LIMIT * 100).toFixed(0)}%`);
    }
  }
  const lagging = series ? laggingIntervals(series) : undefined;
  if (lagging && lagging.count >= LAGGING_INTERVALS_MIN && lagging.count >= LAGGING_INTERVALS_SHARE * lagging.of) {
    const unit = series!.intervalMs === 1000 ? 'seconds' : `${series!.intervalMs / 1000} s intervals`;
    reasons.push(`a worker's event-loop lag p99 > ${LAG_LIMIT_MS} ms in ${lagging.count} of the run's ${lagging.of} ${unit} (${((lagging.count / lagging.of) * 100).toFixed(0)}%)`);
  }
  if (g.cpuPercent >= CPU_LIMIT_PERCENT) {
    reasons.push(`CPU ${g.cpuPercent.toFixed(0)}% of all cores ≥ ${CPU_LIMIT_PERCENT}%`);
  }
  const capped = capWait(g);
  if (capped) {
    reasons.push(
      `requests waited ${formatMs(capped.meanWaitMs)} ms on average for an in-flight slot (--max-in-flight ${capped.cap} per worker), ` +
        `${formatMs(capped.meanOnWireMs)} ms from hand-on to answer: the caps set the pace, not the controller`,
    );
  }
  return { bottleneck: reasons.length > 0, reasons, ...(capped ? { inFlightCapped: true } : {}) };
}

/** What the report tells the user to make of the figures when the generator was the bottleneck. */
export function generatorAdvice(v: GeneratorVerdict): string {
  return v.inFlightCapped
    ? "Latencies above include the generator's own queue and the rates are its in-flight caps', not the fleet's; raise --max-in-flight or add workers."
    : 'Latencies and rates above understate the target; use fewer devices or a bigger machine.';
}

/** The workers' gates together, when their waits for a slot dwarfed the requests' time on the wire. */
function capWait(g: GeneratorHealth): { meanWaitMs: number; meanOnWireMs: number; cap: number } | undefined {
  let requests = 0;
  let waitMs = 0;
  let handedOn = 0;
  let onWireMs = 0;
  let cap = 0;
  for (const w of g.workers) {
    const f = w.inFlight;
    // Summaries written before the gates measured their waits carry no totals.
    if (f?.requests === undefined || f.waitMsTotal === undefined || f.handedOn === undefined || f.handedOnMsTotal === undefined) continue;
    requests += f.requests;
    waitMs += f.waitMsTotal;
    handedOn += f.handedOn;
    onWireMs += f.handedOnMsTotal;
    cap = Math.max(cap, f.maxInFlight);
  }
  if (requests === 0) return undefined;
  const meanWaitMs = waitMs / requests;
  const meanOnWireMs = handedOn > 0 ? onWireMs / handedOn : 0;
  if (meanWaitMs < CAP_WAIT_MIN_MS || meanWaitMs < CAP_WAIT_FACTOR * meanOnWireMs) return undefined;
  return { meanWaitMs, meanOnWireMs, cap };
}

/** Run-phase intervals with worker figures, and how many of them had a worker's loop-lag p99 over the limit. */
function laggingIntervals(series: Pick<RunSeries, 'intervals'>): { count: number; of: number } {
  let count = 0;
  let of = 0;
  for (const iv of series.intervals) {
    if (iv.phase !== 'run' || iv.workers.length === 0) continue;
    of++;
    if (iv.workers.some((w) => w.loopP99Ms > LAG_LIMIT_MS)) count++;
  }
  return { count, of };
}
