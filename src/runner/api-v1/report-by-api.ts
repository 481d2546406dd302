// The report's per-API table, shown when a run's devices spoke more than one controller API (a
// mixed v1/v2 fleet): each endpoint once per API, then each API's total, so v1 and v2 latencies
// and errors can be read side by side. Pure: summary → lines.

import { ENDPOINT_KEYS } from '../../protocol/endpoints.js';
import type { ApiSummary } from './api-breakdown.js';
import type { EndpointStats, RunSummary } from '../summary-json.js';
import { formatMs } from '../format-values.js';

export function byApiLines(s: Pick<RunSummary, 'byApi'>): string[] {
  const apis = (['v1', 'v2'] as const).filter((a) => s.byApi?.[a] !== undefined);
  if (apis.length < 2) return [];
  const header = ['api', 'endpoint', 'count', 'errors', 'rate/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'];
  const rows: string[][] = [];
  const totals: string[][] = [];
  for (const api of apis) {
    const part = s.byApi![api]!;
    for (const key of ordered(part)) rows.push(row(api, key, part.endpoints[key]!));
    const d = part.devices;
    totals.push(row(api, `all${d ? ` (${d.onboarded}/${d.total} devices onboarded)` : ''}`, part.overall));
  }
  const table = [header, ...rows, ...totals];
  const widths = header.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  const line = (r: string[]) => r.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return ['by controller API:', line(header), rule, ...rows.map(line), rule, ...totals.map(line)];
}

function ordered(part: ApiSummary): string[] {
  const known = ENDPOINT_KEYS.filter((k) => part.endpoints[k]);
  const others = Object.keys(part.endpoints)
    .filter((k) => !(ENDPOINT_KEYS as readonly string[]).includes(k))
    .sort();
  return [...known, ...others];
}

function row(api: string, name: string, st: EndpointStats): string[] {
  const lat = (v: number) => (st.count > 0 ? formatMs(v) : '-');
  const rate = st.rate >= 100 ? st.rate.toFixed(0) : st.rate >= 10 ? st.rate.toFixed(1) : st.rate.toFixed(2);
  return [api, name, String(st.count), String(st.errors), rate, lat(st.p50_ms), lat(st.p90_ms), lat(st.p99_ms), lat(st.max_ms)];
}
