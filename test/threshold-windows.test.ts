// Thresholds over a window of the run phase (`… after 2m`, `… during 1m..3m`) and abortOnFail:
// parsing and scenario errors (file:line:column, field), the measure from merged per-interval
// histograms (a bad warm-up fails the plain threshold and passes the windowed one), and the live
// judgement that ends a run early.

import { describe, expect, it } from 'vitest';
import { FleetAggregate } from '../src/runner/aggregate.js';
import { buildMeasuredRun } from '../src/runner/build-summary.js';
import { AbortOnFail, markAbortingThreshold, type AbortVerdict } from '../src/runner/series/abort-on-fail.js';
import { SeriesRecorder } from '../src/runner/series/series-recorder.js';
import { ThresholdWindows } from '../src/runner/series/threshold-windows.js';
import { evaluateThresholds } from '../src/runner/thresholds.js';
import { parseScenario } from '../src/scenario/load-scenario.js';
import { parseThreshold, parseThresholdEntry } from '../src/scenario/parse-threshold.js';
import { ScenarioError } from '../src/scenario/scenario-error.js';
import type { ThresholdSpec } from '../src/scenario/scenario-types.js';
import type { FleetDelta } from '../src/fleet/fleet-delta.js';
import { syntheticDelta } from './fakes/synthetic-delta.js';

const T0 = 5_000_000;

function errorsOf(text: string): string[] {
  try {
    parseScenario(text, 'x.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioError);
    return (e as ScenarioError).message.split('\n');
  }
  throw new Error('expected a ScenarioError, but the scenario loaded');
}

/** Feeds deltas to a recorder (intervals to the windows and the abort judge) and to an aggregate. */
function runOf(specs: ThresholdSpec[], deltas: FleetDelta[], runPhaseEndMs?: number, onAbort: (v: AbortVerdict) => void = () => {}) {
  const recorder = new SeriesRecorder({ startAtMs: T0 });
  const windows = new ThresholdWindows(specs);
  const abort = new AbortOnFail(specs, windows, onAbort);
  recorder.onInterval((shown, f) => {
    windows.addFigures(f);
    abort.check(shown);
  });
  const aggregate = new FleetAggregate();
  aggregate.onDelta((d) => recorder.add(d));
  if (runPhaseEndMs !== undefined) recorder.markRunPhaseEnd(T0 + runPhaseEndMs);
  for (const d of deltas) {
    aggregate.merge(d);
    recorder.closeDue(d.atMs);
  }
  recorder.finish();
  const measured = buildMeasuredRun({
    scenario: { name: 'w', file: 'w.yaml', seed: 1 },
    target: 'embedded',
    startedAtMs: T0,
    durationMs: runPhaseEndMs ?? deltas.length * 1000,
    totalDevices: 1,
    aggregate,
    undelivered: {},
    generator: { workers: [], mainEventLoopLagP99Ms: 0, cpuPercent: 0 },
  });
  return { measured, windows, abort, series: recorder.series() };
}

/** One delta a second for `seconds` seconds from `fromS`, each with `n` requests to config of `ms`. */
function seconds(fromS: number, count: number, n: number, ms: number, errors = 0): FleetDelta[] {
  return Array.from({ length: count }, (_, k) => syntheticDelta({ atMs: T0 + (fromS + k + 1) * 1000, latencies: { config: Array(n).fill(ms) }, errors: errors ? { config: errors } : {} }));
}

describe('threshold windows: parsing', () => {
  it('reads "after DURATION" and "during FROM..TO", keeping the text as written', () => {
    expect(parseThreshold('config.p99 < 200ms after 2m')).toMatchObject({ source: 'config.p99 < 200ms after 2m', subject: 'config', stat: 'p99', op: '<', value: 200, window: { fromMs: 120_000 } });
    expect(parseThreshold('errors.count == 0 during 1m..3m30s').window).toEqual({ fromMs: 60_000, toMs: 210_000 });
    expect(parseThreshold('all.rate >= 5/s after 10s').window).toEqual({ fromMs: 10_000 });
    expect(parseThreshold('config.p99 < 200ms').window).toBeUndefined();
  });

  it('says what is wrong with a window', () => {
    expect(() => parseThreshold('config.p99 < 200ms after soon')).toThrow('"config.p99 < 200ms after soon": window: "soon" is not a duration such as 500ms, 90s, 2m or 1h30m');
    expect(() => parseThreshold('config.p99 < 200ms during 3m..1m')).toThrow('the window "during 3m..1m" must end after it starts');
    expect(() => parseThreshold('config.p99 < 200ms during 3m')).toThrow('a window is written "during FROM..TO", e.g. "during 1m..3m"');
    expect(() => parseThreshold('onboarded.ratio == 1 after 1m')).toThrow('only request figures (an endpoint, all), errors, findings and loop_lag can be judged over a window; "onboarded" is known only for the whole run');
    expect(() => parseThreshold('config{api:v1}.p99 < 1s after 1m')).toThrow('cannot also name an API');
  });

  it('the entry form carries abortOnFail and delayAbortEval', () => {
    expect(parseThresholdEntry({ threshold: 'errors.count == 0', abortOnFail: true, delayAbortEval: '30s' })).toMatchObject({ abortOnFail: true, delayAbortEvalMs: 30_000 });
    expect(parseThresholdEntry({ threshold: 'errors.count == 0', abortOnFail: false }).abortOnFail).toBeUndefined();
  });

  it('bad windows and abort fields in a scenario file are named with file, line, column and field', () => {
    const head = 'duration: 5m\ngroups:\n  - name: a\n    count: 2\nthresholds:\n';
    expect(
      errorsOf(
        head +
          '  - config.p99 < 200ms after 2 minutes\n' +
          '  - { threshold: errors.count == 0, abortOnFail: true, delayAbortEval: soon }\n' +
          '  - { threshold: errors.count == 0, delayAbortEval: 30s }\n' +
          '  - { threshold: onboarded.ratio == 1, abortOnFail: true }\n' +
          '  - { threshold: errors.count == 0, abortOnFail: "yes" }\n',
      ),
    ).toEqual([
      'x.yaml:6:5: thresholds[0]: "config.p99 < 200ms after 2 minutes": a window is written "after DURATION", e.g. "after 2m"',
      'x.yaml:7:72: thresholds[1].delayAbortEval: "soon" is not a duration such as 500ms, 90s, 2m or 1h30m',
      'x.yaml:8:53: thresholds[2].delayAbortEval: delays the abort judgement of abortOnFail: set abortOnFail: true as well, or remove it',
      'x.yaml:9:53: thresholds[3].abortOnFail: "onboarded.ratio == 1": abortOnFail needs a figure measured while the run goes: an endpoint, all, errors, findings or loop_lag ("onboarded" is known only at the end)',
      'x.yaml:10:50: thresholds[4].abortOnFail: must be true or false (got "yes")',
    ]);
  });
});

describe('threshold windows: judged from the run phase\'s intervals', () => {
  it('a bad warm-up fails the plain threshold and passes the one judged after it', () => {
    const specs = [parseThreshold('config.p99 < 200ms'), parseThreshold('config.p99 < 200ms after 2m'), parseThreshold('config.count == 1800 after 2m')];
    // Two minutes at 1 s, then three at 50 ms; 10 requests a second.
    const { measured, windows } = runOf(specs, [...seconds(0, 120, 10, 1000), ...seconds(120, 180, 10, 50)]);
    const [plain, after, count] = evaluateThresholds(specs, measured, windows);
    expect(plain).toMatchObject({ status: 'failed' });
    expect(plain!.actual).toBeCloseTo(1000, 0);
    expect(after).toMatchObject({ status: 'passed' });
    expect(after!.actual).toBeCloseTo(50, 0);
    expect(count).toMatchObject({ status: 'passed', actual: 1800 });
  });

  it("a window's percentile is that of its requests (histograms merged), not an average of the intervals' percentiles", () => {
    const spec = parseThreshold('config.p99 < 12ms after 10s');
    // After 10 s: 99 seconds of 100 requests at 10 ms, one second of 100 at 500 ms. Of the 10 000
    // requests, 1% are slow: the p99 is 10 ms; averaged per-interval p99s would say 14.9 ms.
    const { measured, windows } = runOf([spec], [...seconds(0, 10, 100, 900), ...seconds(10, 50, 100, 10), ...seconds(60, 1, 100, 500), ...seconds(61, 49, 100, 10)]);
    const [r] = evaluateThresholds([spec], measured, windows);
    expect(r!.status).toBe('passed');
    expect(r!.actual).toBeCloseTo(10, 1);
  });

  it('"during FROM..TO" holds the intervals that start in it; the drain is in no window', () => {
    const specs = [parseThreshold('errors.count == 0 during 10s..20s'), parseThreshold('errors.count == 0 after 5s'), parseThreshold('errors.count == 0')];
    // Errors before 10 s, none from 10 s to 30 s (the run phase's end), errors again in the drain.
    const { measured, windows, series } = runOf(specs, [...seconds(0, 10, 5, 10, 1), ...seconds(10, 20, 5, 10), ...seconds(30, 5, 5, 10, 2)], 30_000);
    expect(series.intervals.filter((i) => i.phase === 'drain')).toHaveLength(5);
    const [during, after, plain] = evaluateThresholds(specs, measured, windows);
    expect(during).toMatchObject({ status: 'passed', actual: 0 });
    expect(after).toMatchObject({ status: 'failed', actual: 5 });
    expect(plain).toMatchObject({ status: 'failed', actual: 20 });
  });

  it('a window no interval of the run phase lies in cannot be checked, and fails; so does one without the intervals', () => {
    const spec = parseThreshold('config.p99 < 200ms after 10m');
    const { measured, windows } = runOf([spec], seconds(0, 5, 5, 10));
    expect(evaluateThresholds([spec], measured, windows)[0]).toMatchObject({ status: 'failed', actual: null, detail: 'cannot check: no interval of the run phase lies in the window after 10m' });
    expect(evaluateThresholds([spec], measured)[0]).toMatchObject({ status: 'failed', actual: null });
  });
});

describe('abortOnFail: judged at each closed interval', () => {
  it('fails at the first interval past the delay where the measure breaks the bound, once', () => {
    const spec = parseThresholdEntry({ threshold: 'errors.count == 0', abortOnFail: true, delayAbortEval: '3s' });
    const verdicts: AbortVerdict[] = [];
    // An error in the second second already: judged only from 3 s on.
    runOf([spec], [...seconds(0, 1, 5, 10), ...seconds(1, 1, 5, 10, 1), ...seconds(2, 6, 5, 10)], undefined, (v) => verdicts.push(v));
    expect(verdicts).toEqual([{ spec, index: 0, tMs: 3000, value: 1 }]);
  });

  it('does not abort on what cannot be measured yet, nor on a passing threshold, nor in the drain', () => {
    const specs = [
      parseThresholdEntry({ threshold: 'info.p99 < 1ms', abortOnFail: true }), // no info requests at all
      parseThresholdEntry({ threshold: 'config.p99 < 200ms', abortOnFail: true }),
      parseThresholdEntry({ threshold: 'errors.count == 0', abortOnFail: true }),
    ];
    const verdicts: AbortVerdict[] = [];
    runOf(specs, [...seconds(0, 5, 5, 10), ...seconds(5, 3, 5, 10, 4)], 5000, (v) => verdicts.push(v));
    expect(verdicts).toEqual([]);
  });

  it('a windowed threshold aborts on its window only; the report names it, its value then and when', () => {
    const spec = parseThresholdEntry({ threshold: 'config.p99 < 100ms after 5s', abortOnFail: true });
    const verdicts: AbortVerdict[] = [];
    // Slow warm-up (ignored), then slow again from 8 s.
    const { measured, windows } = runOf([spec], [...seconds(0, 5, 5, 900), ...seconds(5, 3, 5, 10), ...seconds(8, 4, 50, 400)], undefined, (v) => verdicts.push(v));
    expect(verdicts.map((v) => v.tMs)).toEqual([9000]);
    const [r] = markAbortingThreshold(evaluateThresholds([spec], measured, windows), verdicts[0]);
    expect(r).toMatchObject({ status: 'failed', passed: false, abortedRun: { tMs: 9000 } });
    expect(r!.detail).toMatch(/^400(\.\d+)?ms at 9\.0 s \(after 5s\): aborted the run \(abortOnFail\)$/);
  });
});
