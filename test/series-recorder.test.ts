import { describe, expect, it } from 'vitest';
import { SeriesRecorder } from '../src/runner/series/series-recorder.js';
import type { RunInterval } from '../src/runner/run-series.js';
import { oneTo, syntheticDelta } from './fakes/synthetic-delta.js';

const T0 = 1_000_000;

function recorder(extra: { maxIntervals?: number } = {}): { r: SeriesRecorder; closed: RunInterval[] } {
  const r = new SeriesRecorder({ startAtMs: T0, ...extra });
  const closed: RunInterval[] = [];
  r.onInterval((i) => closed.push(i));
  return { r, closed };
}

function sum(intervals: RunInterval[], endpoint: string, field: 'requests' | 'errors'): number {
  return intervals.reduce((n, i) => n + (i.endpoints[endpoint]?.[field] ?? 0), 0);
}

describe('SeriesRecorder', () => {
  it('puts each delta into the 1 s interval holding the middle of the time it covers, counted from the start instant', () => {
    const { r } = recorder();
    // Worker deltas ~1 s apart, 300 ms off the start instant's seconds.
    r.add(syntheticDelta({ atMs: T0 + 300, intervalMs: 1000, latencies: { config: [5] } })); // middle before the start: interval 0
    r.add(syntheticDelta({ atMs: T0 + 1300, latencies: { config: [5, 6] } })); // middle T0+800: 0
    r.add(syntheticDelta({ atMs: T0 + 2300, latencies: { config: [5, 6, 7] }, errors: { config: 1 } })); // middle 1800: 1
    r.add(syntheticDelta({ workerId: 1, atMs: T0 + 2900, latencies: { info: [9] } })); // middle 2400: 2
    r.finish();
    const s = r.series();
    expect(s.intervalMs).toBe(1000);
    expect(s.intervals.map((i) => [i.tMs, i.durationMs, i.phase])).toEqual([
      [0, 1000, 'run'],
      [1000, 1000, 'run'],
      [2000, 1000, 'run'],
    ]);
    expect(s.intervals.map((i) => i.endpoints.config?.requests ?? 0)).toEqual([3, 3, 0]);
    expect(s.intervals[1]!.endpoints.config!.errors).toBe(1);
    expect(Object.keys(s.intervals[2]!.endpoints)).toEqual(['info']);
    const info = s.intervals[2]!.endpoints.info!;
    expect(info).toMatchObject({ requests: 1, errors: 0 });
    for (const p of [info.p50Ms, info.p90Ms, info.p99Ms, info.maxMs]) expect(p).toBeCloseTo(9, 1);
  });

  it('gives the percentiles of the requests of the interval (HDR resolution)', () => {
    const { r } = recorder();
    r.add(syntheticDelta({ atMs: T0 + 1000, latencies: { config: oneTo(1000) } }));
    r.finish();
    const c = r.series().intervals[0]!.endpoints.config!;
    expect(c.requests).toBe(1000);
    expect(c.p50Ms).toBeCloseTo(500, 0);
    expect(c.p90Ms).toBeCloseTo(900, 0);
    expect(c.p99Ms).toBeCloseTo(990, 0);
    expect(c.maxMs).toBeCloseTo(1000, 0);
  });

  it('closes an interval closeLagMs after its end, empty ones too, and streams it to the listeners', () => {
    const { r, closed } = recorder();
    r.add(syntheticDelta({ atMs: T0 + 1000, latencies: { config: [1] } }));
    r.closeDue(T0 + 2499);
    expect(closed).toHaveLength(0);
    r.closeDue(T0 + 2500);
    expect(closed.map((i) => i.tMs)).toEqual([0]);
    r.closeDue(T0 + 5600); // nothing came for 3 s: empty intervals, still contiguous
    expect(closed.map((i) => i.tMs)).toEqual([0, 1000, 2000, 3000]);
    expect(closed[2]!.endpoints).toEqual({});
    // A delta for a closed interval (a stalled worker) counts in the oldest open one.
    r.add(syntheticDelta({ atMs: T0 + 1500, latencies: { config: [1, 1] } }));
    r.finish();
    expect(closed.map((i) => i.tMs)).toEqual([0, 1000, 2000, 3000, 4000]);
    expect(closed[4]!.endpoints.config!.requests).toBe(2);
    expect(sum(r.series().intervals, 'config', 'requests')).toBe(3);
  });

  it('marks the intervals that start at or after the end of the run phase as the drain, with the drain event', () => {
    const { r } = recorder();
    for (let s = 1; s <= 5; s++) r.add(syntheticDelta({ atMs: T0 + s * 1000 + 400, latencies: { info: [2] } }));
    r.markRunPhaseEnd(T0 + 3000);
    r.event(T0 + 3000, 'drain', 'drain');
    r.finish();
    const s = r.series();
    expect(s.intervals.map((i) => i.phase)).toEqual(['run', 'run', 'run', 'drain', 'drain']);
    expect(s.intervals[3]!.events).toEqual([{ tMs: 3000, kind: 'drain', label: 'drain' }]);
    expect(s.events).toEqual([{ tMs: 3000, kind: 'drain', label: 'drain' }]);
  });

  it('keeps devices and queues at the end of each interval, a silent worker keeping its last figures; loop figures per worker', () => {
    const { r } = recorder();
    r.add(syntheticDelta({ workerId: 0, atMs: T0 + 1000, onboarded: 3, queued: { info: 2 }, loop: { p50Ms: 1, p99Ms: 7, maxMs: 9, utilisation: 0.25 } }));
    r.add(syntheticDelta({ workerId: 1, atMs: T0 + 1000, onboarded: 4, queued: { info: 1 } }));
    r.add(syntheticDelta({ workerId: 0, atMs: T0 + 2000, onboarded: 5, queued: { info: 0 } }));
    r.finish();
    const [a, b] = r.series().intervals;
    expect(a!.devices).toEqual({ onboarded: 7 });
    expect(a!.queued).toEqual({ info: 3 });
    expect(b!.devices).toEqual({ onboarded: 9 });
    expect(b!.queued).toEqual({ info: 1 });
    expect(a!.workers).toEqual([
      { worker: 0, loopP99Ms: 7, loopMaxMs: 9, busy: 0.25 },
      { worker: 1, loopP99Ms: 2, loopMaxMs: 3, busy: 0.5 },
    ]);
    expect(b!.workers.map((w) => w.worker)).toEqual([0]);
  });

  it('counts findings in the interval they were made in', () => {
    const { r } = recorder();
    r.add(syntheticDelta({ atMs: T0 + 2000, findings: { 'bad-signature': 2 } }));
    r.finish();
    expect(r.series().intervals.map((i) => i.findings)).toEqual([{}, { 'bad-signature': 2 }]);
  });

  it('counts the embedded controller\'s samples in the interval holding the middle of their span; merged intervals add up', () => {
    const { r } = recorder();
    r.controller(T0 + 1000, 1000, 40, 0.25); // covers 0..1 s
    r.controller(T0 + 2000, 1000, 60, 0.75); // covers 1..2 s
    r.add(syntheticDelta({ atMs: T0 + 2500 }));
    r.finish();
    const shown = r.series().intervals.map((i) => i.controller);
    expect(shown).toEqual([{ requests: 40, busy: 0.25 }, { requests: 60, busy: 0.75 }, undefined]);
    const capped = new SeriesRecorder({ startAtMs: T0, maxIntervals: 2 });
    for (let k = 1; k <= 4; k++) capped.controller(T0 + k * 1000, 1000, 10 * k, k / 10);
    capped.finish();
    // 4 intervals kept as 2 of 2 s: requests summed, busy time-weighted.
    expect(capped.series().intervals.map((i) => i.controller)).toEqual([{ requests: 30, busy: 0.15 }, { requests: 70, busy: 0.35 }]);
  });

  it('beyond the cap merges neighbours (2 s, 4 s, …), counts conserved, percentiles of the merged requests', () => {
    const { r, closed } = recorder({ maxIntervals: 4 });
    // 10 s: odd seconds fast (10 ms), even seconds slow (100 ms), 100 requests each.
    for (let s = 0; s < 10; s++) {
      r.add(syntheticDelta({ atMs: T0 + s * 1000 + 1000, latencies: { config: Array(100).fill(s % 2 ? 10 : 100) }, errors: { config: s } }));
    }
    r.event(T0 + 4200, 'action', 'reboot group=a');
    r.finish();
    const s = r.series();
    // The stream saw every 1 s interval; the summary holds at most 4.
    expect(closed).toHaveLength(10);
    expect(s.intervals.length).toBeLessThanOrEqual(4);
    expect(s.intervalMs).toBe(4000);
    expect(s.intervals.map((i) => [i.tMs, i.durationMs])).toEqual([
      [0, 4000],
      [4000, 4000],
      [8000, 2000],
    ]);
    expect(sum(s.intervals, 'config', 'requests')).toBe(1000);
    expect(sum(s.intervals, 'config', 'errors')).toBe(45);
    // Half fast, half slow: the median of the merged requests is the fast one, p99 the slow one
    // (an average of the parts' percentiles would say 55 ms for both).
    const first = s.intervals[0]!.endpoints.config!;
    expect(first.p50Ms).toBeCloseTo(10, 1);
    expect(first.p99Ms).toBeCloseTo(100, 0);
    expect(s.intervals[1]!.events).toEqual([{ tMs: 4200, kind: 'action', label: 'reboot group=a' }]);
  });

  it('stays within the cap over a long run', () => {
    const { r } = recorder({ maxIntervals: 1800 });
    for (let s = 0; s < 4000; s++) r.add(syntheticDelta({ atMs: T0 + s * 1000 + 1000, latencies: { config: [1] } }));
    r.finish();
    const s = r.series();
    expect(s.intervals.length).toBeLessThanOrEqual(1800);
    expect(s.intervalMs).toBe(4000);
    expect(sum(s.intervals, 'config', 'requests')).toBe(4000);
    // Contiguous.
    for (let i = 1; i < s.intervals.length; i++) expect(s.intervals[i]!.tMs).toBe(s.intervals[i - 1]!.tMs + s.intervals[i - 1]!.durationMs);
  });
});
