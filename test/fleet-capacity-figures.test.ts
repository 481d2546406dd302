// The pure part of the fleet-capacity bench: /proc parsing, the steady-state window, the figures
// over it, RSS growth between sizes and the --find-max search.

import { describe, expect, it } from 'vitest';
import {
  cpuSecondsAt,
  cpuSecondsFromProcStat,
  procStatTimes,
  defaultArrivalOverMs,
  lagInWindow,
  largestGood,
  nextFindMaxSize,
  quantile,
  requestsInWindow,
  rssBytesFromProcStatus,
  rssGrowthPerDevice,
  rssInWindow,
  sizeFigures,
  steadyWindow,
  type ProcSample,
  type Step,
} from '../bench/fleet-capacity-figures.js';
import type { RunInterval } from '../src/runner/run-series.js';

describe('/proc', () => {
  it('reads utime + stime after the command name, even one with spaces and parentheses', () => {
    // Fields 14 and 15 (utime 1500, stime 300 ticks); the comm "(node (x) y)" would shift a naive split.
    const stat = '4242 (node (x) y) S 1 4242 4242 0 -1 4194560 9000 0 0 0 1500 300 0 0 20 0 11 0 123456 1234567890 50000 18446744073709551615';
    expect(cpuSecondsFromProcStat(stat, 100)).toBe(18);
    expect(cpuSecondsFromProcStat(stat, 1000)).toBe(1.8);
    expect(procStatTimes(stat, 100)).toEqual({ userS: 15, systemS: 3 });
    expect(() => cpuSecondsFromProcStat('garbage', 100)).toThrow('not a /proc/<pid>/stat line');
    expect(() => cpuSecondsFromProcStat('1 (x) S 1 2', 100)).toThrow('has no utime/stime');
  });

  it('reads VmRSS in KiB', () => {
    expect(rssBytesFromProcStatus('Name:\tnode\nVmPeak:\t 999 kB\nVmRSS:\t  245760 kB\nRssAnon:\t 1 kB\n')).toBe(245_760 * 1024);
    expect(() => rssBytesFromProcStatus('Name:\tnode\nState:\tZ (zombie)\n')).toThrow('no VmRSS line');
  });

  it('reads this process\'s own files (Linux)', async () => {
    const { readFileSync } = await import('node:fs');
    expect(cpuSecondsFromProcStat(readFileSync('/proc/self/stat', 'utf8'), 100)).toBeGreaterThan(0);
    expect(rssBytesFromProcStatus(readFileSync('/proc/self/status', 'utf8'))).toBeGreaterThan(10 * 2 ** 20);
  });
});

const sample = (atMs: number, cpuS: number, rssMiB = 100): ProcSample => ({ atMs, cpuS, rssBytes: rssMiB * 2 ** 20 });

describe('CPU between samples', () => {
  const samples = [sample(1000, 1), sample(3000, 2), sample(5000, 6)];
  it('interpolates linearly, exact at a sample', () => {
    expect(cpuSecondsAt(samples, 1000)).toBe(1);
    expect(cpuSecondsAt(samples, 2000)).toBe(1.5);
    expect(cpuSecondsAt(samples, 3000)).toBe(2);
    expect(cpuSecondsAt(samples, 4500)).toBe(5);
    expect(cpuSecondsAt(samples, 5000)).toBe(6);
  });
  it('interpolates the kernel time the same way, and says when a sample lacks it', () => {
    const withSystem = samples.map((s, i) => ({ ...s, systemS: [0.5, 1, 2][i]! }));
    expect(cpuSecondsAt(withSystem, 2000, 'systemS')).toBe(0.75);
    expect(cpuSecondsAt(withSystem, 4000, 'systemS')).toBe(1.5);
    expect(() => cpuSecondsAt(samples, 2000, 'systemS')).toThrow('has no systemS');
  });
  it('refuses an instant outside the samples', () => {
    expect(() => cpuSecondsAt(samples, 999)).toThrow('no CPU sample around');
    expect(() => cpuSecondsAt(samples, 5001)).toThrow('no CPU sample around');
    expect(() => cpuSecondsAt([], 1)).toThrow('no CPU samples');
  });
});

/** 1 s intervals: onboarded devices per second, `requests` config requests each, workers' p99s and longest stalls. */
function series(
  onboarded: number[],
  requests: number,
  lag: (s: number, worker: number) => number = () => 5,
  drain = 2,
  stall: (s: number, worker: number) => number = () => 0,
): RunInterval[] {
  const run = onboarded.map((n, s): RunInterval => ({
    tMs: s * 1000,
    durationMs: 1000,
    phase: 'run',
    endpoints: { config: { requests, errors: 0 } },
    devices: { onboarded: n },
    queued: {},
    findings: {},
    events: [],
    workers: [0, 1].map((worker) => ({ worker, loopP99Ms: lag(s, worker), loopMaxMs: stall(s, worker), busy: 0.5 })),
  }));
  const after = Array.from({ length: drain }, (_, k): RunInterval => ({ ...run[0]!, tMs: (onboarded.length + k) * 1000, phase: 'drain', endpoints: { config: { requests: 9999, errors: 0 } }, workers: [{ worker: 0, loopP99Ms: 900, loopMaxMs: 950, busy: 1 }] }));
  return [...run, ...after];
}

describe('the steady-state window', () => {
  // 10 devices onboarded by the end of second 3 (t = 4 s), run phase 40 s.
  const s = series([2, 5, 9, 10, ...Array(36).fill(10)], 7, (sec, w) => (sec < 6 ? 300 : w === 1 && sec === 12 ? 80 : 5 + w));

  it('starts after every device is onboarded plus the settling time, ends with the run phase (drain left out)', () => {
    expect(steadyWindow(s, 10, 2000, 5000)).toEqual({ window: { fromMs: 6000, toMs: 40_000 }, onboardedAtMs: 4000 });
    // A settling time that falls between boundaries starts at the next interval.
    expect(steadyWindow(s, 10, 1500, 5000)).toMatchObject({ window: { fromMs: 6000 } });
  });

  it('ends at the last interval boundary the process samples reach, when the process exited before the next sample', () => {
    expect(steadyWindow(s, 10, 2000, 5000, 38_700)).toMatchObject({ window: { fromMs: 6000, toMs: 38_000 } });
    expect(steadyWindow(s, 10, 2000, 5000, 40_000)).toMatchObject({ window: { fromMs: 6000, toMs: 40_000 } });
    expect(steadyWindow(s, 10, 2000, 5000, 500)).toEqual({ none: 'no sample of the process falls after the first interval' });
  });

  it('has none when the fleet never onboarded or too little is left', () => {
    expect(steadyWindow(s, 11, 0, 1000)).toEqual({ none: 'the fleet never had all 11 devices onboarded at once (at most 10)' });
    expect(steadyWindow(s, 10, 2000, 35_000)).toMatchObject({ none: expect.stringContaining('less than 35 s of steady state is left before the end at 40 s') });
    expect(steadyWindow([], 10, 0, 0)).toEqual({ none: 'the summary has no run-phase intervals' });
  });

  it('counts the requests of the intervals inside it, and the lag of its intervals only', () => {
    const w = { fromMs: 6000, toMs: 40_000 };
    expect(requestsInWindow(s, w)).toBe(34 * 7);
    // One 80 ms interval of 34 is above the 95th percentile: the typical figure leaves it out.
    const lag = lagInWindow(s, w)!;
    expect(lag.worstMs).toBe(80);
    expect(lag.byWorker).toEqual([
      { worker: 0, worstMs: 5, typicalMs: 5, longestStallMs: 0 },
      { worker: 1, worstMs: 80, typicalMs: 6, longestStallMs: 0 },
    ]);
    expect(lag.typicalMs).toBe(6);
    expect(lagInWindow(s, { fromMs: 50_000, toMs: 60_000 })).toBeUndefined();
  });

  it("names the longest single stall in the window, which a second's p99 hides", () => {
    // Worker 0 stalls 310 ms in second 20 (ending at 21 s) while its p99s stay at 5 ms; the
    // 500 ms stalls while onboarding and the drain's 950 ms lie outside the window.
    const stalls = series([2, 5, 9, 10, ...Array(36).fill(10)], 7, (_, w) => 5 + w, 2, (sec, w) => (sec < 6 ? 500 : w === 0 && sec === 20 ? 310 : 12 + w));
    const lag = lagInWindow(stalls, { fromMs: 6000, toMs: 40_000 })!;
    expect(lag.worstMs).toBe(6);
    expect(lag.longestStall).toEqual({ ms: 310, worker: 0, atS: 21 });
    expect(lag.byWorker.map((r) => r.longestStallMs)).toEqual([310, 13]);
  });

  it('takes the mean and peak RSS of the samples inside it', () => {
    const samples = [sample(0, 0, 50), sample(10, 0, 100), sample(20, 0, 110), sample(30, 0, 500)];
    expect(rssInWindow(samples, 10, 20)).toEqual({ meanBytes: 105 * 2 ** 20, peakBytes: 110 * 2 ** 20 });
    expect(rssInWindow(samples, 11, 19)).toBeUndefined();
  });

  it('nearest-rank quantiles', () => {
    expect(quantile([5, 1, 4, 2, 3], 0.95)).toBe(5);
    expect(quantile(Array.from({ length: 100 }, (_, i) => i + 1), 0.95)).toBe(95);
    expect(() => quantile([], 0.5)).toThrow();
  });
});

describe('figures', () => {
  it('CPU per device-minute, requests per device-minute and CPU per request', () => {
    // 2,000 devices for 5 min with 12 CPU-s and 40,000 requests: 1.2 ms per device-minute, 4 requests, 300 µs each.
    const f = sizeFigures(2000, { fromMs: 60_000, toMs: 360_000 }, 12, 40_000);
    expect(f.windowS).toBe(300);
    expect(f.cpuPerDeviceMinuteMs).toBeCloseTo(1.2, 10);
    expect(f.requestsPerDeviceMinute).toBeCloseTo(4, 10);
    expect(f.cpuPerRequestUs).toBeCloseTo(300, 10);
    expect(sizeFigures(1, { fromMs: 0, toMs: 60_000 }, 1, 0).cpuPerRequestUs).toBeNaN();
  });

  it('RSS growth per device between two sizes, fixed costs cancelling', () => {
    // 150 MiB fixed + 24 KiB a device.
    const rss = (n: number) => 150 * 2 ** 20 + n * 24 * 1024;
    expect(rssGrowthPerDevice({ devices: 2000, rssBytes: rss(2000) }, { devices: 5000, rssBytes: rss(5000) })).toBe(24 * 1024);
    expect(() => rssGrowthPerDevice({ devices: 5, rssBytes: 1 }, { devices: 5, rssBytes: 2 })).toThrow('two fleet sizes');
  });

  it('spreads arrival at about 200 devices a second within bounds', () => {
    expect(defaultArrivalOverMs(2000, 600_000)).toBe(30_000);
    expect(defaultArrivalOverMs(20_000, 600_000)).toBe(100_000);
    expect(defaultArrivalOverMs(100_000, 600_000)).toBe(200_000);
  });
});

describe('--find-max', () => {
  /** Runs the search against a machine that holds `limit` devices. */
  function search(first: number, limit: number, factor = 1.5, precision = 0.1, max = 1e6): Step[] {
    const steps: Step[] = [{ devices: first, ok: first <= limit }];
    for (let n = nextFindMaxSize(steps, factor, precision, max); n !== undefined; n = nextFindMaxSize(steps, factor, precision, max)) {
      expect(steps.map((s) => s.devices)).not.toContain(n);
      steps.push({ devices: n, ok: n <= limit });
      if (steps.length > 50) throw new Error('the search does not end');
    }
    return steps;
  }

  it('grows by the factor, then bisects to within the precision', () => {
    const steps = search(2000, 23_000);
    expect(steps.slice(0, 7).map((s) => s.devices)).toEqual([2000, 3000, 4500, 6750, 10125, 15188, 22782]);
    const best = largestGood(steps)!;
    expect(best).toBeLessThanOrEqual(23_000);
    expect(best).toBeGreaterThan(23_000 / 1.1);
  });

  it('steps down when the first size is already too much', () => {
    const steps = search(10_000, 3000);
    expect(steps[1]!.devices).toBe(6667);
    expect(largestGood(steps)).toBeGreaterThan(3000 / 1.1);
  });

  it('stops at the largest size allowed, and reports none when nothing held', () => {
    expect(search(2000, 1e9, 2, 0.1, 10_000).map((s) => s.devices)).toEqual([2000, 4000, 8000, 10_000]);
    expect(largestGood(search(2, 0))).toBeUndefined();
    expect(() => nextFindMaxSize([], 2, 0.1, 10)).toThrow();
  });
});
