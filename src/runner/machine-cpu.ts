// How busy the whole machine's CPUs were over a run, every process counted (os.cpus(): the
// kernel's per-CPU times). Beside the generator's own CPU share it tells what else used the cores:
// a controller on the same machine, or other tenants. The saturation verdict uses it so that a run
// whose generator and controller shared too few cores is not blamed on the controller alone.

import os from 'node:os';

/** Summed CPU times of every CPU the kernel reports, ms. */
export interface MachineCpuSample {
  busyMs: number;
  totalMs: number;
  cpus: number;
}

/** The machine's CPU times now (I/O: reads the kernel's counters). */
export function sampleMachineCpu(): MachineCpuSample {
  let busyMs = 0;
  let totalMs = 0;
  const cpus = os.cpus();
  for (const c of cpus) {
    const t = c.times;
    const total = t.user + t.nice + t.sys + t.idle + t.irq;
    totalMs += total;
    busyMs += total - t.idle;
  }
  return { busyMs, totalMs, cpus: cpus.length };
}

/**
 * Share of the machine's CPU time that was busy between two samples, percent (0..100). Undefined
 * when the kernel reported nothing between them (no CPUs listed, no time passed, CPUs came or
 * went), or when it lists other CPUs than the `cores` the generator's own CPU share is taken over
 * (a process pinned to some of them): the two shares would not be of the same whole.
 */
export function machineBusyPercent(start: MachineCpuSample, end: MachineCpuSample, cores: number): number | undefined {
  const total = end.totalMs - start.totalMs;
  if (!(total > 0) || end.cpus !== start.cpus || end.cpus !== cores) return undefined;
  const busy = Math.min(total, Math.max(0, end.busyMs - start.busyMs));
  return (busy / total) * 100;
}
