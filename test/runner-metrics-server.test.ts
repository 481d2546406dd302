import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { MetricRecorder } from '../src/fleet/metric-recorder.js';
import type { FleetDelta } from '../src/fleet/fleet-delta.js';
import { FleetAggregate } from '../src/runner/aggregate.js';
import { startMetricsServer, type MetricsServer } from '../src/runner/metrics-server.js';
import type { EndpointKey } from '../src/protocol/endpoints.js';
import { impliedEndpoints } from '../src/runner/prometheus/implied-endpoints.js';
import { evesimVersion } from '../src/runner/evesim-version.js';
import { readFile } from 'node:fs/promises';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A strict parser of the Prometheus text format (0.0.4): throws on any line it does not understand. */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const sampleRe = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9.e+-]+|\+Inf|-Inf|NaN)$/;
  const labelRe = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) continue;
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      expect(['counter', 'gauge', 'histogram', 'summary', 'untyped']).toContain(type);
      types.set(name!, type!);
      continue;
    }
    const m = sampleRe.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    if (m[3]) {
      const rest = m[3].replace(labelRe, (_all, k: string, v: string) => {
        labels[k] = v;
        return '';
      });
      if (rest.replace(/,/g, '') !== '') throw new Error(`bad labels in ${JSON.stringify(line)}`);
    }
    samples.push({ name: m[1]!, labels, value: Number(m[4]) });
  }
  return { samples, types };
}

function delta(workerId: number, r: MetricRecorder, undelivered: Record<string, number>, p99: number): FleetDelta {
  return {
    workerId,
    seq: 0,
    final: false,
    atMs: 0,
    intervalMs: 1000,
    ...r.takeDelta(),
    lifecycle: { idle: 1, 'fetching-certs': 0, registering: 0, uuid: 0, attesting: 0, onboarded: 4, stopped: 0 },
    onboardedEver: 4,
    started: 5,
    shardSize: 5,
    queueBacklog: { info: 2, logs: 1 },
    undelivered,
    loop: { p50Ms: 1, p99Ms: p99, maxMs: p99 * 2, utilisation: 0.25 },
    pendingTimers: 10,
  };
}

function out(endpoint: EndpointKey, status: number, ms: number, error?: string) {
  return {
    endpoint,
    deviceIndex: 0,
    method: 'GET' as const,
    path: '/',
    status,
    ...(error ? { error } : {}),
    dueAt: 0,
    sentAt: 0,
    doneAt: ms,
    requestHeaders: {},
  };
}

let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('metrics server', () => {
  it('serves Prometheus text with the expected series on 127.0.0.1', async () => {
    const agg = new FleetAggregate();
    server = await startMetricsServer(agg, 0);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);

    const r1 = new MetricRecorder();
    const r2 = new MetricRecorder();
    // config: 0.5 ms, 3 ms, 40 ms, 2 s, 90 s (beyond the last bound)
    for (const ms of [0.5, 3, 40, 2000, 90_000]) r1.onOutcome(out('config', 200, ms));
    r2.onOutcome(out('config', 200, 3));
    r2.onOutcome(out('info', 503, 12));
    r2.onOutcome(out('info', 0, 10_000, 'ECONNREFUSED'));
    r2.onFinding({ deviceIndex: 1, endpoint: 'config', kind: 'bad-signature', detail: 'd' });
    agg.merge(delta(1, r1, { info: 2 }, 12));
    agg.merge(delta(2, r2, { info: 1, logs: 3 }, 150));
    // A later delta of worker 1 with a grown running total: only the growth is counted.
    agg.merge(delta(1, r1, { info: 5 }, 8));

    const res = await request(server.url);
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-type'])).toContain('text/plain');
    const { samples, types } = parseExposition(await res.body.text());
    const get = (name: string, labels: Record<string, string>) =>
      samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

    expect(types.get('evesim_request_duration_seconds')).toBe('histogram');
    expect(types.get('evesim_requests_total')).toBe('counter');
    expect(types.get('evesim_request_errors_total')).toBe('counter');
    expect(types.get('evesim_devices')).toBe('gauge');
    expect(types.get('evesim_queue_backlog')).toBe('gauge');
    expect(types.get('evesim_worker_event_loop_lag_seconds')).toBe('histogram');
    expect(types.get('evesim_worker_event_loop_lag_p99_seconds')).toBe('gauge');
    expect(types.get('evesim_findings_total')).toBe('counter');
    expect(types.get('evesim_undelivered_total')).toBe('counter');

    const cfg = { endpoint: 'config', code: '200', class: '2xx' };
    expect(get('evesim_request_duration_seconds_bucket', { ...cfg, le: '0.001' })).toBe(1);
    expect(get('evesim_request_duration_seconds_bucket', { ...cfg, le: '0.005' })).toBe(3);
    expect(get('evesim_request_duration_seconds_bucket', { ...cfg, le: '0.05' })).toBe(4);
    expect(get('evesim_request_duration_seconds_bucket', { ...cfg, le: '2.5' })).toBe(5);
    expect(get('evesim_request_duration_seconds_bucket', { ...cfg, le: '60' })).toBe(5);
    expect(get('evesim_request_duration_seconds_bucket', { ...cfg, le: '+Inf' })).toBe(6);
    expect(get('evesim_request_duration_seconds_count', cfg)).toBe(6);
    // The sum of the HDR bucket values: within 0.1 % of the exact 92.0465 s, never below it.
    const sum = get('evesim_request_duration_seconds_sum', cfg)!;
    expect(sum).toBeGreaterThanOrEqual(92.0465);
    expect(sum).toBeLessThan(92.0465 * 1.001);
    // Buckets never decrease.
    const buckets = samples.filter((s) => s.name === 'evesim_request_duration_seconds_bucket' && s.labels.endpoint === 'config');
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
    // The histogram carries the exact code and its class, as the counters do.
    expect(get('evesim_request_duration_seconds_count', { endpoint: 'info', code: 'ECONNREFUSED', class: 'transport' })).toBe(1);
    expect(get('evesim_request_duration_seconds_count', { endpoint: 'info', code: '503', class: '5xx' })).toBe(1);
    for (const s of samples.filter((x) => x.name.startsWith('evesim_request'))) {
      expect(s.labels.status).toBeUndefined();
      expect(s.labels.class).toBe(/^\d{3}$/.test(s.labels.code!) ? `${s.labels.code![0]}xx` : 'transport');
    }

    expect(get('evesim_requests_total', { endpoint: 'config', code: '200', class: '2xx' })).toBe(6);
    expect(get('evesim_requests_total', { endpoint: 'info', code: 'ECONNREFUSED', class: 'transport' })).toBe(1);
    expect(get('evesim_request_errors_total', { endpoint: 'info', code: '503', class: '5xx' })).toBe(1);
    expect(get('evesim_request_errors_total', { endpoint: 'config', code: '200' })).toBeUndefined();
    expect(get('evesim_devices', { state: 'onboarded' })).toBe(8);
    expect(get('evesim_devices', { state: 'idle' })).toBe(2);
    expect(get('evesim_queue_backlog', { kind: 'info' })).toBe(4);
    expect(get('evesim_worker_event_loop_lag_p99_seconds', { worker: '1' })).toBeCloseTo(0.008);
    expect(get('evesim_worker_event_loop_lag_p99_seconds', { worker: '2' })).toBeCloseTo(0.15);
    // One observation per delta, its p99: worker 1 saw 12 ms then 8 ms, worker 2 150 ms.
    expect(get('evesim_worker_event_loop_lag_seconds_count', { worker: '1' })).toBe(2);
    expect(get('evesim_worker_event_loop_lag_seconds_bucket', { worker: '1', le: '0.01' })).toBe(1);
    expect(get('evesim_worker_event_loop_lag_seconds_bucket', { worker: '1', le: '0.025' })).toBe(2);
    expect(get('evesim_worker_event_loop_lag_seconds_bucket', { worker: '2', le: '0.1' })).toBe(0);
    expect(get('evesim_worker_event_loop_lag_seconds_bucket', { worker: '2', le: '0.25' })).toBe(1);
    expect(get('evesim_findings_total', { kind: 'bad-signature' })).toBe(1);
    // Kinds nothing was counted for are there at 0.
    expect(get('evesim_findings_total', { kind: 'conformance' })).toBe(0);
    expect(get('evesim_undelivered_total', { kind: 'flowlog' })).toBe(0);
    expect(get('evesim_faults_active', { fault: 'partition' })).toBe(0);
    expect(get('evesim_undelivered_total', { kind: 'info' })).toBe(6); // worker 1: 5, worker 2: 1
    expect(get('evesim_undelivered_total', { kind: 'logs' })).toBe(3);

    const notFound = await request(server.url.replace('/metrics', '/other'));
    expect(notFound.statusCode).toBe(404);
    await notFound.body.dump();
  });

  it('names the run and creates the counters the scenario implies at 0, before any request', async () => {
    const agg = new FleetAggregate();
    const group = { api: 'v2' as const, preRegistered: true, logFormat: 'newlogs' as const, logLinesPerSec: 1, flowlogIntervalMs: 0, apps: [] };
    server = await startMetricsServer(agg, 0, '127.0.0.1', {
      scenario: 'smoke',
      seed: 7,
      fleetId: 'f1',
      shard: '1/2',
      version: '9.9.9',
      endpoints: impliedEndpoints([group, { ...group, api: 'v1', preRegistered: false, logLinesPerSec: 0 }]),
      faultsActive: () => ({ partition: 3, 'new-kind': 1 }),
    });
    const res = await request(server.url);
    const { samples } = parseExposition(await res.body.text());
    const get = (name: string, labels: Record<string, string>) =>
      samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    expect(get('evesim_run_info', { scenario: 'smoke', seed: '7', version: '9.9.9', fleet_id: 'f1', shard: '1/2' })).toBe(1);
    const ok = { code: '200', class: '2xx' };
    expect(get('evesim_requests_total', { api: 'v2', endpoint: 'config', ...ok })).toBe(0);
    expect(get('evesim_requests_total', { api: 'v2', endpoint: 'newlogs', ...ok })).toBe(0);
    expect(get('evesim_requests_total', { api: 'v2', endpoint: 'register' })).toBeUndefined(); // pre-registered
    expect(get('evesim_requests_total', { api: 'v1', endpoint: 'register', ...ok })).toBe(0);
    expect(get('evesim_requests_total', { api: 'v1', endpoint: 'uuid' })).toBeUndefined(); // v1 has none
    expect(get('evesim_requests_total', { api: 'v1', endpoint: 'newlogs' })).toBeUndefined(); // v1 group logs nothing
    expect(get('evesim_request_duration_seconds_count', { api: 'v2', endpoint: 'config', ...ok })).toBe(0);
    expect(get('evesim_request_duration_seconds_bucket', { api: 'v2', endpoint: 'config', ...ok, le: '+Inf' })).toBe(0);
    expect(get('evesim_request_errors_total', { api: 'v2', endpoint: 'info', code: 'timeout', class: 'transport' })).toBe(0);
    expect(get('evesim_request_errors_total', { api: 'v1', endpoint: 'config', code: '500', class: '5xx' })).toBe(0);
    expect(get('evesim_faults_active', { fault: 'partition' })).toBe(3);
    expect(get('evesim_faults_active', { fault: 'latency' })).toBe(0);
    expect(get('evesim_faults_active', { fault: 'new-kind' })).toBe(1);
  });

  it('reads its version from package.json', async () => {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(evesimVersion()).toBe(pkg.version);
  });

  it('names the port when it cannot listen', async () => {
    const agg = new FleetAggregate();
    server = await startMetricsServer(agg, 0);
    await expect(startMetricsServer(agg, server.port)).rejects.toThrow(/--metrics-port \d+: cannot listen.*EADDRINUSE/);
  });

  it('listens on the address it is given (--metrics-host 0.0.0.0 in a pod), reachable from loopback too', async () => {
    const agg = new FleetAggregate();
    server = await startMetricsServer(agg, 0, '0.0.0.0');
    expect(server.url).toBe(`http://0.0.0.0:${server.port}/metrics`);
    const res = await request(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain('evesim_requests_total');
  });
});
