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

function out(endpoint: EndpointKey, status: number, ms: number, error?: string) {
  return { endpoint, deviceIndex: 0, method: 'GET' as const, path: '/', status, ...(error ? { error } : {}), dueAt: 0, sentAt: 0, doneAt: ms, requestHeaders: {} };
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
});
