// The local profile server lines of the end-of-run report: sites, command completion, token
// rejections and devices by radio and GNSS state.

import type { LpsCommandLatency, LpsRunSummary } from './lps-summary.js';
import { formatMs } from '../format-values.js';

export function lpsReportLines(lps: LpsRunSummary | undefined): string[] {
  if (lps === undefined) return [];
  const c = lps.commands;
  const lines = [
    `lps          ${lps.sites.length} site${lps.sites.length === 1 ? '' : 's'}${lps.sites.length ? ` (${lps.sites.map((s) => `${s.name} ${s.address}`).join(', ')})` : ''}`,
    `  commands   ${c.issued} issued, ${c.acked} acknowledged${c.ackedRatio !== null ? ` (${pct(c.ackedRatio)})` : ''}${latency(c)}`,
  ];
  for (const [name, l] of Object.entries(c.byCommand)) lines.push(`    ${name.padEnd(12)} ${l.issued} issued, ${l.acked} acknowledged${latency(l)}`);
  lines.push(`  tokens     ${lps.tokenRejected.total} answers refused for a wrong server_token${detail(lps.tokenRejected.byEndpoint)}`);
  lines.push(`  radios     ${states(lps.devicesByRadioState)}; GNSS ${states(lps.devicesByGnssState)}`);
  return lines;
}

function latency(l: LpsCommandLatency): string {
  if (l.p50_ms === null) return '';
  return `, issued → acknowledged p50 ${formatS(l.p50_ms)} p99 ${formatS(l.p99_ms!)} max ${formatS(l.max_ms!)}`;
}

function formatS(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)}s` : `${formatMs(ms)}ms`;
}

function pct(f: number): string {
  return `${String(Number((f * 100).toFixed(1)))}%`;
}

function detail(r: Record<string, number>): string {
  const parts = Object.entries(r).filter(([, n]) => n > 0);
  return parts.length === 0 ? '' : ` (${parts.map(([k, n]) => `${k} ${n}`).join(', ')})`;
}

function states(r: Record<string, number>): string {
  const parts = Object.entries(r).filter(([, n]) => n > 0);
  return parts.length === 0 ? 'none' : parts.map(([k, n]) => `${k} ${n}`).join(', ');
}
