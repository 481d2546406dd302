import { describe, expect, it } from 'vitest';
import { MetricRecorder } from '../src/fleet/metric-recorder.js';
import { emptyLifecycleCounts, type FleetDelta } from '../src/fleet/fleet-delta.js';
import { percentileMs } from '../src/fleet/latency-histogram.js';
import { FleetAggregate } from '../src/runner/aggregate.js';
import type { RequestOutcome } from '../src/transport/request-observer.js';
import type { EndpointKey } from '../src/protocol/endpoints.js';

function outcome(endpoint: EndpointKey, status: number, dueAt: number, doneAt: number, error?: string): RequestOutcome {
  return {
    endpoint,
    deviceIndex: 0,
    method: 'GET',
    path: '/x',
    status,
    ...(error ? { error } : {}),
    dueAt,
    sentAt: dueAt,
    doneAt,
    requestHeaders: {},
  };
}

function asDelta(workerId: number, seq: number, r: MetricRecorder): FleetDelta {
  return {
    workerId,
    seq,
    final: false,
    atMs: 0,
    intervalMs: 1000,
    ...r.takeDelta(),
    lifecycle: { ...r.lifecycle },
    onboardedEver: 0,
    started: 0,
    shardSize: 0,
    queueBacklog: {},
    undelivered: {},
    loop: { p50Ms: 0, p99Ms: 0, maxMs: 0, utilisation: 0 },
    pendingTimers: 0,
  };
}

/** Exact percentile as HDR defines it: the smallest value with at least p% of values at or below. */
function exactPercentile(sorted: number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

describe('MetricRecorder + FleetAggregate', () => {
  it('merged deltas of two workers give the percentiles of all values together', () => {
    const w1 = new MetricRecorder();
    const w2 = new MetricRecorder();
    const all: number[] = [];
    let x = 7;
    const aggregate = new FleetAggregate();
    // Three 1 s intervals from each worker; worker 2 is slower.
    for (let interval = 0; interval < 3; interval++) {
      for (let i = 0; i < 2000; i++) {
        x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
        const ms1 = 1 + (x % 200); // 1..200 ms
        const ms2 = 100 + (x % 5000); // 100 ms .. 5.1 s
        w1.onOutcome(outcome('config', 200, 1000, 1000 + ms1));
        w2.onOutcome(outcome('config', 200, 5000, 5000 + ms2));
        all.push(ms1, ms2);
      }
      aggregate.merge(asDelta(1, interval, w1));
      aggregate.merge(asDelta(2, interval, w2));
    }
    all.sort((a, b) => a - b);
    const config = aggregate.series.get('config|2xx')!;
    expect(config.count).toBe(12_000);
    for (const p of [50, 90, 99, 99.9]) {
      const exact = exactPercentile(all, p);
      const got = percentileMs(config.hist, p);
      // 3 significant digits: within 0.1% of the exact value.
      expect(Math.abs(got - exact) / exact).toBeLessThan(0.001);
    }
    const max = all[all.length - 1]!;
    expect(Math.abs(percentileMs(config.hist, 100) - max) / max).toBeLessThan(0.001);
    expect(config.sumMs).toBeCloseTo(
      all.reduce((a, b) => a + b, 0),
      3,
    );
    // A delta resets the interval: nothing left to send.
    expect(w1.takeDelta().series).toEqual([]);
  });

  it('latency counts from dueAt, not from when the request was sent', () => {
    const r = new MetricRecorder();
    r.onOutcome({ ...outcome('info', 200, 1000, 3000), sentAt: 2990 });
    const agg = new FleetAggregate();
    agg.merge(asDelta(0, 0, r));
    expect(percentileMs(agg.series.get('info|2xx')!.hist, 50)).toBeCloseTo(2000, -1);
  });

  it('counts by endpoint and status, errors by status or transport code, findings by kind', () => {
    const r = new MetricRecorder({ maxFindingSamples: 1 });
    r.onOutcome(outcome('config', 200, 0, 5));
    r.onOutcome(outcome('config', 304, 0, 5));
    r.onOutcome(outcome('config', 503, 0, 5));
    r.onOutcome(outcome('info', 0, 0, 5, 'ECONNREFUSED'));
    r.onOutcome(outcome('info', 404, 0, 5));
    r.onFinding({ deviceIndex: 3, endpoint: 'config', kind: 'bad-signature', detail: 'x' });
    r.onFinding({ deviceIndex: 4, endpoint: 'config', kind: 'bad-signature', detail: 'y' });
    r.onFinding({ deviceIndex: 4, endpoint: 'certs', kind: 'bad-certs', detail: 'z' });
    const d = r.takeDelta();
    const req = Object.fromEntries(d.requests.map((c) => [`${c.endpoint}|${c.status}`, c.count]));
    expect(req).toEqual({ 'config|200': 1, 'config|304': 1, 'config|503': 1, 'info|ECONNREFUSED': 1, 'info|404': 1 });
    const err = Object.fromEntries(d.errors.map((c) => [`${c.endpoint}|${c.status}`, c.count]));
    expect(err).toEqual({ 'config|503': 1, 'info|ECONNREFUSED': 1, 'info|404': 1 });
    expect(d.series.map((s) => `${s.endpoint}|${s.statusClass}|${s.count}`).sort()).toEqual([
      'config|2xx|1',
      'config|3xx|1',
      'config|5xx|1',
      'info|4xx|1',
      'info|err|1',
    ]);
    expect(Object.fromEntries(d.findings.map((f) => [f.kind, f.count]))).toEqual({ 'bad-signature': 2, 'bad-certs': 1 });
    expect(d.findingSamples).toHaveLength(1);
    expect(r.totals).toMatchObject({ requests: 5, errors: 3, findings: 3 });
  });

  it('tracks devices by lifecycle through state changes', () => {
    const r = new MetricRecorder();
    r.lifecycle.idle = 3;
    r.onStateChange('idle', 'fetching-certs');
    r.onStateChange('fetching-certs', 'registering');
    r.onStateChange('idle', 'fetching-certs');
    expect(r.lifecycle).toEqual({ ...emptyLifecycleCounts(), idle: 1, 'fetching-certs': 1, registering: 1 });
  });
});
