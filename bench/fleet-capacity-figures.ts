// The pure part of bench/fleet-capacity.ts: reading a process's CPU time and RSS from /proc, the
// steady-state window of a run (after every device has onboarded and a settling margin, up to the
// end of the run phase, so neither onboarding nor the drain counts), and the figures over it.
// No I/O here: the bench reads the files and the summary, these functions do the sums.

import type { RunInterval } from '../src/runner/run-series.js';

/** CPU seconds (user + system, every thread) from the text of /proc/<pid>/stat. */
export function cpuSecondsFromProcStat(stat: string, clockTicksPerSecond: number): number {
  const t = procStatTimes(stat, clockTicksPerSecond);
  return t.userS + t.systemS;
}

/**
 * User and system (kernel) CPU seconds, every thread, from the text of /proc/<pid>/stat. The
 * kernel's share matters on loopback: a socket write there also runs the receiver's TCP input in
 * the writer's system time, which a generator on another machine than its controller would not pay.
 */
export function procStatTimes(stat: string, clockTicksPerSecond: number): { userS: number; systemS: number } {
  // The command name (field 2) is in parentheses and may itself hold spaces and ')': the fields
  // after the last ')' start with field 3 (state); utime and stime are fields 14 and 15.
  const close = stat.lastIndexOf(')');
  if (close < 0) throw new Error(`not a /proc/<pid>/stat line: ${JSON.stringify(stat.slice(0, 80))}`);
  const fields = stat.slice(close + 1).trim().split(/\s+/);
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`/proc/<pid>/stat has no utime/stime: ${JSON.stringify(stat.slice(0, 120))}`);
  return { userS: utime / clockTicksPerSecond, systemS: stime / clockTicksPerSecond };
}

/** Resident set size in bytes from the text of /proc/<pid>/status (its VmRSS line, in kB = KiB). */
export function rssBytesFromProcStatus(status: string): number {
  const m = /^VmRSS:\s*(\d+)\s*kB$/m.exec(status);
  if (!m) throw new Error('/proc/<pid>/status has no VmRSS line (has the process exited?)');
  return Number(m[1]) * 1024;
}

/** One reading of a process, taken by the bench every few seconds. */
export interface ProcSample {
  /** Epoch ms of the reading. */
  atMs: number;
  /** Cumulative CPU seconds of the process. */
  cpuS: number;
  /** Of them, in the kernel (system time); absent from samples that did not read it. */
  systemS?: number;
  rssBytes: number;
}

/** Cumulative CPU seconds at `atMs` (or of `field`: system time), linear between the two samples around it. */
export function cpuSecondsAt(samples: readonly ProcSample[], atMs: number, field: 'cpuS' | 'systemS' = 'cpuS'): number {
  const v = (s: ProcSample): number => {
    const x = s[field];
    if (x === undefined) throw new Error(`a CPU sample of ${new Date(s.atMs).toISOString()} has no ${field}`);
    return x;
  };
  if (samples.length === 0) throw new Error('no CPU samples');
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  if (atMs < first.atMs || atMs > last.atMs) {
    throw new Error(`no CPU sample around ${new Date(atMs).toISOString()} (samples from ${new Date(first.atMs).toISOString()} to ${new Date(last.atMs).toISOString()})`);
  }
  for (let i = 1; i < samples.length; i++) {
    const b = samples[i]!;
    if (b.atMs < atMs) continue;
    const a = samples[i - 1]!;
    if (b.atMs === a.atMs) return v(b);
    return v(a) + ((v(b) - v(a)) * (atMs - a.atMs)) / (b.atMs - a.atMs);
  }
  return v(last);
}

/** A part of the run phase, ms since the run's start instant. */
export interface Window {
  fromMs: number;
  toMs: number;
}

export type SteadyWindow = { window: Window; onboardedAtMs: number } | { none: string };

/**
 * The steady-state window: from the end of the first interval at which every device was onboarded,
 * plus `settleMs`, to the end of the run phase, on interval boundaries so requests can be counted
 * exactly. `lastSampleMs` (ms since the start) is the last instant the process was read alive: the
 * run phase ends shortly before the process exits, so the window ends at the last interval boundary
 * the samples reach (at most one sampling period early). None when the fleet never fully onboarded
 * or the window would be shorter than `minMs`.
 */
export function steadyWindow(intervals: readonly RunInterval[], devices: number, settleMs: number, minMs: number, lastSampleMs = Infinity): SteadyWindow {
  const run = intervals.filter((i) => i.phase === 'run');
  if (run.length === 0) return { none: 'the summary has no run-phase intervals' };
  const full = run.find((i) => (i.devices.onboarded ?? 0) >= devices);
  if (!full) {
    const most = Math.max(...run.map((i) => i.devices.onboarded ?? 0));
    return { none: `the fleet never had all ${devices} devices onboarded at once (at most ${most})` };
  }
  const onboardedAtMs = full.tMs + full.durationMs;
  const from = run.find((i) => i.tMs >= onboardedAtMs + settleMs);
  const ends = run.map((i) => i.tMs + i.durationMs).filter((t) => t <= lastSampleMs);
  const toMs = ends.length ? Math.max(...ends) : 0;
  if (!from || toMs - from.tMs < minMs) {
    if (toMs === 0) return { none: 'no sample of the process falls after the first interval' };
    return { none: `every device was onboarded at ${(onboardedAtMs / 1000).toFixed(0)} s: with ${(settleMs / 1000).toFixed(0)} s to settle, less than ${(minMs / 1000).toFixed(0)} s of steady state is left before the end at ${(toMs / 1000).toFixed(0)} s (give a longer --duration or a shorter --arrival-over)` };
  }
  return { window: { fromMs: from.tMs, toMs }, onboardedAtMs };
}

/** The run-phase intervals that lie inside the window. */
export function inWindow(intervals: readonly RunInterval[], w: Window): RunInterval[] {
  return intervals.filter((i) => i.phase === 'run' && i.tMs >= w.fromMs && i.tMs + i.durationMs <= w.toMs);
}

/** Requests finished within the window, every endpoint. */
export function requestsInWindow(intervals: readonly RunInterval[], w: Window): number {
  let n = 0;
  for (const i of inWindow(intervals, w)) for (const e of Object.values(i.endpoints)) n += e.requests;
  return n;
}

/** Event-loop lag of the workers over the window, from their per-interval p99s. */
export interface WindowLag {
  /** The worst worker's worst interval p99: an upper bound of its p99 over the window (what `loop_lag.p99 … after` judges). */
  worstMs: number;
  /** The worst worker's 95th percentile of its interval p99s: what the lag is outside the odd long pause. */
  typicalMs: number;
  /**
   * The longest single stall of any worker in the window (its loop-delay maximum), and when it
   * ended. A long pause is one sample among the second's many (stalls of 335 and 440 ms showed
   * as seconds with a p99 of 56 and 64 ms), so the p99s alone hide the pauses devices feel most.
   */
  longestStall: { ms: number; worker: number; atS: number };
  /** Per worker: its worst interval p99, its 95th percentile of them, and its longest stall. */
  byWorker: { worker: number; worstMs: number; typicalMs: number; longestStallMs: number }[];
}

export function lagInWindow(intervals: readonly RunInterval[], w: Window): WindowLag | undefined {
  const byWorker = new Map<number, { p99s: number[]; stallMs: number }>();
  let longestStall: WindowLag['longestStall'] | undefined;
  for (const i of inWindow(intervals, w)) {
    for (const x of i.workers) {
      let l = byWorker.get(x.worker);
      if (!l) byWorker.set(x.worker, (l = { p99s: [], stallMs: 0 }));
      l.p99s.push(x.loopP99Ms);
      l.stallMs = Math.max(l.stallMs, x.loopMaxMs);
      if (!longestStall || x.loopMaxMs > longestStall.ms) longestStall = { ms: x.loopMaxMs, worker: x.worker, atS: (i.tMs + i.durationMs) / 1000 };
    }
  }
  if (!longestStall) return undefined;
  const rows = [...byWorker]
    .sort(([a], [b]) => a - b)
    .map(([worker, l]) => ({ worker, worstMs: Math.max(...l.p99s), typicalMs: quantile(l.p99s, 0.95), longestStallMs: l.stallMs }));
  return { worstMs: Math.max(...rows.map((r) => r.worstMs)), typicalMs: Math.max(...rows.map((r) => r.typicalMs)), longestStall, byWorker: rows };
}

/** The q-quantile of the values (nearest rank). */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new Error('quantile of no values');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Mean and peak RSS of the samples taken within [fromMs, toMs] (epoch ms). */
export function rssInWindow(samples: readonly ProcSample[], fromMs: number, toMs: number): { meanBytes: number; peakBytes: number } | undefined {
  const inside = samples.filter((s) => s.atMs >= fromMs && s.atMs <= toMs);
  if (inside.length === 0) return undefined;
  return { meanBytes: inside.reduce((a, s) => a + s.rssBytes, 0) / inside.length, peakBytes: Math.max(...inside.map((s) => s.rssBytes)) };
}

/** What one fleet size cost the generator over its steady-state window. */
export interface SizeFigures {
  devices: number;
  windowS: number;
  cpuS: number;
  requests: number;
  /** Generator CPU per device-minute, ms. */
  cpuPerDeviceMinuteMs: number;
  requestsPerDeviceMinute: number;
  /** Generator CPU per request, µs. */
  cpuPerRequestUs: number;
}

export function sizeFigures(devices: number, w: Window, cpuS: number, requests: number): SizeFigures {
  const windowS = (w.toMs - w.fromMs) / 1000;
  const deviceMinutes = (devices * windowS) / 60;
  return {
    devices,
    windowS,
    cpuS,
    requests,
    cpuPerDeviceMinuteMs: (cpuS * 1000) / deviceMinutes,
    requestsPerDeviceMinute: requests / deviceMinutes,
    cpuPerRequestUs: requests > 0 ? (cpuS * 1e6) / requests : NaN,
  };
}

/** RSS growth per device between two fleet sizes, bytes: the fixed costs cancel. */
export function rssGrowthPerDevice(a: { devices: number; rssBytes: number }, b: { devices: number; rssBytes: number }): number {
  if (a.devices === b.devices) throw new Error(`two fleet sizes are needed, got ${a.devices} twice`);
  return (b.rssBytes - a.rssBytes) / (b.devices - a.devices);
}

/** One step of --find-max: a fleet size and whether its lag stayed under the limit. */
export interface Step {
  devices: number;
  ok: boolean;
}

/**
 * The next fleet size to try, or undefined when the search is done: grow by `factor` while every
 * size stayed under the limit; after the first that did not, bisect between the largest good and
 * the smallest bad until they are within `precision` (a share of the good one) of each other.
 */
export function nextFindMaxSize(steps: readonly Step[], factor: number, precision: number, maxDevices: number): number | undefined {
  if (steps.length === 0) throw new Error('--find-max starts from a first size');
  const good = steps.filter((s) => s.ok).map((s) => s.devices);
  const bad = steps.filter((s) => !s.ok).map((s) => s.devices);
  const lo = good.length ? Math.max(...good) : undefined;
  const hi = bad.length ? Math.min(...bad) : undefined;
  if (hi === undefined) {
    const next = Math.min(maxDevices, Math.round(lo! * factor));
    return next > lo! ? next : undefined;
  }
  if (lo === undefined) {
    // Even the first size was too much: step down until one holds.
    const next = Math.round(hi / factor);
    return next >= 1 && next < hi ? next : undefined;
  }
  if (hi - lo <= Math.max(1, lo * precision)) return undefined;
  return Math.round((lo + hi) / 2);
}

/** The largest size that stayed under the limit, if any. */
export function largestGood(steps: readonly Step[]): number | undefined {
  const good = steps.filter((s) => s.ok).map((s) => s.devices);
  return good.length ? Math.max(...good) : undefined;
}

/** The default arrival spread: about 200 devices a second, at least 30 s, at most a third of the run. */
export function defaultArrivalOverMs(devices: number, durationMs: number): number {
  return Math.round(Math.min(durationMs / 3, Math.max(30_000, (devices / 200) * 1000)));
}
