// Memory a worker holds for its devices, measured honestly: live objects after a full garbage
// collection (heap plus ArrayBuffers outside it), not a peak that includes garbage. A forced GC
// needs `node --expose-gc` (the benchmark runs that way); without it the probe returns undefined
// and only the peak is reported.

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
