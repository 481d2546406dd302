// The drain's request figures on the main thread, apart from the run's (FleetDelta.drain): per
// endpoint and over all, the same shape the aggregate keeps for the run, so the summary builds its
// `drain.endpoints` / `drain.overall` with the run's own code (phase-endpoint-tables.ts). Live
// consumers (Prometheus, the time series, the progress view) still see every request: foldDrain()
// gives them the delta with the drain's requests put back among the run's.

import type { FleetDelta } from '../fleet/fleet-delta.js';
import { addSparse, newLatencyHistogram, type LatencyHistogram } from '../fleet/latency-histogram.js';
import type { PhaseDelta } from '../fleet/fleet-delta.js';
import type { RequestEndpointKey as EndpointKey } from '../device/ports.js';
import type { EndpointTotals } from './endpoint-totals.js';

export class DrainFigures {
  readonly endpoints = new Map<EndpointKey, EndpointTotals>();
  /** All endpoints and classes together. */
  readonly all: LatencyHistogram = newLatencyHistogram();
  /** `${endpoint}|${status}` → count. */
  readonly requests = new Map<string, number>();
  totalRequests = 0;
  totalErrors = 0;

  merge(p: PhaseDelta): void {
    for (const s of p.series) {
      const e = this.endpoint(s.endpoint);
      e.count += s.count;
      e.sumMs += s.sumMs;
      addSparse(e.hist, s.hist);
      addSparse(this.all, s.hist);
    }
    for (const c of p.requests) {
      const key = `${c.endpoint}|${c.status}`;
      this.requests.set(key, (this.requests.get(key) ?? 0) + c.count);
      this.totalRequests += c.count;
    }
    for (const c of p.errors) {
      this.endpoint(c.endpoint).errors += c.count;
      this.totalErrors += c.count;
    }
    for (const c of p.expected) this.endpoint(c.endpoint).expected += c.count;
  }

  private endpoint(endpoint: EndpointKey): EndpointTotals {
    let e = this.endpoints.get(endpoint);
    if (!e) this.endpoints.set(endpoint, (e = { endpoint, count: 0, errors: 0, expected: 0, sumMs: 0, hist: newLatencyHistogram() }));
    return e;
  }
}

/** The delta with its drain's requests among the run's (for consumers that count every request). */
export function foldDrain(d: FleetDelta): FleetDelta {
  const p = d.drain;
  if (!p) return d;
  return {
    ...d,
    series: [...d.series, ...p.series],
    requests: [...d.requests, ...p.requests],
    errors: [...d.errors, ...p.errors],
    expected: [...(d.expected ?? []), ...p.expected],
  };
}
