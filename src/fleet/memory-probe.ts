// Memory a worker holds for its devices, measured honestly: live objects after a full garbage
// collection (heap plus ArrayBuffers outside it), not a peak that includes garbage. A forced GC
// needs `node --expose-gc` (the benchmark runs that way); without it the probe returns undefined
// and only the peak is reported.

import { writeHeapSnapshot } from 'node:v8';
import { join } from 'node:path';

export interface SettledMemory {
  heapUsed: number;
  arrayBuffers: number;
}

export function settledMemory(): SettledMemory | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') return undefined;
  gc();
  gc(); // a second pass frees what the first one's finalizers released
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers };
}

/** Bytes per device between a baseline taken before any device existed and a sample with all of them live. */
export function bytesPerDevice(before: SettledMemory, after: SettledMemory, devices: number): number {
  const grown = after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers);
  return devices > 0 ? grown / devices : 0;
}

/**
 * With EVESIM_HEAP_SNAPSHOT=DIR, writes DIR/worker-N.heapsnapshot at the settled sample, for
 * bench/heap-breakdown.ts to say which objects the per-device figure is made of.
 */
export function writeHeapSnapshotIfAsked(workerId: number): string | undefined {
  const dir = process.env.EVESIM_HEAP_SNAPSHOT;
  if (!dir) return undefined;
  return writeHeapSnapshot(join(dir, `worker-${workerId}.heapsnapshot`));
}
