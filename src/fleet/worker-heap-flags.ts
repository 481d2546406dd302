// V8 settings for the fleet workers' heaps, applied before the workers exist.
//
// V8's memory reducer watches for an isolate's allocation rate to fall, and then runs up to three
// mark-compacts that also compact memory (traced as "Mark-Compact (reduce)"), to give back the
// pages the busy phase grew into; a watchdog forces the first one when no GC has run for 100 s. In
// a fleet worker that fall is the end of onboarding, and the compaction evacuates the worker's whole
// old generation in one pause: 285 and 389 ms with both workers' event loops stopped, about 100 s
// after 17,000 devices had onboarded (`bench/fleet-capacity --trace-gc`), against 10–35 ms for
// every other mark-compact of the steady state. Every request due in such a pause counts it as
// latency, and it was the worst second of the fleet-capacity runs that set the largest fleet. The
// pages it gave back were taken again by the next GCs (committed 265 → 201 → 233 MiB), so a worker
// gives up little memory without it.
//
// V8 also sizes the next old-generation limit from how fast the isolate promotes against how fast
// it marks. At steady state a fleet worker promotes slowly (a few hundred KB/s), so V8 keeps its
// heap tight, about 1.1 × the live heap, and marks the whole live heap (150 MB at 16,000 devices)
// every 15–25 s; with two workers on two cores that marking (V8's helper threads) took the cores
// from the workers' event loops in the worst seconds of the fleet-capacity runs. A fixed growth of
// 50 % marks a few times less often at the same live heap (bench/README.md, "The old generation's
// growth").

import v8 from 'node:v8';

/** How much a worker's old generation may grow past its live heap before the next mark-compact, in percent. */
export const DEFAULT_WORKER_HEAP_GROWING_PERCENT = 50;
/** The environment variable that overrides it (0: V8 chooses, as it does without evesim). */
export const HEAP_GROWING_PERCENT_ENV = 'EVESIM_HEAP_GROWING_PERCENT';

/** The growth a run's workers get: the default, or the environment's whole number of percent (0 to 1000). */
export function workerHeapGrowingPercent(raw: string | undefined = process.env[HEAP_GROWING_PERCENT_ENV]): number {
  const text = raw?.trim() ?? '';
  if (text === '') return DEFAULT_WORKER_HEAP_GROWING_PERCENT;
  if (!/^\d+$/.test(text) || Number(text) > 1000) {
    throw new RangeError(`${HEAP_GROWING_PERCENT_ENV}=${raw}: expected a whole number of percent from 0 (V8 chooses) to 1000`);
  }
  return Number(text);
}

/** The V8 flags `setWorkerHeapFlags` sets for a growth of `growingPercent`. */
export function workerHeapFlags(growingPercent: number): string[] {
  // Always set, 0 included: the flag is process-wide, and an earlier run in this process may have set another value.
  return ['--no-memory-reducer', `--heap-growing-percent=${growingPercent}`];
}

/**
 * Sets the workers' heap flags. Process-wide: call it before the worker threads start. The memory
 * reducer is read when a heap is set up, so the main thread's own heap, made at start, keeps its
 * reducer; the growth is read at every mark-compact, so it applies to every isolate of the process
 * from then on. Node warns that flags set after start may do nothing; on Node 20 a traced worker
 * made after this call ran no "(reduce)" collection, and a worker's mark-compacts followed the set
 * growth (test/worker-heap-flags.test.ts); if a later Node ignored them, the workers would merely
 * have V8's own behaviour again.
 */
export function setWorkerHeapFlags(growingPercent: number): void {
  for (const flag of workerHeapFlags(growingPercent)) v8.setFlagsFromString(flag);
}
