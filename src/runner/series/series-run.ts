// The series of one run, wired: the recorder fed by the fleet aggregate's deltas and closing
// intervals as time passes; each closed interval goes to the threshold windows, the --out sinks
// and the abortOnFail judge; markers for the timeline actions, the drain and an abort. The run
// phases call startSeries() at the start instant and finish()/end() when summarising.

import { DEFAULT_GRACEFUL_STOP_MS } from '../../scenario/scenario-defaults.js';
import { evesimVersion } from '../evesim-version.js';
import type { RunPhaseEnd } from '../phases/run-phase-end.js';
import { reason, type RunContext } from '../phases/run-context.js';
import type { RunSeries } from '../run-series.js';
import { formatThresholdValue } from '../format-values.js';
import { thresholdValueKind } from '../../scenario/parse-threshold.js';
import { AbortOnFail, type AbortVerdict } from './abort-on-fail.js';
import { openSeriesSink, type SeriesSink } from './series-sinks.js';
import { SeriesRecorder } from './series-recorder.js';
import { ThresholdWindows } from './threshold-windows.js';
import { scheduleTimelineMarkers } from './timeline-markers.js';
import { faultRunEvents } from '../faults/fault-summary.js';

/** How often the main thread looks for intervals to close, ms. */
const CLOSE_POLL_MS = 250;

/**
 * The embedded controller's figures per interval: each second, the requests it answered and the
 * share of the time its thread was busy since the last sample (a shared counter and the thread's
 * event-loop utilisation: no admin call, so sampling costs the measured controller nothing).
 */
function sampleController(recorder: SeriesRecorder, load: () => { requests: number; activeMs: number }, cleanups: RunContext['cleanups']): void {
  let last = { ...load(), atMs: Date.now() };
  const timer = setInterval(() => {
    const now = { ...load(), atMs: Date.now() };
    const spanMs = now.atMs - last.atMs;
    if (spanMs > 0) recorder.controller(now.atMs, spanMs, now.requests - last.requests, Math.min(1, Math.max(0, (now.activeMs - last.activeMs) / spanMs)));
    last = now;
  }, 1000);
  timer.unref();
  cleanups.add(() => clearInterval(timer));
}

export interface SeriesRun {
  readonly windows: ThresholdWindows;
  /** The threshold that ended the run phase early, if one did. */
  aborted(): AbortVerdict | undefined;
  /** Every worker has reported: closes the last intervals and gives the series. */
  finish(): RunSeries;
  /** The verdict is known: the sinks' last line, and they close. */
  end(exitCode: number, durationMs: number): void;
}

export function startSeries(
  ctx: RunContext,
  startAtMs: number,
  runPhase: RunPhaseEnd,
  endRunPhase: () => void,
  controllerLoad?: () => { requests: number; activeMs: number },
): SeriesRun {
  const { scenario, cleanups, aggregate, opts, err } = ctx;
  const recorder = new SeriesRecorder({ startAtMs });
  aggregate.onDelta((d) => recorder.add(d));
  const poll = setInterval(() => recorder.closeDue(Date.now()), CLOSE_POLL_MS);
  poll.unref();
  cleanups.add(() => clearInterval(poll));
  if (controllerLoad) sampleController(recorder, controllerLoad, cleanups);

  const shard = ctx.plan.shard.count > 1 ? { shard: { index: ctx.plan.shard.index, count: ctx.plan.shard.count } } : {};
  const header = { scenario: scenario.name, seed: scenario.seed, version: evesimVersion(), startedAt: new Date(startAtMs).toISOString(), intervalMs: recorder.intervalMs, ...shard };
  const sinks = new Map((opts.outputs ?? []).map((o) => [openSeriesSink(o, header), o] as const));
  cleanups.add(() => sinks.forEach((_, s) => s.close()));
  // A sink that fails (disk full) is reported once and dropped: the run and the summary go on.
  const toSinks = (write: (s: SeriesSink) => void): void => {
    for (const [s, o] of sinks) {
      try {
        write(s);
      } catch (e) {
        err(`evesim: --out ${o.format}=${o.target}: ${reason(e)}; nothing more is written there\n`);
        sinks.delete(s);
        try {
          s.close();
        } catch {
          // Already reported.
        }
      }
    }
  };

  const windows = new ThresholdWindows(scenario.thresholds);
  const abort = new AbortOnFail(scenario.thresholds, windows, (v) => {
    const atMs = startAtMs + v.tMs;
    recorder.event(atMs, 'abort', `abortOnFail: ${v.spec.source} failed (${formatThresholdValue(thresholdValueKind(v.spec), v.value)})`);
    err(`evesim: threshold "${v.spec.source}" failed at ${(v.tMs / 1000).toFixed(1)} s with abortOnFail: ending the run early\n`);
    endRunPhase();
  });
  // Once the run phase is over (planned end, caller's signal, Ctrl-C stop aside) nothing is aborted:
  // the interval holding the end is still 'run', and judging it could claim an abort that never was.
  let runPhaseOver = false;
  recorder.onInterval((shown, figures) => {
    windows.addFigures(figures);
    toSinks((s) => s.interval(shown));
    if (!runPhaseOver) abort.check(shown);
  });

  const markers = scheduleTimelineMarkers(scenario.timeline, startAtMs, recorder, faultRunEvents(scenario, scenario.durationMs));
  cleanups.add(() => markers.forEach(clearTimeout));
  const gracefulStopMs = scenario.gracefulStopMs ?? DEFAULT_GRACEFUL_STOP_MS;
  void runPhase.ended.then((atMs) => {
    runPhaseOver = true;
    markers.forEach(clearTimeout);
    recorder.markRunPhaseEnd(atMs);
    if (gracefulStopMs > 0) recorder.event(atMs, 'drain', `drain: devices deliver their queues (up to ${gracefulStopMs / 1000} s)`);
  });

  return {
    windows,
    aborted: () => abort.verdict,
    finish() {
      recorder.finish();
      return recorder.series();
    },
    end(exitCode, durationMs) {
      const v = abort.verdict;
      toSinks((s) => s.end({ exitCode, durationMs, ...(v ? { aborted: { threshold: v.spec.source, tMs: v.tMs } } : {}) }));
    },
  };
}
