// Hand-made FleetDeltas for the series tests: requests of given latencies to endpoints, errors,
// findings and gauges, at a given instant, without a worker.

import { emptyLifecycleCounts, type FleetDelta } from '../../src/fleet/fleet-delta.js';
import { newLatencyHistogram, recordLatencyMs, toSparse } from '../../src/fleet/latency-histogram.js';
import type { EndpointKey } from '../../src/protocol/endpoints.js';

export interface SyntheticDelta {
  workerId?: number;
  atMs: number;
  intervalMs?: number;
  /** Latencies (ms) of the requests finished, by endpoint. */
  latencies?: Partial<Record<EndpointKey, number[]>>;
  errors?: Partial<Record<EndpointKey, number>>;
  findings?: Record<string, number>;
  onboarded?: number;
  queued?: Record<string, number>;
  loop?: FleetDelta['loop'];
  final?: boolean;
}

export function syntheticDelta(s: SyntheticDelta): FleetDelta {
  const series = Object.entries(s.latencies ?? {}).map(([endpoint, ms]) => {
    const h = newLatencyHistogram();
    for (const v of ms!) recordLatencyMs(h, v);
    return { endpoint: endpoint as EndpointKey, statusClass: '2xx' as const, count: ms!.length, sumMs: ms!.reduce((a, b) => a + b, 0), hist: toSparse(h) };
  });
  return {
    workerId: s.workerId ?? 0,
    seq: 0,
    final: s.final ?? false,
    atMs: s.atMs,
    intervalMs: s.intervalMs ?? 1000,
    series,
    requests: series.map((x) => ({ endpoint: x.endpoint, status: '200', count: x.count })),
    errors: Object.entries(s.errors ?? {}).map(([endpoint, count]) => ({ endpoint: endpoint as EndpointKey, status: '503', count: count! })),
    findings: Object.entries(s.findings ?? {}).map(([kind, count]) => ({ kind: kind as FleetDelta['findings'][number]['kind'], count })),
    findingSamples: [],
    deviceErrors: 0,
    lifecycle: { ...emptyLifecycleCounts(), onboarded: s.onboarded ?? 0 },
    onboardedEver: s.onboarded ?? 0,
    started: s.onboarded ?? 0,
    shardSize: s.onboarded ?? 0,
    queueBacklog: s.queued ?? {},
    undelivered: {},
    loop: s.loop ?? { p50Ms: 1, p99Ms: 2, maxMs: 3, utilisation: 0.5 },
    pendingTimers: 0,
  };
}

/** 1, 2, …, n. */
export function oneTo(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}
