// The per-endpoint and overall tables of one phase (the run, or its drain) from its merged
// figures: counts by status and by transport error, latency percentiles, rate over `seconds`.

import type { LatencyHistogram } from '../fleet/latency-histogram.js';
import type { EndpointTotals } from './endpoint-totals.js';
import { endpointStats, type EndpointStats } from './endpoint-stats.js';

export interface PhaseFigures {
  readonly endpoints: ReadonlyMap<string, EndpointTotals>;
  readonly all: LatencyHistogram;
  /** `${endpoint}|${status}` → count. */
  readonly requests: ReadonlyMap<string, number>;
}

export function phaseEndpointTables(f: PhaseFigures, seconds: number): { endpoints: Record<string, EndpointStats>; overall: EndpointStats } {
  const byEndpoint = new Map<string, { byStatus: Record<string, number>; byError: Record<string, number> }>();
  const overallStatus: Record<string, number> = {};
  const overallError: Record<string, number> = {};
  for (const [key, count] of f.requests) {
    const bar = key.indexOf('|');
    const endpoint = key.slice(0, bar);
    const status = key.slice(bar + 1);
    let e = byEndpoint.get(endpoint);
    if (!e) byEndpoint.set(endpoint, (e = { byStatus: {}, byError: {} }));
    const isHttp = /^\d+$/.test(status);
    const into = isHttp ? e.byStatus : e.byError;
    into[status] = (into[status] ?? 0) + count;
    const overall = isHttp ? overallStatus : overallError;
    overall[status] = (overall[status] ?? 0) + count;
  }
  const endpoints: Record<string, EndpointStats> = {};
  const total = { count: 0, errors: 0, expected: 0 };
  for (const e of f.endpoints.values()) {
    const by = byEndpoint.get(e.endpoint) ?? { byStatus: {}, byError: {} };
    endpoints[e.endpoint] = endpointStats(e.hist, e, seconds, by.byStatus, by.byError);
    total.count += e.count;
    total.errors += e.errors;
    total.expected += e.expected;
  }
  return { endpoints, overall: endpointStats(f.all, total, seconds, overallStatus, overallError) };
}
