// Prometheus /metrics on <host>:<port> (127.0.0.1 unless --metrics-host), fed by the merged worker
// deltas (FleetAggregate). Every request metric carries the same labels the same way: api (v1, v2,
// lps), endpoint, code (exact HTTP status, or the transport error's name) and class (2xx .. 5xx,
// transport) — see prometheus/request-class.ts. Counters exist at 0 from the start for the label
// sets the scenario implies (prometheus/zero-label-sets.ts, prometheus/implied-endpoints.ts).
//
// Metric names (README "Prometheus"; deploy/grafana/evesim-dashboard.json reads them):
//   evesim_request_duration_seconds{api,endpoint,code,class}   histogram (HDR-fed, open model)
//   evesim_requests_total{api,endpoint,code,class}             counter
//   evesim_request_errors_total{api,endpoint,code,class}       counter (not 2xx/304, not expected)
//   evesim_findings_total{kind}                                counter
//   evesim_undelivered_total{kind}                             counter
//   evesim_devices{state}, evesim_devices_onboarded{api}, evesim_queue_backlog{kind}   gauges
//   evesim_worker_event_loop_lag_seconds{worker}               histogram of per-second p99 lag
//   evesim_worker_event_loop_lag_p99_seconds{worker}           gauge, the latest second's p99
//   evesim_worker_busy_ratio{worker}                           gauge
//   evesim_faults_active{fault}                                gauge (contract: prometheus/faults-active.ts)
//   evesim_device_connects_total{api,handshake}, evesim_device_connect_failures_total{api},
//   evesim_device_connections_dropped_total{api,cause}         counters (prometheus/own-connection-metrics.ts)
//   evesim_run_info{scenario,seed,version,fleet_id,shard}      gauge, always 1
// plus what the run's capabilities register (evesim_lps_*, evesim_controller_attest_*).

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { FleetDelta } from '../fleet/fleet-delta.js';
import type { FleetAggregate } from './aggregate.js';
import { registerFaultsActive, type FaultsActiveReader } from './prometheus/faults-active.js';
import { registerOwnConnectionMetrics } from './prometheus/own-connection-metrics.js';
import type { ImpliedEndpoint } from './prometheus/implied-endpoints.js';
import { evesimVersion } from './evesim-version.js';
import { requestClassOf } from './prometheus/request-class.js';
import { RequestDurationHistogram, type RequestLabels } from './prometheus/request-duration-histogram.js';
import { FINDING_KINDS, RELIABLE_KINDS, ZERO_ERRORS, ZERO_SUCCESS } from './prometheus/zero-label-sets.js';

export { DURATION_BUCKETS_S } from './prometheus/request-duration-histogram.js';

/** Bounds of the loop-lag histogram, seconds: 1 ms (a healthy loop) .. 5 s (a stalled one). */
const LOOP_LAG_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** What the run tells the registry about itself (absent: no run info, nothing created at 0 but the kinds). */
export interface MetricsRunInfo {
  scenario: string;
  seed: number;
  fleetId: string;
  /** 'i/n' (0/1 without --shard). */
  shard: string;
  /** Endpoints whose counters start at 0. */
  endpoints: readonly ImpliedEndpoint[];
  /** Devices under each fault kind now (the evesim_faults_active contract); default none. */
  faultsActive?: FaultsActiveReader;
  /** Default: package.json's. */
  version?: string;
}

export interface MetricsServer {
  readonly registry: Registry;
  /** Bound port (useful when 0 was asked for). */
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** Builds the registry over an aggregate (no HTTP). Exposed for tests and for embedding. */
export function buildMetricsRegistry(agg: FleetAggregate, run?: MetricsRunInfo): Registry {
  const registry = new Registry();
  const duration = new RequestDurationHistogram(registry);
  const labelNames = ['api', 'endpoint', 'code', 'class'] as const;
  const requests = new Counter({
    name: 'evesim_requests_total',
    help: 'Requests by API (v1, v2, lps), endpoint, code (HTTP status or transport error) and class (2xx .. 5xx, transport)',
    labelNames,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'evesim_request_errors_total',
    help: 'Requests that failed (no HTTP answer, or a status other than 2xx and 304 the device did not expect), by API, endpoint, code and class',
    labelNames,
    registers: [registry],
  });
  const findings = new Counter({
    name: 'evesim_findings_total',
    help: 'Problems devices found in controller answers (bad signatures, undecodable bodies, conformance), by kind',
    labelNames: ['kind'],
    registers: [registry],
  });
  const undelivered = new Counter({
    name: 'evesim_undelivered_total',
    help: 'Reliable messages (info, logs, flowlog) devices gave up on, by kind',
    labelNames: ['kind'],
    registers: [registry],
  });
  new Gauge({
    name: 'evesim_devices',
    help: 'Devices by lifecycle state',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      for (const [state, n] of Object.entries(agg.lifecycle())) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'evesim_devices_onboarded',
    help: 'Devices that have reached onboarded at least once, by the controller API of their group (v1, v2)',
    labelNames: ['api'],
    registers: [registry],
    collect() {
      for (const api of ['v1', 'v2'] as const) this.set({ api }, agg.byApi.onboardedEver(api));
    },
  });
  new Gauge({
    name: 'evesim_queue_backlog',
    help: 'Reliable messages waiting to be delivered, by kind',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      for (const [kind, n] of Object.entries(agg.queueBacklog())) this.set({ kind }, n);
    },
  });
  // Workers measure their loop with perf_hooks.monitorEventLoopDelay and send its p50/p99/max per
  // interval, not every sample: the histogram holds one observation per worker per delta (about
  // one a second), that second's p99. Its quantiles say how often a second was that bad.
  const loopLag = new Histogram({
    name: 'evesim_worker_event_loop_lag_seconds',
    help: "Event-loop lag of each load-generator worker (the generator's own health): one observation per worker per ~1 s interval, that interval's p99",
    labelNames: ['worker'],
    buckets: LOOP_LAG_BUCKETS_S,
    registers: [registry],
  });
  new Gauge({
    name: 'evesim_worker_event_loop_lag_p99_seconds',
    help: 'p99 event-loop lag of each load-generator worker over its latest ~1 s interval',
    labelNames: ['worker'],
    registers: [registry],
    collect() {
      for (const w of agg.workers.values()) this.set({ worker: String(w.workerId) }, w.loop.p99Ms / 1000);
    },
  });
  new Gauge({
    name: 'evesim_worker_busy_ratio',
    help: 'Share of its last 1 s interval each worker thread was busy (event-loop utilisation, its CPU use)',
    labelNames: ['worker'],
    registers: [registry],
    collect() {
      for (const w of agg.workers.values()) this.set({ worker: String(w.workerId) }, w.loop.utilisation);
    },
  });
  registerFaultsActive(registry, run?.faultsActive);
  registerOwnConnectionMetrics(registry, agg);
  if (run) {
    new Gauge({
      name: 'evesim_run_info',
      help: 'The run this process is (always 1): scenario name, seed, evesim version, fleet id and shard (i/n)',
      labelNames: ['scenario', 'seed', 'version', 'fleet_id', 'shard'],
      registers: [registry],
    }).set({ scenario: run.scenario, seed: String(run.seed), version: run.version ?? evesimVersion(), fleet_id: run.fleetId, shard: run.shard }, 1);
  }

  // At 0 from the start (zero-label-sets.ts).
  for (const kind of FINDING_KINDS) findings.inc({ kind }, 0);
  for (const kind of RELIABLE_KINDS) undelivered.inc({ kind }, 0);
  for (const { api, endpoint } of run?.endpoints ?? []) {
    const ok: RequestLabels = { api, endpoint, ...ZERO_SUCCESS };
    requests.inc(ok, 0);
    duration.zero(ok);
    for (const e of ZERO_ERRORS) errors.inc({ api, endpoint, ...e }, 0);
  }

  const undeliveredSeen = new Map<number, Record<string, number>>();
  agg.onDelta((d: FleetDelta, merged) => {
    // merged[i] is d.series[i] added to the totals: its histogram maps the delta's bucket indices.
    merged.forEach((m, i) => {
      const s = d.series[i]!;
      // Older senders have no code on a series: their class is all there is to say.
      const code = s.code ?? (s.statusClass === 'err' ? 'error' : s.statusClass);
      duration.add({ api: s.api ?? 'v2', endpoint: s.endpoint, code, class: requestClassOf(code) }, m.hist, m.series.hist);
    });
    for (const c of d.requests) requests.inc({ api: c.api ?? 'v2', endpoint: c.endpoint, code: c.status, class: requestClassOf(c.status) }, c.count);
    for (const c of d.errors) errors.inc({ api: c.api ?? 'v2', endpoint: c.endpoint, code: c.status, class: requestClassOf(c.status) }, c.count);
    for (const f of d.findings) findings.inc({ kind: f.kind }, f.count);
    loopLag.observe({ worker: String(d.workerId) }, d.loop.p99Ms / 1000);
    // Workers report undelivered as running totals: count what is new since their last delta.
    const seen = undeliveredSeen.get(d.workerId) ?? {};
    for (const [kind, n] of Object.entries(d.undelivered)) {
      const inc = n - (seen[kind] ?? 0);
      if (inc > 0) undelivered.inc({ kind }, inc);
      seen[kind] = n;
    }
    undeliveredSeen.set(d.workerId, seen);
  });
  return registry;
}

/** Serves the registry on host:port/metrics; loopback unless asked (--metrics-host 0.0.0.0 in a pod). */
export async function startMetricsServer(agg: FleetAggregate, port: number, host = '127.0.0.1', run?: MetricsRunInfo): Promise<MetricsServer> {
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--metrics-port: ${port} is not a TCP port (0..65535)`);
  }
  const registry = buildMetricsRegistry(agg, run);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('evesim serves only GET /metrics\n');
      return;
    }
    registry
      .metrics()
      .then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text))
      .catch((err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${String(err)}\n`));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`--metrics-port ${port}: cannot listen on ${host}:${port} (${err.code ?? err.message})`)),
    );
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    registry,
    port: bound,
    url: `http://${host}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
