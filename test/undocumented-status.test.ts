// A status the interface document does not list for an endpoint (404 on config) is a finding of
// its own, 'undocumented-status', with an example naming the device, the request id and the
// status; a status the document foresees (403 on config) is only an error. The table
// (src/protocol/documented-statuses.ts) follows docs/interfaces.md for API v2, v1 and the LPS.

import { describe, expect, it } from 'vitest';
import { isDocumentedStatus, listedStatuses, undocumentedStatusDetail } from '../src/protocol/documented-statuses.js';
import { MetricRecorder } from '../src/fleet/metric-recorder.js';
import { FleetAggregate } from '../src/runner/aggregate.js';
import { emptyLifecycleCounts } from '../src/fleet/fleet-delta.js';
import { onboard, rig } from './device-harness.js';

describe('the documented statuses', () => {
  it.each([
    // [api, endpoint, status, documented]
    ['v2', 'config', 200, true],
    ['v2', 'config', 403, true], // integrity token mismatch
    ['v2', 'config', 400, true], // unknown device
    ['v2', 'config', 304, true], // accepted: Adam's "unchanged", success to EVE
    ['v2', 'config', 404, false],
    ['v2', 'config', 500, false],
    ['v2', 'certs', 404, true], // no certificates to send
    ['v2', 'certs', 429, true], // the rate limit the document foresees without naming it
    ['v2', 'register', 409, true],
    ['v2', 'register', 500, false],
    ['v2', 'info', 201, true],
    ['v2', 'info', 503, true], // unavailable, on every endpoint
    ['v2', 'info', 404, false],
    ['v2', 'uuid', 422, false],
    ['v1', 'config', 403, true], // no access, on every endpoint
    ['v1', 'config', 503, false], // v1 does not list "unavailable"
    ['v1', 'certs', 404, true],
    ['v1', 'newlogs', 500, true], // not in the v1 document: not judged
    ['lps', 'lps.radio', 204, true],
    ['lps', 'lps.location', 204, false],
    ['lps', 'lps.devinfo', 404, true], // not implemented, or throttled
    ['lps', 'lps.appinfo', 500, false],
    ['lps', 'lps.network', 500, true], // EVE's own addition, not in the document: not judged
  ] as const)('%s %s %i documented: %s', (api, endpoint, status, documented) => {
    expect(isDocumentedStatus(api, endpoint, status)).toBe(documented);
  });

  it('says in the detail what the document lists instead', () => {
    expect(listedStatuses('v2', 'config')).toEqual([200, 400, 401, 403, 503]);
    expect(listedStatuses('v1', 'uuid')).toBeUndefined();
    expect(undocumentedStatusDetail('v2', 'config', 404, 'POST', '/api/v2/edgedevice/id/u/config')).toBe(
      'POST /api/v2/edgedevice/id/u/config answered 404, a status controller-api-v2 does not list for config (it lists 200, 400, 401, 403, 503; also accepted: 304)',
    );
  });
});

describe('a device meeting an undocumented status', () => {
  /** The findings a device reported, through a worker's recorder and the fleet aggregate, as the summary shows them. */
  function examplesOf(findings: Parameters<MetricRecorder['onFinding']>[0][]) {
    const rec = new MetricRecorder();
    for (const f of findings) rec.onFinding(f);
    const agg = new FleetAggregate();
    agg.merge({
      workerId: 0, seq: 0, final: true, atMs: 0, intervalMs: 0, ...rec.takeDelta(),
      lifecycle: emptyLifecycleCounts(), onboardedEver: 0, started: 0, shardSize: 0, queueBacklog: {}, undelivered: {},
      loop: { p50Ms: 0, p99Ms: 0, maxMs: 0, utilisation: 0 }, pendingTimers: 0,
    });
    return { byKind: Object.fromEntries(agg.findings), examples: agg.findingExamples.toJson() };
  }

  it('404 on config is an undocumented-status finding with an example: device, request id, status, detail', async () => {
    const r = rig();
    await onboard(r);
    const before = r.findings.length;
    const requestIds: string[] = [];
    r.controller.hook = (q) => {
      if (q.endpoint !== 'config') return undefined;
      requestIds.push(q.headers['X-Request-Id']!);
      return { status: 404, headers: {}, body: new Uint8Array(0) };
    };
    await r.time.advance(120_000);
    const found = r.findings.slice(before).filter((f) => f.kind === 'undocumented-status');
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBe(requestIds.length);
    const { byKind, examples } = examplesOf(found);
    expect(byKind).toEqual({ 'undocumented-status': found.length });
    expect(examples['undocumented-status']![0]).toEqual({
      device: r.device.opts.index,
      endpoint: 'config',
      requestId: requestIds[0],
      status: 404,
      detail: expect.stringMatching(/^POST \/api\/v2\/edgedevice\/id\/[0-9a-f-]+\/config answered 404, a status controller-api-v2 does not list for config/),
    });
  });

  it('a documented 403 on config is no finding', async () => {
    const r = rig();
    await onboard(r);
    const before = r.findings.length;
    let answered = 0;
    r.controller.hook = (q) => (q.endpoint === 'config' ? (answered++, { status: 403, headers: {}, body: new Uint8Array(0) }) : undefined);
    await r.time.advance(120_000);
    expect(answered).toBeGreaterThan(0);
    expect(r.findings.slice(before)).toEqual([]);
  });
});
