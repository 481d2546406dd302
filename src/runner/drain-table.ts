// The text report's table of the drain's own requests (summary.drain.endpoints / overall): what the
// devices delivered after the run ended, kept out of the main endpoint table so its latencies do
// not mix with the run's. Same columns as the main table; rates are over the drain's duration.

import { ENDPOINT_KEYS } from '../protocol/endpoints.js';
import type { EndpointStats } from './endpoint-stats.js';
import type { DrainSummary } from './summary-json.js';

type RowFn = (name: string, st: EndpointStats) => string[];

const HEADER = ['drain', 'count', 'errors', 'unfinished', 'rate/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'];

/** No lines when the drain made no requests (or the summary predates the split). */
export function drainTableLines(dr: DrainSummary | undefined, row: RowFn): string[] {
  if (!dr?.endpoints || !dr.overall || dr.overall.count === 0) return [];
  const known = new Set<string>(ENDPOINT_KEYS);
  const keys = [...ENDPOINT_KEYS.filter((k) => dr.endpoints![k]), ...Object.keys(dr.endpoints).filter((k) => !known.has(k)).sort()];
  const rows = keys.map((k) => row(k, dr.endpoints![k]!));
  const all = row('all', dr.overall);
  const table = [HEADER, ...rows, all];
  const widths = HEADER.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  const line = (r: string[]) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [
    "the drain's requests (after the run ended; not in the table above, nor in its thresholds):",
    line(HEADER),
    rule,
    ...rows.map(line),
    rule,
    line(all),
  ];
}
