// Which of a process's threads had the CPU, and which waited for it: /proc/PID/task/TID/schedstat
// gives each thread's time on a core and its time runnable but waiting in the kernel's run queue
// (ns). Sampled a few times a second through a run, it tells a worker stall that is the worker's
// own work from one where the worker was ready but other threads held both cores: at 32,000
// devices on two cores, most seconds with a stall of 40-90 ms were seconds in which V8's background
// threads (concurrent GC marking for every isolate of the process) ran 320-470 ms and the workers
// waited 190-430 ms for a core (bench/README.md, "Where a stall's time went").

import { readdirSync, readFileSync } from 'node:fs';
import { quantile } from './fleet-capacity-figures.js';

/** One reading of every thread of a process: thread id → [ns on a core, ns waiting for one]. */
export interface ThreadSample {
  atMs: number;
  threads: Map<number, readonly [number, number]>;
}

/** Reads /proc/PID/task/*\/schedstat now; undefined once the process is gone. */
export function readThreadSample(pid: number, atMs = Date.now()): ThreadSample | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  const threads = new Map<number, readonly [number, number]>();
  for (const t of tids) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').trim().split(' ').map(Number);
      if (Number.isFinite(run) && Number.isFinite(wait)) threads.set(Number(t), [run!, wait!]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return { atMs, threads };
}

/**
 * A thread's counter (0: on a core, 1: waiting) at `atMs`, ns, linear between the two readings
 * around it; a thread not yet started counts 0, one that has ended keeps its last value.
 */
export function counterAt(samples: readonly ThreadSample[], tid: number, field: 0 | 1, atMs: number): number {
  let before: number | undefined;
  let beforeMs = 0;
  for (const s of samples) {
    const v = s.threads.get(tid)?.[field];
    if (s.atMs >= atMs) {
      if (v === undefined) return before ?? 0;
      if (before === undefined || s.atMs === beforeMs) return before ?? v;
      return before + ((v - before) * (atMs - beforeMs)) / (s.atMs - beforeMs);
    }
    if (v !== undefined) {
      before = v;
      beforeMs = s.atMs;
    }
  }
  return before ?? 0;
}

/**
 * The event-loop threads: the main thread (its id is the pid) and the `workers` threads that ran
 * longest besides it (a fleet worker runs far longer than any background thread). The rest are
 * background threads: V8's platform threads, libuv's pool, Node's own.
 */
export function eventLoopThreads(samples: readonly ThreadSample[], pid: number, workers: number): { main: number; workers: number[]; background: number[] } {
  const last = new Map<number, number>();
  for (const s of samples) for (const [tid, [run]] of s.threads) last.set(tid, run);
  const others = [...last.keys()].filter((t) => t !== pid).sort((a, b) => last.get(b)! - last.get(a)! || a - b);
  return { main: pid, workers: others.slice(0, workers), background: others.slice(workers) };
}

/** What the threads did in one interval, ms. */
export interface IntervalThreads {
  /** Each worker's time waiting for a core, in the order of eventLoopThreads' workers. */
  workerWaitMs: number[];
  /** Each worker's time on a core. */
  workerRunMs: number[];
  /** All background threads' time on a core, summed. */
  backgroundRunMs: number;
}

/** The threads' time in [fromMs, toMs] (epoch ms). */
export function threadsInInterval(samples: readonly ThreadSample[], roles: ReturnType<typeof eventLoopThreads>, fromMs: number, toMs: number): IntervalThreads {
  const d = (tid: number, field: 0 | 1) => (counterAt(samples, tid, field, toMs) - counterAt(samples, tid, field, fromMs)) / 1e6;
  return {
    workerWaitMs: roles.workers.map((t) => d(t, 1)),
    workerRunMs: roles.workers.map((t) => d(t, 0)),
    backgroundRunMs: roles.background.reduce((a, t) => a + d(t, 0), 0),
  };
}

/** One second of the window: its end (s from the run's start), the longest worker stall, and what the threads did. */
export interface SecondThreads extends IntervalThreads {
  atS: number;
  stallMs: number;
}

/** The threads over a steady-state window, second by second, for the bench's report. */
export interface WindowThreads {
  seconds: number;
  /** Median over the seconds of the longest-waiting worker's wait for a core, ms. */
  medianWorkerWaitMs: number;
  /** Median over the seconds of the background threads' time on a core, ms. */
  medianBackgroundRunMs: number;
  /** The second with the longest worker stall. */
  worstStall: SecondThreads;
  /** The second in which a worker waited longest for a core. */
  longestWait: SecondThreads;
}

/**
 * The window's seconds (the run's series intervals, `tMs` from `startMs`) with the threads' time
 * in each; undefined when there are no intervals or no thread readings inside the window.
 */
export function windowThreads(
  samples: readonly ThreadSample[],
  pid: number,
  intervals: readonly { tMs: number; durationMs: number; workers: readonly { worker: number; loopMaxMs: number }[] }[],
  startMs: number,
): WindowThreads | undefined {
  if (intervals.length === 0 || samples.length < 2) return undefined;
  const from = startMs + intervals[0]!.tMs;
  if (!samples.some((s) => s.atMs >= from)) return undefined;
  const workerCount = new Set(intervals.flatMap((i) => i.workers.map((w) => w.worker))).size;
  const roles = eventLoopThreads(samples, pid, workerCount);
  const seconds: SecondThreads[] = intervals.map((i) => ({
    atS: (i.tMs + i.durationMs) / 1000,
    stallMs: Math.max(0, ...i.workers.map((w) => w.loopMaxMs)),
    ...threadsInInterval(samples, roles, startMs + i.tMs, startMs + i.tMs + i.durationMs),
  }));
  const maxWait = (s: SecondThreads) => Math.max(0, ...s.workerWaitMs);
  const worst = (key: (s: SecondThreads) => number) => seconds.reduce((a, s) => (key(s) > key(a) ? s : a));
  return {
    seconds: seconds.length,
    medianWorkerWaitMs: quantile(seconds.map(maxWait), 0.5),
    medianBackgroundRunMs: quantile(seconds.map((s) => s.backgroundRunMs), 0.5),
    worstStall: worst((s) => s.stallMs),
    longestWait: worst(maxWait),
  };
}

/** "at 413 s: stall 90 ms; workers waited 431 / 404 ms and ran 307 / 289 ms; background threads ran 467 ms". */
export function describeSecond(s: SecondThreads): string {
  const ms = (v: readonly number[]) => v.map((x) => x.toFixed(0)).join(' / ');
  return `second ending at ${s.atS.toFixed(0)} s: longest stall ${s.stallMs.toFixed(0)} ms; the workers waited for a core ${ms(s.workerWaitMs)} ms and ran ${ms(s.workerRunMs)} ms; background threads ran ${s.backgroundRunMs.toFixed(0)} ms`;
}
