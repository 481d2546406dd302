// The --trace-gc reader of the fleet-capacity bench: V8's lines as Node 20 prints them (taken from
// a 13,000-device run of this project), mixed with the run's own output.

import { describe, expect, it } from 'vitest';
import { describeGc, longLived, parseGcLine, summariseGc } from '../bench/gc-trace.js';

const MAIN = '0x10a48e00';
const WORKER = '0x7fbfc0000f00';
const SHORT = '0x7fbfb8000b70';

const scavenge = (iso: string, at: number, pause: number) =>
  `[18752:${iso}]   ${at} ms: Scavenge 251.8 (357.2) -> 238.6 (357.5) MB, ${pause.toFixed(2)} / 0.33 ms  (average mu = 0.980, current mu = 0.981) task; `;
const markCompact = (iso: string, at: number, pause: number, inc: number, steps: number, wall: number) =>
  `[18752:${iso}]   ${at} ms: Mark-Compact 248.4 (357.7) -> 221.7 (358.5) MB, ${pause.toFixed(2)} / 0.40 ms  (+ ${inc.toFixed(1)} ms in ${steps} steps since start of marking, biggest step 10.7 ms, walltime since start of marking ${wall} ms) (average mu = 0.982, current mu = 0.984) finalize incremental marking via task; GC in old space requested`;

describe('parseGcLine', () => {
  it('reads a scavenge: isolate, time, final pause', () => {
    expect(parseGcLine(scavenge(WORKER, 198791, 2.82))).toEqual({ isolate: WORKER, atMs: 198791, kind: 'scavenge', pauseMs: 2.82 });
  });

  it('reads the incremental marking a mark-compact did on its thread before its final pause', () => {
    expect(parseGcLine(markCompact(WORKER, 200141, 15.98, 158.2, 227, 313))).toEqual({
      isolate: WORKER,
      atMs: 200141,
      kind: 'mark-compact',
      pauseMs: 15.98,
      incrementalMs: 158.2,
      incrementalSteps: 227,
      biggestStepMs: 10.7,
      markingWalltimeMs: 313,
    });
  });

  it('reads a mark-compact without incremental marking, and the memory reducer\'s kind', () => {
    const plain = `[18752:${MAIN}]       46 ms: Mark-Compact 4.2 (5.0) -> 3.1 (6.0) MB, 3.10 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure; GC in old space requested`;
    expect(parseGcLine(plain)).toEqual({ isolate: MAIN, atMs: 46, kind: 'mark-compact', pauseMs: 3.1 });
    const reduce = `[18752:${MAIN}]     9046 ms: Mark-Compact (reduce) 14.2 (25.0) -> 13.1 (16.0) MB, 5.50 / 0.00 ms  (average mu = 0.990, current mu = 0.990) finalize incremental marking via task; GC in old space requested`;
    expect(parseGcLine(reduce)).toMatchObject({ kind: 'mark-compact', pauseMs: 5.5 });
  });

  it('leaves the run\'s own output alone', () => {
    expect(parseGcLine('evesim: created 13000 device identities in /tmp/run2/gen')).toBeUndefined();
    expect(parseGcLine('')).toBeUndefined();
    expect(parseGcLine('  ✓ findings.count == 0   0')).toBeUndefined();
  });
});

describe('summariseGc', () => {
  // Main thread first; a short-lived isolate (an identity worker); the fleet worker for 400 s with
  // a scavenge every 2 s and a mark-compact every 10 s whose marking grows in the second half.
  const lines = [scavenge(MAIN, 40, 1.0), 'evesim: steady-state (scenarios/steady-state.yaml), seed 7', scavenge(SHORT, 100, 0.5), scavenge(SHORT, 900, 0.7)];
  for (let t = 2000; t <= 400_000; t += 2000) {
    lines.push(t % 10_000 === 0 ? markCompact(WORKER, t, 10 + (t > 200_000 ? 10 : 0), t > 200_000 ? 200 : 50, 100, t > 200_000 ? 400 : 100) : scavenge(WORKER, t, 4));
  }
  lines.push(scavenge(MAIN, 401_000, 2.0));
  const text = lines.join('\n');

  it('sums each isolate over its whole life', () => {
    const all = summariseGc(text);
    expect(all.map((i) => i.isolate)).toEqual([MAIN, SHORT, WORKER]);
    const w = all[2]!;
    expect(w.scavenges).toEqual({ count: 160, totalMs: 640, maxMs: 4 });
    expect(w.markCompacts.count).toBe(40);
    expect(w.markCompacts.pauseMaxMs).toBe(20);
    expect(w.markCompacts.incrementalMaxMs).toBe(200);
    expect(w.markCompacts.walltimeOfMaxMs).toBe(400);
    expect(w.markCompacts.worstCycleMs).toBe(220);
    // 640 ms of scavenges, 20 × (10 + 50) + 20 × (20 + 200) ms of marking in 400 s.
    expect(w.threadShare).toBeCloseTo((640 + 20 * 60 + 20 * 220) / 400_000, 6);
  });

  it('keeps only the second half of each life with fromFraction 0.5', () => {
    const w = summariseGc(text, 0.5)[2]!;
    expect(w.fromMs).toBe(200_000);
    expect(w.markCompacts.count).toBe(21); // 200 s (the last of the first half's cycles) to 400 s
    expect(w.markCompacts.incrementalMedianMs).toBe(200);
  });

  it('picks the long-lived isolates: main thread and fleet worker, not the short one', () => {
    expect(longLived(summariseGc(text)).map((i) => i.isolate)).toEqual([MAIN, WORKER]);
  });

  it('describes a worker in one line with the marking beside the final pause', () => {
    const line = describeGc(summariseGc(text, 0.5)[2]!, 'worker thread 0');
    expect(line).toMatch(/^worker thread 0: GC [0-9.]+ % of the thread's time; /);
    expect(line).toContain('final pause at most 20.0 ms');
    expect(line).toContain('at most 200 ms within 400 ms');
    expect(line).toContain('6.3 mark-compacts a minute');
  });

  it('gives nothing for a log without trace lines', () => {
    expect(summariseGc('evesim: created 10 device identities\nfine\n')).toEqual([]);
    expect(longLived([])).toEqual([]);
  });
});
