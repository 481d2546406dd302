// Findings keep their first examples per kind (device, serial, endpoint, request id, status,
// detail) from the worker's recorder through the aggregate to the summary, the merge of shards and
// the report's one line per kind.

import { describe, expect, it } from 'vitest';
import type { DeviceFinding } from '../src/device/device-options.js';
import { MetricRecorder } from '../src/fleet/metric-recorder.js';
import { emptyLifecycleCounts, type FleetDelta } from '../src/fleet/fleet-delta.js';
import { FleetAggregate } from '../src/runner/aggregate.js';
import { FindingExamples, mergeFindingExamples, toFindingExample } from '../src/runner/finding-examples.js';
import { findingKindLines } from '../src/runner/finding-report.js';

function finding(deviceIndex: number, kind: DeviceFinding['kind'], detail: string, extra: Partial<DeviceFinding> = {}): DeviceFinding {
  return { deviceIndex, endpoint: kind === 'bad-certs' ? 'certs' : 'config', kind, detail, ...extra };
}

function delta(r: MetricRecorder): FleetDelta {
  return {
    workerId: 0,
    seq: 0,
    final: false,
    atMs: 0,
    intervalMs: 1000,
    ...r.takeDelta(),
    lifecycle: emptyLifecycleCounts(),
    onboardedEver: 0,
    started: 0,
    shardSize: 0,
    queueBacklog: {},
    undelivered: {},
    loop: { p50Ms: 0, p99Ms: 0, maxMs: 0, utilisation: 0 },
    pendingTimers: 0,
  };
}

describe('finding examples', () => {
  it('the recorder keeps the first few of every kind, so a flood of one kind does not hide another', () => {
    const r = new MetricRecorder({ maxFindingSamples: 50, examplesPerKind: 3 });
    for (let i = 0; i < 40; i++) r.onFinding(finding(i, 'bad-signature', `sig ${i}`));
    r.onFinding(finding(41, 'bad-certs', 'chain: does not chain to the given root', { serial: 'SN41' }));
    r.onFinding(finding(42, 'undecodable-body', 'truncated', { status: 200, requestId: 'r-42' }));
    r.onDeviceError(7, 'stop', new Error('bug'));
    const d = r.takeDelta();
    expect(d.findingSamples.filter((f) => f.kind === 'bad-signature').map((f) => f.detail)).toEqual(['sig 0', 'sig 1', 'sig 2']);
    expect(d.findingSamples.find((f) => f.kind === 'bad-certs')).toEqual(finding(41, 'bad-certs', 'chain: does not chain to the given root', { serial: 'SN41' }));
    expect(d.findingSamples.find((f) => f.kind === 'undecodable-body')).toMatchObject({ status: 200, requestId: 'r-42' });
    expect(d.findingSamples.find((f) => f.simulatorError)).toMatchObject({ deviceIndex: 7, detail: 'simulator error: Error: bug' });
    // Counts stay whole; the budget lasts the run, not the interval.
    expect(Object.fromEntries(d.findings.map((f) => [f.kind, f.count]))).toEqual({ 'bad-signature': 40, 'bad-certs': 1, 'undecodable-body': 1 });
    r.onFinding(finding(50, 'bad-signature', 'sig later'));
    expect(r.takeDelta().findingSamples).toEqual([]);
  });

  it('the aggregate puts them in the summary per kind, without simulator errors', () => {
    const r = new MetricRecorder();
    r.onFinding(finding(3, 'bad-certs', 'chain: x', { serial: 'S3' }));
    r.onFinding(finding(4, 'bad-certs', 'chain: y'));
    r.onFinding(finding(5, 'conformance', 'uuid changed'));
    r.onDeviceError(1, 'stop', new Error('bug'));
    const agg = new FleetAggregate();
    agg.merge(delta(r));
    expect(agg.findingExamples.toJson()).toEqual({
      'bad-certs': [
        { device: 3, serial: 'S3', endpoint: 'certs', detail: 'chain: x' },
        { device: 4, endpoint: 'certs', detail: 'chain: y' },
      ],
      conformance: [{ device: 5, endpoint: 'config', detail: 'uuid changed' }],
    });
  });

  it('keeps at most the limit per kind over several workers, and merges shards in order', () => {
    const ex = new FindingExamples(2);
    for (let i = 0; i < 5; i++) ex.add(finding(i, 'bad-envelope', `e${i}`));
    expect(ex.toJson()['bad-envelope']!.map((e) => e.device)).toEqual([0, 1]);
    const a = { 'bad-envelope': [0, 1, 2].map((i) => toFindingExample(finding(i, 'bad-envelope', `a${i}`))) };
    const b = {
      'bad-envelope': [3, 4, 5].map((i) => toFindingExample(finding(i, 'bad-envelope', `b${i}`))),
      'bad-certs': [toFindingExample(finding(9, 'bad-certs', 'b9'))],
    };
    const merged = mergeFindingExamples([a, undefined, b]);
    expect(Object.keys(merged)).toEqual(['bad-certs', 'bad-envelope']);
    expect(merged['bad-envelope']!.map((e) => e.detail)).toEqual(['a0', 'a1', 'a2', 'b3', 'b4']);
  });

  it('the report has one line per kind with the first example', () => {
    const lines = findingKindLines({
      findings: {
        total: 33,
        byKind: { 'bad-certs': 30, 'undocumented-status': 3 },
        examples: {
          'bad-certs': [{ device: 4, serial: 'SN4', endpoint: 'certs', detail: 'chain: certs[0] (SIGNING): does not chain to the given root (CN=root)' }],
          'undocumented-status': [{ device: 2, endpoint: 'config', status: 404, requestId: 'abc', detail: 'controller-api-v2 lists no 404 for config' }],
        },
      },
    });
    expect(lines).toEqual([
      '  bad-certs            ×30, e.g. device 4 (serial SN4) certs: chain: certs[0] (SIGNING): does not chain to the given root (CN=root)',
      '  undocumented-status  ×3, e.g. device 2 config (HTTP 404, request abc): controller-api-v2 lists no 404 for config',
    ]);
    // A summary of an older version has counts only: no example lines.
    expect(findingKindLines({ findings: { total: 2, byKind: { 'bad-signature': 2 } } })).toEqual([]);
  });
});
