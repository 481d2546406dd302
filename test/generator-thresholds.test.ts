// Thresholds on the generator itself: loop_lag.p99 (the worst worker's event-loop lag p99, over the
// run or, from the series, over a window) and memory.rss / memory.rss_per_device (the process's
// peak RSS); sizes with units; what cannot be measured fails.

import { describe, expect, it } from 'vitest';
import { evaluateThreshold, parseThreshold } from '../src/runner/thresholds.js';
import type { MeasuredRun } from '../src/runner/summary-json.js';
import { measuredRun } from './fakes/measured-run.js';
import { SeriesRecorder } from '../src/runner/series/series-recorder.js';
import { ThresholdWindows } from '../src/runner/series/threshold-windows.js';
import { parseBytes } from '../src/scenario/parse-bytes.js';
import { parseThresholdEntry } from '../src/scenario/parse-threshold.js';
import { formatBytes } from '../src/runner/format-values.js';
import { RssPeak } from '../src/runner/rss-peak.js';
import { syntheticDelta } from './fakes/synthetic-delta.js';

const MiB = 2 ** 20;

function run(generator: Partial<MeasuredRun['generator']> = {}, devices = 1000): MeasuredRun {
  return measuredRun(
    {
      generator: {
        workers: [
          { worker: 0, eventLoopLagP99Ms: 12 },
          { worker: 1, eventLoopLagP99Ms: 140 },
        ],
        mainEventLoopLagP99Ms: 1,
        cpuPercent: 50,
        rssPeakBytes: 300 * MiB,
        ...generator,
      },
    },
    devices,
  );
}

const check = (expr: string, r: MeasuredRun = run()) => evaluateThreshold(parseThreshold(expr), r);

describe('parsing', () => {
  it.each([
    ['loop_lag.p99 < 100ms', { subject: 'loop_lag', stat: 'p99', op: '<', value: 100 }],
    ['memory.rss < 2GiB', { subject: 'memory', stat: 'rss', op: '<', value: 2 * 2 ** 30 }],
    ['memory.rss <= 1.5 GB', { subject: 'memory', stat: 'rss', op: '<=', value: 1.5e9 }],
    ['memory.rss_per_device < 24KiB', { subject: 'memory', stat: 'rss_per_device', op: '<', value: 24 * 1024 }],
  ])('%s', (source, want) => expect(parseThreshold(source)).toEqual({ source, ...want }));

  it('reads a window on loop_lag (the series has each worker\'s lag per interval) but not on memory', () => {
    expect(parseThreshold('loop_lag.p99 < 100ms after 2m').window).toEqual({ fromMs: 120_000 });
    expect(() => parseThreshold('memory.rss < 1GiB after 2m')).toThrow('"memory" is known only for the whole run');
    expect(parseThresholdEntry({ threshold: 'loop_lag.p99 < 100ms', abortOnFail: true })).toMatchObject({ abortOnFail: true });
  });

  it.each([
    ['memory.rss < 2048', 'memory.rss is a size: "2048" has no unit; expected a size such as 16KiB'],
    ['memory.rss < 2 gigs', 'memory.rss is a size: "2 gigs": unknown unit "gigs"'],
    ['memory.rss < lots', 'memory.rss is a size: "lots" is not a size'],
    ['memory.rss < 2TiB', 'unknown unit "TiB"'],
    ['memory.rss_per_device < 16KiB per device', 'only counts scale with devices; memory.rss_per_device is a size'],
    ['loop_lag.p99 < 100', 'loop_lag.p99 is a latency: "100" has no unit'],
    ['loop_lag.p95 < 100ms', '"loop_lag" has no stat "p95"'],
    ['memory.heap < 1GiB', '"memory" has no stat "heap"'],
  ])('%s fails: %s', (source, message) => expect(() => parseThreshold(source)).toThrow(message));

  it('parses and formats sizes', () => {
    expect(parseBytes('512 B')).toBe(512);
    expect(parseBytes('16KiB')).toBe(16_384);
    expect(parseBytes('3kB')).toBe(3000);
    expect(parseBytes('0.5MiB')).toBe(MiB / 2);
    expect(formatBytes(812)).toBe('812 B');
    expect(formatBytes(23.44 * 1024)).toBe('23.4 KiB');
    expect(formatBytes(512 * MiB)).toBe('512.0 MiB');
    expect(formatBytes(1.85 * 2 ** 30)).toBe('1.85 GiB');
  });
});

describe('judging a run', () => {
  it('loop_lag.p99 is the worst worker\'s', () => {
    expect(check('loop_lag.p99 < 100ms')).toMatchObject({ status: 'failed', actual: 140, bound: 100, detail: '140ms' });
    expect(check('loop_lag.p99 < 150ms')).toMatchObject({ status: 'passed', actual: 140 });
  });

  it('memory.rss is the peak; memory.rss_per_device divides it by the run\'s devices', () => {
    expect(check('memory.rss < 256MiB')).toMatchObject({ status: 'failed', actual: 300 * MiB, detail: '300.0 MiB' });
    expect(check('memory.rss < 512MiB')).toMatchObject({ status: 'passed' });
    expect(check('memory.rss_per_device < 300KiB')).toMatchObject({ status: 'failed', actual: (300 * MiB) / 1000, detail: '307.2 KiB' });
    expect(check('memory.rss_per_device < 310KiB')).toMatchObject({ status: 'passed' });
  });

  it('fails what cannot be measured: no workers, no RSS recorded, no devices', () => {
    expect(check('loop_lag.p99 < 100ms', run({ workers: [] }))).toMatchObject({ status: 'failed', actual: null, detail: 'cannot check: no worker reported its event-loop lag' });
    const noRss = run();
    delete noRss.generator.rssPeakBytes;
    expect(check('memory.rss < 1GiB', noRss)).toMatchObject({ status: 'failed', detail: 'cannot check: the run recorded no RSS of the generator process' });
    expect(check('memory.rss_per_device < 1GiB', run({}, 0))).toMatchObject({ status: 'failed', detail: 'cannot check: the run had no devices' });
  });

  it('over a window: the worst worker\'s worst interval in it, the warm-up left out', () => {
    const T0 = 1_000_000;
    const specs = [parseThreshold('loop_lag.p99 < 100ms after 3s'), parseThreshold('loop_lag.p99 < 100ms'), parseThreshold('loop_lag.p99 < 100ms during 10s..12s')];
    const windows = new ThresholdWindows([...specs, { ...specs[1]!, abortOnFail: true }]);
    const recorder = new SeriesRecorder({ startAtMs: T0 });
    recorder.onInterval((_, f) => windows.addFigures(f));
    const lag = [400, 250, 20, 30, 60, 45, 20, 10]; // seconds 0..7: a slow start, then calm
    lag.forEach((p99, s) => {
      for (const worker of [0, 1]) {
        recorder.add(syntheticDelta({ workerId: worker, atMs: T0 + (s + 1) * 1000 - 10, loop: { p50Ms: 1, p99Ms: worker === 1 ? p99 : p99 / 2, maxMs: p99, utilisation: 0.5 } }));
      }
      recorder.closeDue(T0 + (s + 1) * 1000);
    });
    recorder.finish();
    const windowed = evaluateThreshold(specs[0]!, run(), windows);
    expect(windowed).toMatchObject({ status: 'passed', actual: 60 });
    expect(windows.measure({ ...specs[1]!, abortOnFail: true })).toEqual({ value: 400 });
    // The plain one is judged from the summary's whole-run figure, not the series.
    expect(evaluateThreshold(specs[1]!, run(), windows)).toMatchObject({ actual: 140 });
    expect(evaluateThreshold(specs[2]!, run(), windows)).toMatchObject({ status: 'failed', detail: 'cannot check: no interval of the run phase lies in the window during 10s..12s' });
  });
});

describe('RssPeak', () => {
  it('keeps the highest sample, taking one at the start and one at the stop', () => {
    const readings = [100, 500, 300];
    const peak = new RssPeak(() => readings.shift() ?? 200);
    peak.sample();
    expect(peak.stop()).toBe(500);
    expect(new RssPeak(() => 7).stop()).toBe(7);
  });
});
