// The whole machine's CPU share over a run (every process counted), from two samples of the
// kernel's per-CPU times, and only where it is a share of the same cores as the generator's own.

import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { machineBusyPercent, sampleMachineCpu } from '../src/runner/machine-cpu.js';

describe('machineBusyPercent', () => {
  it('is the busy share of the CPU time that passed between the samples', () => {
    const start = { busyMs: 1_000, totalMs: 10_000, cpus: 2 };
    expect(machineBusyPercent(start, { busyMs: 1_950, totalMs: 11_000, cpus: 2 }, 2)).toBeCloseTo(95, 9);
    expect(machineBusyPercent(start, { busyMs: 1_000, totalMs: 12_000, cpus: 2 }, 2)).toBe(0);
  });

  it('is undefined when no time passed, CPUs came or went, or the generator may use other CPUs than the kernel lists', () => {
    const start = { busyMs: 1_000, totalMs: 10_000, cpus: 2 };
    expect(machineBusyPercent(start, start, 2)).toBeUndefined();
    expect(machineBusyPercent(start, { busyMs: 2_000, totalMs: 12_000, cpus: 4 }, 4)).toBeUndefined();
    expect(machineBusyPercent(start, { busyMs: 2_000, totalMs: 12_000, cpus: 2 }, 1)).toBeUndefined();
  });

  it('never leaves 0..100, whatever the counters did', () => {
    const start = { busyMs: 5_000, totalMs: 10_000, cpus: 1 };
    expect(machineBusyPercent(start, { busyMs: 4_000, totalMs: 11_000, cpus: 1 }, 1)).toBe(0);
    expect(machineBusyPercent(start, { busyMs: 9_000, totalMs: 11_000, cpus: 1 }, 1)).toBe(100);
  });

  it('sees this process keep a core busy', () => {
    const start = sampleMachineCpu();
    expect(start.cpus).toBe(os.cpus().length);
    // Spin until the kernel's counters (10 ms ticks) have moved by a good margin.
    const until = Date.now() + 300;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    const share = machineBusyPercent(start, sampleMachineCpu(), start.cpus);
    expect(x).toBeGreaterThan(0);
    // One busy core of n is at least about 1/n of the machine, less the counters' granularity.
    expect(share).toBeGreaterThan(100 / start.cpus / 2);
    expect(share).toBeLessThanOrEqual(100);
  });
});
