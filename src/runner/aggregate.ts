// Main-thread sum of every worker's deltas: cumulative HDR histograms per endpoint and status
// class (and per endpoint over all classes), request/error/finding counters, and the latest gauges
// of each worker. The metrics server, the progress view and the run summary all read from here.

import { sumOwnConnections, type OwnConnections } from '../transport/own-connection-figures.js';
import type { DeviceFinding, DeviceLifecycle } from '../device/device-options.js';
import { emptyLifecycleCounts, LIFECYCLES, type CountDelta, type FleetDelta, type SeriesDelta, type StatusClass } from '../fleet/fleet-delta.js';
import { addSparse, newLatencyHistogram, type LatencyHistogram, type SparseHistogram } from '../fleet/latency-histogram.js';
// Requests are keyed by controller and local profile server endpoints alike ('config', 'lps.radio').
import type { RequestEndpointKey as EndpointKey } from '../device/ports.js';
import { ApiBreakdown } from './api-v1/api-breakdown.js';
import { FindingExamples } from './finding-examples.js';
import { DrainFigures, foldDrain } from './drain-figures.js';
import type { EndpointTotals } from './endpoint-totals.js';
import { OnboardingTimes } from '../fleet/onboarding-times.js';

export interface SeriesTotals {
  endpoint: EndpointKey;
  statusClass: StatusClass;
  count: number;
  sumMs: number;
  hist: LatencyHistogram;
}

export type { EndpointTotals } from './endpoint-totals.js';

/** The latest gauges of a worker (as its last delta gave them), and its loop figures over the run. */
export interface WorkerGauges
  extends Pick<
    FleetDelta,
    'workerId' | 'lifecycle' | 'onboardedEver' | 'health' | 'started' | 'shardSize' | 'queueBacklog' | 'undelivered' | 'droppedByQuota' | 'loop' | 'pendingTimers' | 'ownConnections'
  > {
  /** Worst interval p99 / max event-loop lag and mean busy share over the run. */
  worstLoopP99Ms: number;
  worstLoopMaxMs: number;
  utilisationSum: number;
  samples: number;
  lastAtMs: number;
  final: boolean;
}

/** A listener sees each merged delta (e.g. the metrics server). */
export interface MergedSeries {
  /** Cumulative totals after the merge. */
  series: SeriesTotals;
  /** What this delta added. */
  hist: SparseHistogram;
  count: number;
  sumMs: number;
}
export type DeltaListener = (delta: FleetDelta, merged: MergedSeries[]) => void;

export class FleetAggregate {
  readonly series = new Map<string, SeriesTotals>();
  readonly endpoints = new Map<EndpointKey, EndpointTotals>();
  /** All endpoints and classes together. */
  readonly all: LatencyHistogram = newLatencyHistogram();
  /** `${endpoint}|${status}` → count. */
  readonly requests = new Map<string, number>();
  readonly errors = new Map<string, number>();
  /** `${endpoint}|${status}|${reason}` → expected rejections. */
  readonly expected = new Map<string, number>();
  readonly findings = new Map<DeviceFinding['kind'], number>();
  readonly findingSamples: DeviceFinding[] = [];
  /** The first few findings of each kind (finding-examples.ts). */
  readonly findingExamples = new FindingExamples();
  readonly workers = new Map<number, WorkerGauges>();
  /** The same request figures per API (v1, v2, lps) and onboarded devices per API. */
  readonly byApi = new ApiBreakdown();
  /** The drain's requests (FleetDelta.drain); everything above except `series` and the two
   *  totals below is the run's alone. */
  readonly drain = new DrainFigures();
  /** How long devices took to onboard (onboarding-times.ts). */
  readonly onboarding = new OnboardingTimes();
  /** Every request and error, the drain's included (the progress view's rate). */
  totalRequests = 0;
  totalErrors = 0;
  totalExpected = 0;
  totalFindings = 0;
  deviceErrors = 0;
  deltas = 0;
  /** Recent histograms of the watched endpoints for live views; takeRecent() empties them. */
  private readonly recent = new Map<EndpointKey, LatencyHistogram>();
  private readonly listeners: DeltaListener[] = [];

  constructor(
    private readonly maxFindingSamples = 200,
    recentEndpoints: readonly EndpointKey[] = ['config'],
  ) {
    for (const e of recentEndpoints) this.recent.set(e, newLatencyHistogram());
  }

  onDelta(listener: DeltaListener): void {
    this.listeners.push(listener);
  }

  merge(d: FleetDelta): void {
    this.deltas++;
    this.byApi.merge(d);
    this.onboarding.merge(d.onboarding);
    const merged: MergedSeries[] = [];
    for (const s of d.series) {
      const m = this.addToSeries(s);
      const e = this.endpoint(s.endpoint);
      e.count += s.count;
      e.sumMs += s.sumMs;
      addSparse(e.hist, s.hist);
      addSparse(this.all, s.hist);
      const r = this.recent.get(s.endpoint);
      if (r) addSparse(r, s.hist);
      merged.push(m);
    }
    for (const c of d.requests) {
      const key = `${c.endpoint}|${c.status}`;
      this.requests.set(key, (this.requests.get(key) ?? 0) + c.count);
      this.totalRequests += c.count;
    }
    for (const c of d.errors) {
      const key = `${c.endpoint}|${c.status}`;
      this.errors.set(key, (this.errors.get(key) ?? 0) + c.count);
      this.endpoint(c.endpoint).errors += c.count;
      this.totalErrors += c.count;
    }
    for (const c of d.expected ?? []) {
      const key = `${c.endpoint}|${c.status}|${c.reason}`;
      this.expected.set(key, (this.expected.get(key) ?? 0) + c.count);
      this.endpoint(c.endpoint).expected += c.count;
      this.totalExpected += c.count;
    }
    for (const f of d.findings) {
      this.findings.set(f.kind, (this.findings.get(f.kind) ?? 0) + f.count);
      this.totalFindings += f.count;
    }
    for (const s of d.findingSamples) {
      if (this.findingSamples.length < this.maxFindingSamples) this.findingSamples.push(s);
      this.findingExamples.add(s);
    }
    this.deviceErrors += d.deviceErrors;
    if (d.drain) {
      this.drain.merge(d.drain);
      this.totalRequests += sumCounts(d.drain.requests);
      this.totalErrors += sumCounts(d.drain.errors);
      // The per-class totals (and the listeners' `merged`) cover every request, the drain's too.
      for (const s of d.drain.series) merged.push(this.addToSeries(s));
    }

    const prev = this.workers.get(d.workerId);
    this.workers.set(d.workerId, {
      workerId: d.workerId,
      lifecycle: d.lifecycle,
      onboardedEver: d.onboardedEver,
      ...(d.health ? { health: d.health } : {}),
      started: d.started,
      shardSize: d.shardSize,
      queueBacklog: d.queueBacklog,
      undelivered: d.undelivered,
      ...(d.droppedByQuota ? { droppedByQuota: d.droppedByQuota } : {}),
      ...(d.ownConnections ? { ownConnections: d.ownConnections } : {}),
      loop: d.loop,
      pendingTimers: d.pendingTimers,
      worstLoopP99Ms: Math.max(prev?.worstLoopP99Ms ?? 0, d.loop.p99Ms),
      worstLoopMaxMs: Math.max(prev?.worstLoopMaxMs ?? 0, d.loop.maxMs),
      utilisationSum: (prev?.utilisationSum ?? 0) + d.loop.utilisation,
      samples: (prev?.samples ?? 0) + 1,
      lastAtMs: d.atMs,
      final: d.final,
    });
    const all = foldDrain(d);
    for (const l of this.listeners) l(all, merged);
  }

  /** Devices by lifecycle over all workers. */
  lifecycle(): Record<DeviceLifecycle, number> {
    const out = emptyLifecycleCounts();
    for (const w of this.workers.values()) for (const k of LIFECYCLES) out[k] += w.lifecycle[k];
    return out;
  }

  /** Connections of the devices that hold their own, over all workers, as their latest deltas gave them (undefined: none). */
  ownConnections(): OwnConnections | undefined {
    return sumOwnConnections([...this.workers.values()].map((w) => w.ownConnections));
  }

  /** Devices whose last controller request succeeded / failed, over all workers (undefined: no worker says). */
  health(): { healthy: number; failing: number } | undefined {
    let out: { healthy: number; failing: number } | undefined;
    for (const w of this.workers.values()) {
      if (!w.health) continue;
      out ??= { healthy: 0, failing: 0 };
      out.healthy += w.health.healthy;
      out.failing += w.health.failing;
    }
    return out;
  }

  onboardedEver(): number {
    let n = 0;
    for (const w of this.workers.values()) n += w.onboardedEver;
    return n;
  }

  started(): number {
    let n = 0;
    for (const w of this.workers.values()) n += w.started;
    return n;
  }

  queueBacklog(): Record<string, number> {
    return sumRecords([...this.workers.values()].map((w) => w.queueBacklog));
  }

  undelivered(): Record<string, number> {
    return sumRecords([...this.workers.values()].map((w) => w.undelivered));
  }

  /** Log files deleted by the devices' own on-disk quota (EVE's rule), over all workers. */
  logsDroppedByQuota(): number {
    let n = 0;
    for (const w of this.workers.values()) n += w.droppedByQuota?.logs ?? 0;
    return n;
  }

  /** The worker whose latest event-loop p99 is worst right now. */
  worstCurrentLoop(): WorkerGauges | undefined {
    let worst: WorkerGauges | undefined;
    for (const w of this.workers.values()) if (!worst || w.loop.p99Ms > worst.loop.p99Ms) worst = w;
    return worst;
  }

  /** Percentile (ms) of a watched endpoint since the previous takeRecent() for it; undefined when none. */
  takeRecent(endpoint: EndpointKey, percentile: number): number | undefined {
    const h = this.recent.get(endpoint);
    if (!h || h.totalCount === 0) return undefined;
    const v = h.getValueAtPercentile(percentile) / 1000;
    h.reset();
    return v;
  }

  /** Adds one series of a delta to the per-class totals. */
  private addToSeries(s: SeriesDelta): MergedSeries {
    const key = `${s.endpoint}|${s.statusClass}`;
    let t = this.series.get(key);
    if (!t) this.series.set(key, (t = { endpoint: s.endpoint, statusClass: s.statusClass, count: 0, sumMs: 0, hist: newLatencyHistogram() }));
    t.count += s.count;
    t.sumMs += s.sumMs;
    addSparse(t.hist, s.hist);
    return { series: t, hist: s.hist, count: s.count, sumMs: s.sumMs };
  }

  private endpoint(endpoint: EndpointKey): EndpointTotals {
    let e = this.endpoints.get(endpoint);
    if (!e) {
      e = { endpoint, count: 0, errors: 0, expected: 0, sumMs: 0, hist: newLatencyHistogram() };
      this.endpoints.set(endpoint, e);
    }
    return e;
  }
}

function sumRecords(records: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) for (const [k, v] of Object.entries(r)) out[k] = (out[k] ?? 0) + v;
  return out;
}

function sumCounts(counts: readonly CountDelta[]): number {
  let n = 0;
  for (const c of counts) n += c.count;
  return n;
}
