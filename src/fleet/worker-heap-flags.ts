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

import v8 from 'node:v8';

/**
 * Turns V8's memory reducer off for every isolate made from now on (the flag is read when a heap
 * is set up). Process-wide: call it before the worker threads start. The main thread's own heap,
 * made at start, keeps its reducer. Node warns that flags set after start may do nothing; on Node
 * 20 a traced worker made after this call ran no "(reduce)" collection (bench/README.md), and if a
 * later Node ignored it, the workers would merely have their reducer again.
 */
export function disableMemoryReducerForNewHeaps(): void {
  v8.setFlagsFromString('--no-memory-reducer');
}
