// bench/long-turns.ts: the busy stretches of a CPU profile and what ran in them, on a hand-built
// profile whose times are known. Frames are named as cpu-profile-summary names them.

import { describe, expect, it } from 'vitest';
import { longTurns, type CpuProfile } from '../bench/long-turns.js';

const frame = (functionName: string, url = '/x/dist/src/fleet/shard-runner.js', lineNumber = 9) => ({ functionName, url, lineNumber });

// (root) → tick → closeLines → deflate; (root) → (idle); (root) → (garbage collector)
const profile = (samples: number[], deltasMs: number[]): CpuProfile => ({
  nodes: [
    { id: 1, callFrame: frame('(root)', '', -1), children: [2, 5, 6] },
    { id: 2, callFrame: frame('tick'), children: [3] },
    { id: 3, callFrame: frame('closeLines', '/x/dist/src/device/telemetry/log-uploader.js', 265), children: [4] },
    { id: 4, callFrame: frame('deflate', 'node:zlib', 392) },
    { id: 5, callFrame: frame('(idle)', '', -1) },
    { id: 6, callFrame: frame('(garbage collector)', '', -1) },
  ],
  samples,
  timeDeltas: deltasMs.map((ms) => ms * 1000),
});

describe('long turns of a CPU profile', () => {
  // Samples at 10, 20, 30 … ms (the first delta is from the profile's start), each standing for
  // the 10 ms to the next: idle, then tick 10 ms, closeLines 10, deflate 60, GC 20 (one 100 ms
  // stretch from 20 to 120 ms), idle, a 30 ms stretch of tick from 130 ms, idle.
  const p = profile([5, 2, 3, 4, 4, 4, 4, 4, 4, 6, 6, 5, 2, 2, 2, 5], Array(16).fill(10));

  it('finds the busy stretches, longest first, and keeps those of the minimum length', () => {
    const s = longTurns(p, 80);
    expect(s.longestMs).toEqual([100, 30]);
    expect(s.turns).toEqual([{ atMs: 20, durationMs: 100 }]);
    expect(s.totalMs).toBe(100);
  });

  it('gives what ran in them, inclusive and self, with the file names after dist/', () => {
    const s = longTurns(p, 80);
    expect(s.self).toEqual([
      ['deflate node:zlib:393', 60],
      ['(garbage collector) ((garbage collector))', 20],
      ['tick src/fleet/shard-runner.js:10', 10],
      ['closeLines src/device/telemetry/log-uploader.js:266', 10],
    ]);
    expect(new Map(s.inclusive).get('(root) ((root))')).toBe(100);
    expect(new Map(s.inclusive).get('tick src/fleet/shard-runner.js:10')).toBe(80);
    expect(new Map(s.inclusive).get('closeLines src/device/telemetry/log-uploader.js:266')).toBe(70);
  });

  it('gives the entry each sample ran under: the outermost frame below the root', () => {
    expect(longTurns(p, 80).entries).toEqual([
      ['tick src/fleet/shard-runner.js:10', 80],
      ['(garbage collector) ((garbage collector))', 20],
    ]);
  });

  it('starts at --from, ends at --to, and keeps shorter stretches with a lower minimum', () => {
    expect(longTurns(p, 80, 50).turns).toEqual([]);
    // --to ends the last stretch there: 20–90 ms of the 100 ms one.
    expect(longTurns(p, 20, 0, 90).turns).toEqual([{ atMs: 20, durationMs: 70 }]);
    expect(longTurns(p, 20, 50).turns).toEqual([
      { atMs: 50, durationMs: 70 },
      { atMs: 130, durationMs: 30 },
    ]);
  });
});
