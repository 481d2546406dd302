// What the HTML report's charts show, computed from the run's time series (run-series.ts): one
// spec per chart, plain data the page's script hands to uPlot as is. Pure: series → specs.
//
// The x axis is seconds since the run's start instant, each interval placed at its start. Rates
// are per second of the interval; errors and findings are counts per interval (rare events, which a
// rate would make look like fractions). Stacked charts carry cumulative values to draw and the
// raw values for the legend.

import type { RunEvent, RunInterval, RunSeries } from '../run-series.js';
import { ENDPOINT_KEYS } from '../../protocol/endpoints.js';

export interface ChartSeriesSpec {
  label: string;
  /** One value per x; null where there is none (no request finished: no latency). */
  values: (number | null)[];
  color: string;
  /** Area fill (stacked charts). */
  fill?: string;
  /** Stacked charts: the value of this series alone, shown in the legend (values are cumulative). */
  raw?: (number | null)[];
  dash?: number[];
}

export interface ChartSpec {
  /** Made here ('latency-2'), never from summary text, so it is safe in attributes and selectors. */
  id: string;
  title: string;
  /** Unit of the y axis, as the legend and the heading name it. */
  unit: string;
  /** Drawn smaller, several to a row (one chart per endpoint). */
  small?: boolean;
  series: ChartSeriesSpec[];
}

export interface ChartSection {
  title: string;
  /** One sentence under the section title saying how to read its charts. */
  note?: string;
  charts: ChartSpec[];
}

/** Everything the page's script draws: put inline as JSON. */
export interface ChartData {
  /** Seconds since the run's start, one per interval. */
  x: number[];
  intervalS: number;
  /** Where the drain begins, seconds; null when the series has no drain. */
  drainStartS: number | null;
  /** End of the last interval, seconds. */
  endS: number;
  events: RunEvent[];
  sections: ChartSection[];
}

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939', '#8c6d31', '#843c39', '#7b4173'];
const PERCENTILE_COLORS = { p50: '#2ca02c', p90: '#ff7f0e', p99: '#d62728' };
/** Lifecycle states bottom up (the healthy majority at the bottom) and their colours. */
const LIFECYCLE_STACK: [string, string][] = [
  ['onboarded', '#4caf50'],
  ['attesting', '#9c27b0'],
  ['uuid', '#03a9f4'],
  ['registering', '#ff9800'],
  ['fetching-certs', '#ffc107'],
  ['idle', '#bdbdbd'],
  ['stopped', '#616161'],
];

export function chartData(series: RunSeries): ChartData {
  const iv = series.intervals;
  const x = iv.map((i) => i.tMs / 1000);
  const drain = iv.find((i) => i.phase === 'drain');
  const drainEvent = series.events.find((e) => e.kind === 'drain');
  const last = iv[iv.length - 1];
  const endpoints = orderedKeys(iv.map((i) => i.endpoints));
  return {
    x,
    intervalS: series.intervalMs / 1000,
    // The drain event says when it began; the drain intervals only from which interval on.
    drainStartS: drainEvent ? drainEvent.tMs / 1000 : drain ? drain.tMs / 1000 : null,
    endS: last ? (last.tMs + last.durationMs) / 1000 : 0,
    events: series.events,
    sections: [
      {
        title: 'Throughput and errors',
        note: 'Requests finished per second of each interval, by endpoint; errors and findings counted per interval.',
        charts: [throughputChart(iv, endpoints), errorsChart(iv, endpoints), ...controllerChart(iv)],
      },
      {
        title: 'Latency by endpoint',
        note:
          endpoints.length > 0
            ? 'p50, p90 and p99 of the requests that finished in each interval (gaps: none finished).'
            : 'No request finished in any interval.',
        charts: endpoints.map((key, n) => latencyChart(iv, key, n)),
      },
      {
        title: 'Devices and queues',
        note: 'Devices in each lifecycle state (stacked) and reliable messages queued on the devices, at the end of each interval.',
        charts: [devicesChart(iv), queuedChart(iv)],
      },
      {
        title: 'Generator health',
        note: "The simulator's own worker threads: event-loop lag (devices fire late when it is high) and busy share.",
        charts: [lagChart(iv), busyChart(iv)],
      },
    ],
  };
}

/** Known endpoints in protocol order, then the others (lps.*, …) alphabetically. */
function orderedKeys(records: readonly Record<string, unknown>[]): string[] {
  const seen = new Set<string>();
  for (const r of records) for (const k of Object.keys(r)) seen.add(k);
  const known: string[] = ENDPOINT_KEYS.filter((k) => seen.has(k));
  const others = [...seen].filter((k) => !known.includes(k)).sort();
  return [...known, ...others];
}

function color(n: number): string {
  return PALETTE[n % PALETTE.length]!;
}

const seconds = (i: RunInterval): number => (i.durationMs > 0 ? i.durationMs / 1000 : 1);

function throughputChart(iv: readonly RunInterval[], endpoints: readonly string[]): ChartSpec {
  return {
    id: 'throughput',
    title: 'Requests per second, by endpoint',
    unit: 'req/s',
    series: endpoints.map((key, n) => ({
      label: key,
      color: color(n),
      values: iv.map((i) => round((i.endpoints[key]?.requests ?? 0) / seconds(i))),
    })),
  };
}

function errorsChart(iv: readonly RunInterval[], endpoints: readonly string[]): ChartSpec {
  const withErrors = endpoints.filter((key) => iv.some((i) => (i.endpoints[key]?.errors ?? 0) > 0));
  const kinds = orderedKeys(iv.map((i) => i.findings)).filter((k) => iv.some((i) => (i.findings[k] ?? 0) > 0));
  const series: ChartSeriesSpec[] = [
    ...withErrors.map((key) => ({
      label: `errors: ${key}`,
      color: color(endpoints.indexOf(key)),
      values: iv.map((i) => i.endpoints[key]?.errors ?? 0),
    })),
    ...kinds.map((kind, n) => ({
      label: `finding: ${kind}`,
      color: color(endpoints.length + n),
      dash: [6, 3],
      values: iv.map((i) => i.findings[kind] ?? 0),
    })),
  ];
  // A clean run still shows its flat zero lines: "none" is a result too.
  if (withErrors.length === 0) series.unshift({ label: 'errors (all endpoints)', color: '#d62728', values: iv.map(() => 0) });
  if (kinds.length === 0) series.push({ label: 'findings (all kinds)', color: '#9467bd', dash: [6, 3], values: iv.map(() => 0) });
  return { id: 'errors', title: 'Errors and findings per interval', unit: 'count', series };
}

function controllerChart(iv: readonly RunInterval[]): ChartSpec[] {
  if (!iv.some((i) => i.controller)) return [];
  const series: ChartSeriesSpec[] = [
    { label: 'requests/s', color: color(0), values: iv.map((i) => (i.controller ? round(i.controller.requests / seconds(i)) : null)) },
  ];
  return [{ id: 'controller', title: 'Embedded controller: requests it served per second', unit: 'req/s', series }];
}

function latencyChart(iv: readonly RunInterval[], key: string, n: number): ChartSpec {
  const pick = (f: 'p50Ms' | 'p90Ms' | 'p99Ms') => iv.map((i) => i.endpoints[key]?.[f] ?? null);
  return {
    id: `latency-${n}`,
    title: key,
    unit: 'ms',
    small: true,
    series: [
      { label: 'p50', color: PERCENTILE_COLORS.p50, values: pick('p50Ms') },
      { label: 'p90', color: PERCENTILE_COLORS.p90, values: pick('p90Ms') },
      { label: 'p99', color: PERCENTILE_COLORS.p99, values: pick('p99Ms') },
    ],
  };
}

function devicesChart(iv: readonly RunInterval[]): ChartSpec {
  const known = LIFECYCLE_STACK.map(([s]) => s);
  const extra = orderedKeys(iv.map((i) => i.devices)).filter((s) => !known.includes(s));
  const stack: [string, string][] = [...LIFECYCLE_STACK, ...extra.map((s, n): [string, string] => [s, color(n)])].filter(([state]) =>
    iv.some((i) => ((i.devices as Record<string, number | undefined>)[state] ?? 0) > 0),
  );
  const running = iv.map(() => 0);
  const layers: ChartSeriesSpec[] = stack.map(([state, c]) => {
    const raw = iv.map((i) => (i.devices as Record<string, number | undefined>)[state] ?? 0);
    raw.forEach((v, k) => (running[k]! += v));
    return { label: state, color: c, fill: c, raw, values: [...running] };
  });
  // Drawn top layer first so each lower (smaller) area is painted over the one above it.
  const series = layers.reverse();
  if (series.length === 0) series.push({ label: 'devices', color: '#bdbdbd', values: iv.map(() => 0) });
  return { id: 'devices', title: 'Devices by lifecycle state (stacked)', unit: 'devices', series };
}

function queuedChart(iv: readonly RunInterval[]): ChartSpec {
  const kinds = orderedKeys(iv.map((i) => i.queued));
  const series: ChartSeriesSpec[] = kinds.map((kind, n) => ({ label: kind, color: color(n), values: iv.map((i) => i.queued[kind] ?? 0) }));
  if (series.length === 0) series.push({ label: 'queued', color: color(0), values: iv.map(() => 0) });
  return { id: 'queued', title: 'Reliable messages queued on the devices', unit: 'messages', series };
}

function workerIds(iv: readonly RunInterval[]): number[] {
  const ids = new Set<number>();
  for (const i of iv) for (const w of i.workers) ids.add(w.worker);
  return [...ids].sort((a, b) => a - b);
}

function lagChart(iv: readonly RunInterval[]): ChartSpec {
  const ids = workerIds(iv);
  const series: ChartSeriesSpec[] = ids.map((id, n) => ({
    label: `worker ${id} p99`,
    color: color(n),
    values: iv.map((i) => i.workers.find((w) => w.worker === id)?.loopP99Ms ?? null),
  }));
  if (series.length === 0) series.push({ label: 'no worker figures', color: color(0), values: iv.map(() => null) });
  return { id: 'loop-lag', title: 'Worker event-loop lag p99', unit: 'ms', series };
}

function busyChart(iv: readonly RunInterval[]): ChartSpec {
  const ids = workerIds(iv);
  const series: ChartSeriesSpec[] = ids.map((id, n) => ({
    label: `worker ${id}`,
    color: color(n),
    values: iv.map((i) => {
      const w = i.workers.find((x) => x.worker === id);
      return w ? round(w.busy * 100) : null;
    }),
  }));
  if (series.length === 0) series.push({ label: 'no worker figures', color: color(0), values: iv.map(() => null) });
  return { id: 'busy', title: 'Worker threads busy', unit: '%', series };
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}
