import { describe, expect, it } from 'vitest';
import { MetricRecorder } from '../src/fleet/metric-recorder.js';
import type { FleetDelta } from '../src/fleet/fleet-delta.js';
import { FleetAggregate } from '../src/runner/aggregate.js';
import { buildMeasuredRun } from '../src/runner/build-summary.js';
import { evaluateThresholds } from '../src/runner/thresholds.js';
import { parseThreshold } from '../src/scenario/parse-threshold.js';
import type { EndpointKey } from '../src/protocol/endpoints.js';

function delta(workerId: number, r: MetricRecorder, onboardedEver: number): FleetDelta {
  return {
    workerId,
    seq: 0,
    final: true,
    atMs: 0,
    intervalMs: 1000,
    ...r.takeDelta(),
    lifecycle: { idle: 0, 'fetching-certs': 0, registering: 0, uuid: 0, attesting: 0, onboarded: 0, stopped: 5 },
    onboardedEver,
    started: 5,
    shardSize: 5,
    queueBacklog: {},
    undelivered: {},
    loop: { p50Ms: 0, p99Ms: 0, maxMs: 0, utilisation: 0 },
    pendingTimers: 0,
  };
}

function out(endpoint: EndpointKey, status: number, ms: number, error?: string, dueAt = 0) {
  return { endpoint, deviceIndex: 0, method: 'GET' as const, path: '/', status, ...(error ? { error } : {}), dueAt, sentAt: dueAt, doneAt: dueAt + ms, requestHeaders: {} };
}

describe('buildMeasuredRun', () => {
  it('gives per-endpoint and overall stats from merged histograms, statuses and transport errors apart', () => {
    const agg = new FleetAggregate();
    const a = new MetricRecorder();
    const b = new MetricRecorder();
    for (let i = 1; i <= 100; i++) a.onOutcome(out('config', 200, i)); // 1..100 ms
    a.onOutcome(out('config', 304, 5));
    b.onOutcome(out('config', 503, 1000));
    b.onOutcome(out('info', 0, 120_000, 'timeout'));
    b.onFinding({ deviceIndex: 1, endpoint: 'config', kind: 'undecodable-body', detail: 'x' });
    agg.merge(delta(0, a, 5));
    agg.merge(delta(1, b, 3));
    const run = buildMeasuredRun({
      scenario: { name: 's', file: 's.yaml', seed: 3 },
      target: 'embedded',
      startedAtMs: Date.UTC(2026, 0, 1),
      durationMs: 10_000,
      totalDevices: 10,
      aggregate: agg,
      undelivered: { info: 1, logs: 2 },
      generator: { workers: [], mainEventLoopLagP99Ms: 0, cpuPercent: 0 },
    });
    const config = run.endpoints.config!;
    expect(config.count).toBe(102);
    expect(config.errors).toBe(1); // 503 only: 304 is a success
    expect(config.rate).toBeCloseTo(10.2);
    expect(config.byStatus).toEqual({ '200': 100, '304': 1, '503': 1 });
    expect(config.byError).toEqual({});
    expect(config.p50_ms).toBeCloseTo(50, 0);
    expect(config.max_ms).toBeCloseTo(1000, -1);
    expect(run.endpoints.info!.byError).toEqual({ timeout: 1 });
    expect(run.endpoints.info!.byStatus).toEqual({});
    expect(run.overall.count).toBe(103);
    expect(run.overall.errors).toBe(2);
    expect(run.overall.max_ms).toBeCloseTo(120_000, -3);
    expect(run.overall.byStatus['200']).toBe(100);
    expect(run.devices).toEqual({ total: 10, onboarded: 8, byLifecycle: { stopped: 10 } });
    expect(run.undelivered).toEqual({ info: 1, logs: 2, flowlog: 0, total: 3 });
    expect(run.findings).toEqual({
      total: 1,
      byKind: { 'undecodable-body': 1 },
      examples: { 'undecodable-body': [{ device: 1, endpoint: 'config', detail: 'x' }] },
    });
    expect(run.startedAt).toBe('2026-01-01T00:00:00.000Z');

    // The summary is what thresholds are judged on.
    const results = evaluateThresholds(
      ['config.p99 < 200ms', 'config.max < 200ms', 'errors.count == 0', 'onboarded.ratio >= 0.8'].map((t) => parseThreshold(t)),
      run,
    );
    expect(results.map((r) => r.passed)).toEqual([true, false, false, true]);
  });

  it('keeps the drain\'s requests apart: run figures without them, drain figures of them alone, every request seen by the listeners', () => {
    const agg = new FleetAggregate();
    const seen: number[] = [];
    agg.onDelta((d) => seen.push(d.requests.reduce((n, c) => n + c.count, 0)));
    const w = new MetricRecorder();
    for (let i = 1; i <= 10; i++) w.onOutcome(out('newlogs', 201, 10)); // the run's: 10 ms
    const endAt = 10_000;
    w.startDrain(endAt);
    // Due before the end, answered during the drain: still the run's.
    w.onOutcome(out('info', 200, 20, undefined, endAt - 5));
    // Due during the drain: the drain's (slow: 4 s), one refused.
    for (let i = 0; i < 5; i++) w.onOutcome(out('newlogs', 201, 4_000, undefined, endAt + 100 * i));
    w.onOutcome(out('newlogs', 503, 4_000, undefined, endAt + 900));
    const d = delta(0, w, 5);
    expect(d.drain).toBeDefined();
    agg.merge(d);
    expect(seen).toEqual([17]);
    expect(agg.totalRequests).toBe(17);
    const run = buildMeasuredRun({
      scenario: { name: 's', file: 's.yaml', seed: 3 },
      target: 'embedded',
      startedAtMs: 0,
      durationMs: endAt,
      totalDevices: 5,
      aggregate: agg,
      undelivered: {},
      generator: { workers: [], mainEventLoopLagP99Ms: 0, cpuPercent: 0 },
      drain: { gracefulStopMs: 15_000, durationMs: 5_000, complete: true, leftAtStop: {} },
    });
    expect(run.endpoints.newlogs!.count).toBe(10);
    expect(run.endpoints.newlogs!.max_ms).toBeCloseTo(10, 0);
    expect(run.endpoints.newlogs!.rate).toBeCloseTo(1);
    expect(run.endpoints.info!.count).toBe(1);
    expect(run.overall.count).toBe(11);
    expect(run.overall.errors).toBe(0);
    const drain = run.drain!;
    expect(drain.endpoints!.newlogs!.count).toBe(6);
    expect(drain.endpoints!.newlogs!.errors).toBe(1);
    expect(drain.endpoints!.newlogs!.byStatus).toEqual({ '201': 5, '503': 1 });
    expect(drain.endpoints!.newlogs!.p50_ms).toBeCloseTo(4_000, -1);
    expect(drain.endpoints!.newlogs!.rate).toBeCloseTo(6 / 5);
    expect(drain.endpoints!.info).toBeUndefined();
    expect(drain.overall!.count).toBe(6);
    // Run + drain = every request.
    expect(run.overall.count + drain.overall!.count).toBe(agg.totalRequests);
    // Thresholds judge the run without its drain; drain.* judge the drain alone.
    const results = evaluateThresholds(
      ['newlogs.p99 < 100ms', 'errors.count == 0', 'newlogs.count == 10', 'drain.newlogs.p99 < 100ms', 'drain.newlogs.count == 6', 'drain.all.count == 6', 'drain.config.p99 < 1s'].map((t) =>
        parseThreshold(t),
      ),
      run,
    );
    expect(results.map((r) => `${r.passed ? 'ok' : 'FAIL'} ${r.source}`)).toEqual([
      'ok newlogs.p99 < 100ms',
      'ok errors.count == 0',
      'ok newlogs.count == 10',
      'FAIL drain.newlogs.p99 < 100ms',
      'ok drain.newlogs.count == 6',
      'ok drain.all.count == 6',
      'FAIL drain.config.p99 < 1s',
    ]);
    expect(results[6]!.detail).toMatch(/no requests to config/);
  });
});
