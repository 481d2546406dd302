// Expected rejections: the config 403 a device gets before attestation (EVE polls config at once,
// in parallel with attesting) is stated by the device, carried through the transport and counted
// apart from errors all the way to the report.

import { describe, expect, it } from 'vitest';
import type { FleetDelta } from '../src/fleet/fleet-delta.js';
import { MetricRecorder } from '../src/fleet/metric-recorder.js';
import type { TransportRequest } from '../src/device/ports.js';
import { FleetAggregate } from '../src/runner/aggregate.js';
import { buildMeasuredRun } from '../src/runner/build-summary.js';
import { renderReport } from '../src/runner/report-table.js';
import { evaluateThresholds } from '../src/runner/thresholds.js';
import { parseThreshold } from '../src/scenario/parse-threshold.js';
import { TimedTransport } from '../src/transport/timed-transport.js';
import type { RequestOutcome } from '../src/transport/request-observer.js';
import { onboard, rig } from './device-harness.js';

describe('device: which config answers it expects', () => {
  it('marks config polls before the first accepted quote as expecting 403, and later ones not', async () => {
    const r = rig();
    // Answers take a while, so the first config poll goes out while attestation is under way (as on a real network).
    r.controller.latencyMs = 50;
    await onboard(r);
    const configs = r.controller.of('config');
    expect(configs.length).toBeGreaterThanOrEqual(2);
    const first = configs[0]!;
    expect(first.expect).toEqual({ statuses: [403], reason: 'before-attestation' });
    // The first one was indeed refused for want of a token; the device attested and got its config.
    const attestAt = r.controller.of('attest').at(-1)!.at;
    expect(first.at).toBeLessThan(attestAt);
    expect(r.device.configHash).toBe(r.controller.configHash);

    // Once a quote was accepted, a 403 is the controller refusing the token: an error, not expected.
    r.controller.hook = (req: TransportRequest) => (req.endpoint === 'config' ? { status: 403, headers: {}, body: new Uint8Array(0) } : undefined);
    const before = r.controller.of('config').length;
    await r.time.advance(120_000);
    const later = r.controller.of('config').slice(before);
    expect(later.length).toBeGreaterThan(0);
    for (const req of later) expect(req.expect).toBeUndefined();
  });
});

describe('TimedTransport: expected only when the status is among the stated ones', () => {
  it('sets outcome.expected for a stated status and leaves it unset otherwise', async () => {
    const outcomes: RequestOutcome[] = [];
    let status = 403;
    const inner = { request: async () => ({ status, headers: {}, body: new Uint8Array(0) }) };
    const tt = new TimedTransport(inner, { now: () => 1000 }, [{ onOutcome: (o) => outcomes.push(o) }]);
    const req: TransportRequest = {
      endpoint: 'config',
      method: 'POST',
      path: '/c',
      headers: {},
      dueAt: 900,
      deviceIndex: 3,
      expect: { statuses: [403], reason: 'before-attestation' },
    };
    await tt.request(req);
    status = 500;
    await tt.request(req);
    status = 403;
    const { expect: _drop, ...plain } = req;
    await tt.request(plain);
    expect(outcomes.map((o) => o.expected)).toEqual(['before-attestation', undefined, undefined]);
  });
});

function delta(r: MetricRecorder): FleetDelta {
  return {
    workerId: 0,
    seq: 0,
    final: true,
    atMs: 0,
    intervalMs: 1000,
    ...r.takeDelta(),
    lifecycle: { idle: 0, 'fetching-certs': 0, registering: 0, uuid: 0, attesting: 0, onboarded: 6, stopped: 0 },
    onboardedEver: 6,
    started: 6,
    shardSize: 6,
    queueBacklog: {},
    undelivered: {},
    loop: { p50Ms: 0, p99Ms: 0, maxMs: 0, utilisation: 0 },
    pendingTimers: 0,
  };
}

function out(status: number, ms: number, expected?: 'before-attestation'): RequestOutcome {
  return {
    endpoint: 'config',
    deviceIndex: 0,
    method: 'POST',
    path: '/',
    status,
    ...(expected ? { expected } : {}),
    dueAt: 0,
    sentAt: 0,
    doneAt: ms,
    requestHeaders: {},
  };
}

describe('recorder, aggregate, summary and report', () => {
  it('count expected rejections per endpoint and status, apart from errors, with latencies included', () => {
    const rec = new MetricRecorder();
    for (let i = 0; i < 6; i++) rec.onOutcome(out(403, 1000, 'before-attestation')); // slow, to show in max
    for (let i = 0; i < 10; i++) rec.onOutcome(out(200, 10));
    rec.onOutcome(out(403, 20)); // a 403 after attestation: an error
    expect(rec.totals).toMatchObject({ requests: 17, errors: 1, expected: 6 });
    const agg = new FleetAggregate();
    agg.merge(delta(rec));
    const run = buildMeasuredRun({
      scenario: { name: 's', file: 's.yaml', seed: 1 },
      target: 'embedded',
      startedAtMs: Date.UTC(2026, 0, 1),
      durationMs: 10_000,
      totalDevices: 6,
      aggregate: agg,
      undelivered: {},
      generator: { workers: [], mainEventLoopLagP99Ms: 0, cpuPercent: 1 },
    });
    const config = run.endpoints.config!;
    expect(config).toMatchObject({ count: 17, errors: 1, expected: 6, byStatus: { '200': 10, '403': 7 } });
    expect(config.max_ms).toBeCloseTo(1000, 0); // the expected answers' latency is in the histogram
    expect(run.overall).toMatchObject({ count: 17, errors: 1, expected: 6 });
    expect(run.expected).toEqual({ total: 6, rejections: [{ endpoint: 'config', status: '403', reason: 'before-attestation', count: 6 }] });

    const results = evaluateThresholds(['errors.count == 1', 'expected.count == 6', 'expected.count < 6'].map(parseThreshold), run);
    expect(results.map((t) => t.passed)).toEqual([true, true, false]);

    const text = renderReport({ ...run, thresholds: results, exitCode: 1 });
    expect(text).toContain('expected rejections: config 403 ×6 — before attestation, as EVE does');
    // The failure list shows only the unexpected 403.
    expect(text).toMatch(/failed requests:\n {2}config: HTTP 403 ×1\n/);
  });
});
