// Prometheus /metrics on <host>:<port> (127.0.0.1 unless --metrics-host), fed by the merged worker deltas (FleetAggregate).
//
// The request-duration histogram is filled from the HDR deltas, not by observing each request:
// every non-empty HDR bucket of a delta adds its count to the first Prometheus bucket whose bound
// covers it. prom-client's Histogram can only observe one value at a time, so this one metric is a
// small class the prom-client Registry renders like its own; counters and gauges are prom-client's.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Registry } from 'prom-client';
import type { FleetDelta } from '../fleet/fleet-delta.js';
import { forEachBucket, type SparseHistogram } from '../fleet/latency-histogram.js';
import type { FleetAggregate, SeriesTotals } from './aggregate.js';

/** Bucket bounds in seconds: 1 ms .. 60 s. */
export const DURATION_BUCKETS_S = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60,
] as const;
const BUCKET_BOUNDS_US = DURATION_BUCKETS_S.map((s) => Math.round(s * 1e6));

interface BucketSeries {
  labels: { api: string; endpoint: string; status: string };
  /** Per-bucket (non-cumulative) counts; the last slot is +Inf. */
  counts: Float64Array;
  sumS: number;
  count: number;
}

/** A histogram metric whose buckets are filled from HDR deltas, rendered by prom-client's Registry. */
class HdrFedHistogram {
  readonly name = 'evesim_request_duration_seconds';
  readonly help = 'Request latency from the time the request was due (open model), by API (v1, v2, lps), endpoint and status class';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, BucketSeries>();

  /** `api`: the interface of the delta's series (controller v1/v2, or lps); the totals `s` span all. */
  add(s: SeriesTotals, api: string, hist: SparseHistogram, deltaCount: number, deltaSumMs: number): void {
    const key = `${api}|${s.endpoint}|${s.statusClass}`;
    let b = this.series.get(key);
    if (!b) {
      b = {
        labels: { api, endpoint: s.endpoint, status: s.statusClass },
        counts: new Float64Array(BUCKET_BOUNDS_US.length + 1),
        sumS: 0,
        count: 0,
      };
      this.series.set(key, b);
    }
    const counts = b.counts;
    forEachBucket(hist, s.hist, (valueUs, count) => {
      let i = 0;
      while (i < BUCKET_BOUNDS_US.length && valueUs > BUCKET_BOUNDS_US[i]!) i++;
      counts[i]! += count;
    });
    b.count += deltaCount;
    b.sumS += deltaSumMs / 1000;
  }

  async get(): Promise<{
    name: string;
    help: string;
    type: 'histogram';
    aggregator: 'sum';
    values: { labels: Record<string, string | number>; value: number; metricName: string }[];
  }> {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const b of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i < BUCKET_BOUNDS_US.length; i++) {
        cumulative += b.counts[i]!;
        values.push({ labels: { ...b.labels, le: DURATION_BUCKETS_S[i]! }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      cumulative += b.counts[BUCKET_BOUNDS_US.length]!;
      values.push({ labels: { ...b.labels, le: '+Inf' }, value: cumulative, metricName: `${this.name}_bucket` });
      values.push({ labels: b.labels, value: b.sumS, metricName: `${this.name}_sum` });
      values.push({ labels: b.labels, value: b.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values };
  }

  reset(): void {
    this.series.clear();
  }
}

export interface MetricsServer {
  readonly registry: Registry;
  /** Bound port (useful when 0 was asked for). */
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** Builds the registry over an aggregate (no HTTP). Exposed for tests and for embedding. */
export function buildMetricsRegistry(agg: FleetAggregate): Registry {
  const registry = new Registry();
  const duration = new HdrFedHistogram();
  registry.registerMetric(duration as unknown as Parameters<Registry['registerMetric']>[0]);

  const requests = new Counter({
    name: 'evesim_requests_total',
    help: 'Requests by API (v1, v2, lps), endpoint and HTTP status (or transport error code when no answer came)',
    labelNames: ['api', 'endpoint', 'status'],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'evesim_request_errors_total',
    help: 'Requests that failed (no HTTP answer, or a status other than 2xx and 304), by API, endpoint and status or error code',
    labelNames: ['api', 'endpoint', 'status'],
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
  new Gauge({
    name: 'evesim_worker_event_loop_lag_seconds',
    help: "p99 event-loop lag of each load-generator worker over its last 1 s interval (the generator's own health)",
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

  const undeliveredSeen = new Map<number, Record<string, number>>();
  agg.onDelta((d: FleetDelta, merged) => {
    // merged[i] is d.series[i] added to the all-API totals; the label comes from the delta.
    merged.forEach((m, i) => duration.add(m.series, d.series[i]?.api ?? 'v2', m.hist, m.count, m.sumMs));
    for (const c of d.requests) requests.inc({ api: c.api ?? 'v2', endpoint: c.endpoint, status: c.status }, c.count);
    for (const c of d.errors) errors.inc({ api: c.api ?? 'v2', endpoint: c.endpoint, status: c.status }, c.count);
    for (const f of d.findings) findings.inc({ kind: f.kind }, f.count);
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
export async function startMetricsServer(agg: FleetAggregate, port: number, host = '127.0.0.1'): Promise<MetricsServer> {
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--metrics-port: ${port} is not a TCP port (0..65535)`);
  }
  const registry = buildMetricsRegistry(agg);
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
