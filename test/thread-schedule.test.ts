// The per-thread run and wait times fleet-capacity reads from /proc (bench/thread-schedule.ts):
// interpolation between readings, which threads are the event loops, and a window's seconds.

import { describe, expect, it } from 'vitest';
import { quantile } from '../bench/fleet-capacity-figures.js';
import { counterAt, describeSecond, eventLoopThreads, readThreadSample, threadsInInterval, windowThreads, type ThreadSample } from '../bench/thread-schedule.js';

const ms = 1e6;
/** pid 10 (main), workers 11 and 12, background 13; readings every 500 ms from t = 1000. */
const samples: ThreadSample[] = [
  { atMs: 1000, threads: new Map([[10, [0, 0]], [11, [0, 0]], [12, [0, 0]], [13, [0, 0]]] as const) },
  { atMs: 1500, threads: new Map([[10, [5 * ms, 0]], [11, [100 * ms, 10 * ms]], [12, [90 * ms, 20 * ms]], [13, [1 * ms, 0]]] as const) },
  { atMs: 2000, threads: new Map([[10, [10 * ms, 0]], [11, [200 * ms, 20 * ms]], [12, [180 * ms, 40 * ms]], [13, [2 * ms, 0]]] as const) },
  // A busy second: the background thread takes the cores and the workers wait.
  { atMs: 2500, threads: new Map([[10, [15 * ms, 0]], [11, [250 * ms, 220 * ms]], [12, [230 * ms, 240 * ms]], [13, [402 * ms, 100 * ms]], [14, [1 * ms, 0]]] as const) },
  { atMs: 3000, threads: new Map([[10, [20 * ms, 0]], [11, [300 * ms, 420 * ms]], [12, [280 * ms, 440 * ms]], [13, [802 * ms, 200 * ms]], [14, [2 * ms, 0]]] as const) },
];

describe('thread schedule', () => {
  it('interpolates a counter between readings, 0 before a thread starts, its last value after', () => {
    expect(counterAt(samples, 11, 0, 1250)).toBeCloseTo(50 * ms);
    expect(counterAt(samples, 11, 1, 2000)).toBe(20 * ms);
    expect(counterAt(samples, 11, 0, 500)).toBe(0);
    expect(counterAt(samples, 14, 0, 2000)).toBe(0);
    expect(counterAt(samples, 11, 0, 9000)).toBe(300 * ms);
  });

  it('takes the main thread and the longest-running others as the event loops', () => {
    expect(eventLoopThreads(samples, 10, 2)).toEqual({ main: 10, workers: [13, 11], background: [12, 14] });
    // Over the quiet first second alone, the workers are the two busiest.
    expect(eventLoopThreads(samples.slice(0, 3), 10, 2)).toEqual({ main: 10, workers: [11, 12], background: [13] });
  });

  it("gives each second's waits and runs, and picks the worst stall's and the longest wait's seconds", () => {
    const roles = { main: 10, workers: [11, 12], background: [13, 14] };
    // 14 started after 2000 (counted from 0): 2 ms of its own.
    expect(threadsInInterval(samples, roles, 2000, 3000)).toEqual({ workerWaitMs: [400, 400], workerRunMs: [100, 100], backgroundRunMs: 802 });
    const intervals = [
      { tMs: 0, durationMs: 1000, workers: [{ worker: 0, loopMaxMs: 30 }, { worker: 1, loopMaxMs: 5 }] },
      { tMs: 1000, durationMs: 1000, workers: [{ worker: 0, loopMaxMs: 12 }, { worker: 1, loopMaxMs: 90 }] },
    ];
    // The run started at 1000: its seconds are [1000, 2000] and [2000, 3000]; the workers are the two busiest of the whole run (13 and 11).
    const w = windowThreads(samples, 10, intervals, 1000)!;
    expect(w.seconds).toBe(2);
    expect(w.worstStall.atS).toBe(2);
    expect(w.worstStall.stallMs).toBe(90);
    // Over the whole run 13 and 11 ran longest: they are the workers, 12 and 14 the background (100 + 2 ms in that second).
    expect(w.worstStall.backgroundRunMs).toBeCloseTo(102);
    expect(w.longestWait).toBe(w.worstStall);
    // The worst-waiting worker: 20 ms in the first second, 400 in the second; the lower middle.
    expect(w.medianWorkerWaitMs).toBeCloseTo(20);
    expect(describeSecond(w.worstStall)).toBe('second ending at 2 s: longest stall 90 ms; the workers waited for a core 200 / 400 ms and ran 800 / 100 ms; background threads ran 102 ms');
    expect(windowThreads(samples, 10, [], 1000)).toBeUndefined();
    expect(windowThreads(samples, 10, intervals, 9000)).toBeUndefined();
  });

  it("takes the lower middle as the median of an even count (fleet-capacity-figures' nearest-rank quantile)", () => {
    expect(quantile([4, 1, 3, 2], 0.5)).toBe(2);
    expect(() => quantile([], 0.5)).toThrow('quantile of no values');
  });

  it.skipIf(process.platform !== 'linux')('reads the threads of a live process, and nothing once it is gone', () => {
    const s = readThreadSample(process.pid)!;
    expect(s.threads.get(process.pid)![0]).toBeGreaterThan(0);
    expect(s.threads.size).toBeGreaterThan(1);
    expect(readThreadSample(2 ** 22 + 7)).toBeUndefined();
  });
});
