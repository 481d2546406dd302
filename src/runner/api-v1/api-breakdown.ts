// Request figures per interface: controller API v1, controller API v2, and 'lps' for local profile
// server requests. Workers label every series and count with the API of the request
// (api-version.ts); this keeps, next to the fleet-wide totals of FleetAggregate, the same totals per
// label, and onboarded devices by the API of their group. The summary's `byApi` section, the
// `{api:v1}` thresholds and the report's per-API table are built from here.
//
// Chosen over renaming endpoints (`v1:config`): endpoint keys stay what they are everywhere (the
// v2-era `endpoints` section, thresholds such as `config.p99`, record files), and the API is a
// label beside them, as it is in Prometheus (`api="v1"`).

import type { FleetDelta } from '../../fleet/fleet-delta.js';
import { addSparse, newLatencyHistogram, type LatencyHistogram } from '../../fleet/latency-histogram.js';
import { emptyEndpointStats, endpointStats, type EndpointStats } from '../endpoint-stats.js';
import type { ApiLabel, ApiVersion } from '../../protocol/api-version.js';
import { API_LABELS } from '../../protocol/api-version.js';

interface LaneTotals {
  count: number;
  errors: number;
  expected: number;
  hist: LatencyHistogram;
}

class ApiTotals {
  readonly endpoints = new Map<string, LaneTotals>();
  readonly all: LatencyHistogram = newLatencyHistogram();
  /** `${endpoint}|${status}` → count. */
  readonly requests = new Map<string, number>();

  lane(endpoint: string): LaneTotals {
    let t = this.endpoints.get(endpoint);
    if (!t) this.endpoints.set(endpoint, (t = { count: 0, errors: 0, expected: 0, hist: newLatencyHistogram() }));
    return t;
  }
}

/** One API's part of the summary. */
export interface ApiSummary {
  /** Devices of groups with this API (absent for 'lps', whose requests come from devices of any group). */
  devices?: { total: number; onboarded: number };
  /** Keyed by endpoint, like RunSummary.endpoints. */
  endpoints: Record<string, EndpointStats>;
  /** All requests of this API; percentiles from its merged histogram. */
  overall: EndpointStats;
}

export type ApiSummaries = Partial<Record<ApiLabel, ApiSummary>>;

export class ApiBreakdown {
  readonly apis = new Map<ApiLabel, ApiTotals>();
  /** Latest onboardedEverByApi of each worker (a running count, not a delta). */
  private readonly onboarded = new Map<number, Partial<Record<ApiVersion, number>>>();

  merge(d: FleetDelta): void {
    for (const s of d.series) {
      const t = this.of(s.api ?? 'v2');
      const lane = t.lane(s.endpoint);
      lane.count += s.count;
      addSparse(lane.hist, s.hist);
      addSparse(t.all, s.hist);
    }
    for (const c of d.requests) {
      const t = this.of(c.api ?? 'v2');
      const key = `${c.endpoint}|${c.status}`;
      t.requests.set(key, (t.requests.get(key) ?? 0) + c.count);
    }
    for (const c of d.errors) this.of(c.api ?? 'v2').lane(c.endpoint).errors += c.count;
    for (const c of d.expected ?? []) this.of(c.api ?? 'v2').lane(c.endpoint).expected += c.count;
    if (d.onboardedEverByApi) this.onboarded.set(d.workerId, d.onboardedEverByApi);
  }

  onboardedEver(api: ApiVersion): number {
    let n = 0;
    for (const w of this.onboarded.values()) n += w[api] ?? 0;
    return n;
  }

  /** The summary section: one entry per API that had requests or devices. */
  summarize(seconds: number, devicesByApi: Partial<Record<ApiVersion, number>>): ApiSummaries {
    const out: ApiSummaries = {};
    for (const api of API_LABELS) {
      const t = this.apis.get(api);
      const total = api === 'lps' ? undefined : devicesByApi[api];
      if (!t && !total) continue;
      const byEndpoint = new Map<string, { byStatus: Record<string, number>; byError: Record<string, number> }>();
      const overallStatus: Record<string, number> = {};
      const overallError: Record<string, number> = {};
      for (const [key, count] of t?.requests ?? []) {
        const bar = key.indexOf('|');
        const endpoint = key.slice(0, bar);
        const status = key.slice(bar + 1);
        let e = byEndpoint.get(endpoint);
        if (!e) byEndpoint.set(endpoint, (e = { byStatus: {}, byError: {} }));
        const http = /^\d+$/.test(status);
        (http ? e.byStatus : e.byError)[status] = ((http ? e.byStatus : e.byError)[status] ?? 0) + count;
        const overall = http ? overallStatus : overallError;
        overall[status] = (overall[status] ?? 0) + count;
      }
      const endpoints: Record<string, EndpointStats> = {};
      const sum = { count: 0, errors: 0, expected: 0 };
      for (const [endpoint, lane] of t?.endpoints ?? []) {
        const by = byEndpoint.get(endpoint) ?? { byStatus: {}, byError: {} };
        endpoints[endpoint] = endpointStats(lane.hist, lane, seconds, by.byStatus, by.byError);
        sum.count += lane.count;
        sum.errors += lane.errors;
        sum.expected += lane.expected;
      }
      const entry: ApiSummary = {
        endpoints,
        overall: t ? endpointStats(t.all, sum, seconds, overallStatus, overallError) : emptyEndpointStats(),
      };
      if (api !== 'lps') entry.devices = { total: total ?? 0, onboarded: this.onboardedEver(api) };
      out[api] = entry;
    }
    return out;
  }

  private of(api: ApiLabel): ApiTotals {
    let t = this.apis.get(api);
    if (!t) this.apis.set(api, (t = new ApiTotals()));
    return t;
  }
}

/** Devices per API of a scenario's groups (after --devices scaling). */
export function devicesByApi(groups: readonly { api: ApiVersion; count: number }[]): Partial<Record<ApiVersion, number>> {
  const out: Partial<Record<ApiVersion, number>> = {};
  for (const g of groups) out[g.api] = (out[g.api] ?? 0) + g.count;
  return out;
}

