// The end-of-run text report: per-endpoint table, devices, undelivered messages, findings,
// thresholds and a verdict on whether the generator itself limited the run. Pure: summary → text.

import { onboardingText } from './onboarding-text.js';
import { registerConflictLine } from './register-conflicts.js';
import { inFlightLine } from './in-flight-line.js';
import { ownConnectionsLine } from './own-connections-line.js';
import { ENDPOINT_KEYS } from '../protocol/endpoints.js';
import type { DrainSummary, EndpointStats, RunSummary, ThresholdResult, ThresholdStatus } from './summary-json.js';
import { formatBytes, formatMs } from './format-values.js';
import { drainTableLines } from './drain-table.js';
import { RUN_CAPABILITIES } from './capabilities.js';
import { findingKindLines } from './finding-report.js';
import { generatorAdvice, judgeGenerator } from './generator-verdict.js';
import { saturationOf } from './saturation-verdict.js';
import type { SaturatedParty } from './saturation-types.js';
import { machineText } from './machine-text.js';

export { BUSY_LIMIT, CPU_LIMIT_PERCENT, generatorAdvice, judgeGenerator, LAG_LIMIT_MS, type GeneratorVerdict } from './generator-verdict.js';

export function renderReport(s: RunSummary): string {
  const out: string[] = [];
  out.push(`evesim: ${s.scenario} (${s.scenarioFile}), seed ${s.seed}, target ${s.target}`);
  out.push(
    `started ${s.startedAt}, ran ${(s.durationMs / 1000).toFixed(1)} s on ${machineText(s.machine)}`,
  );
  out.push('');
  out.push(...endpointTable(s));
  const drainTable = drainTableLines(s.drain, row);
  if (drainTable.length > 0) out.push('', ...drainTable);
  for (const c of RUN_CAPABILITIES) {
    const lines = c.reportAfterEndpoints?.(s) ?? [];
    if (lines.length > 0) out.push('', ...lines);
  }
  const failed = failedRequests(s);
  if (failed.length > 0) {
    out.push('');
    out.push('failed requests:');
    out.push(...failed.map((l) => `  ${l}`));
  }
  const expected = expectedRejections(s);
  if (expected.length > 0) {
    out.push('');
    out.push(...expected);
  }
  out.push('');
  out.push(...factLines(s));
  for (const c of RUN_CAPABILITIES) out.push(...(c.reportAfterFacts?.(s) ?? []));
  out.push('');
  out.push(...thresholdLines(s));
  out.push('');
  out.push(generatorLine(s));
  const inFlight = inFlightLine(s);
  if (inFlight !== undefined) out.push(inFlight);
  if (s.target === 'embedded') {
    out.push('             (the embedded controller runs on this machine and shares its CPU with the generator)');
  }
  const connections = ownConnectionsLine(s);
  if (connections !== undefined) out.push(connections);
  out.push(saturationLine(s));
  return `${out.join('\n')}\n`;
}

function endpointTable(s: RunSummary): string[] {
  const header = ['endpoint', 'count', 'errors', 'unfinished', 'rate/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'];
  const rows = orderedEndpoints(s).map(([key, st]) => row(key, st));
  rows.push(row('all', { ...s.overall, ...sums(s) }, s.overall));
  const table = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...table.map((r) => r[c].length)));
  const line = (r: string[]) =>
    r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const lines = [line(header), rule, ...rows.slice(0, -1).map(line), rule, line(rows[rows.length - 1])];
  if (rows.length === 1) lines.splice(2, 0, '(no requests)');
  return lines;
}

export function row(name: string, st: EndpointStats, latencies: EndpointStats = st): string[] {
  const lat = (v: number) => (latencies.count > 0 ? formatMs(v) : '-');
  return [
    name,
    String(st.count),
    String(st.errors),
    // Absent from summaries written before unfinished requests were counted.
    String(st.unfinished ?? 0),
    formatRate(st.rate),
    lat(latencies.p50_ms),
    lat(latencies.p90_ms),
    lat(latencies.p99_ms),
    lat(latencies.max_ms),
  ];
}

/** Known endpoints in protocol order, then any others the summary carries, alphabetically. */
export function orderedEndpoints(s: RunSummary): [string, EndpointStats][] {
  const known = ENDPOINT_KEYS.filter((k) => s.endpoints[k]).map((k): [string, EndpointStats] => [k, s.endpoints[k]]);
  const knownKeys = new Set<string>(ENDPOINT_KEYS);
  const others = Object.keys(s.endpoints)
    .filter((k) => !knownKeys.has(k))
    .sort()
    .map((k): [string, EndpointStats] => [k, s.endpoints[k]]);
  return [...known, ...others];
}

export function sums(s: RunSummary): { count: number; errors: number; unfinished: number; rate: number } {
  const t = { count: 0, errors: 0, unfinished: 0, rate: 0 };
  for (const st of Object.values(s.endpoints)) {
    t.count += st.count;
    t.errors += st.errors;
    t.unfinished += st.unfinished ?? 0;
    t.rate += st.rate;
  }
  return t;
}

/** One line per endpoint with errors: which statuses and which connection failures. */
export function failedRequests(s: RunSummary): string[] {
  const lines: string[] = [];
  for (const [key, st] of orderedEndpoints(s)) {
    if (st.errors === 0) continue;
    const parts = [
      ...Object.entries(st.byStatus)
        .map(([code, n]): [string, number] => [code, n - expectedOf(s, key, code)])
        .filter(([code, n]) => !isSuccess(Number(code)) && n > 0)
        .map(([code, n]) => `HTTP ${code} ×${n}`),
      ...Object.entries(st.byError).map(([cause, n]) => `${cause} ×${n}`),
    ];
    lines.push(`${key}: ${parts.join(', ') || `${st.errors} errors`}`);
  }
  return lines;
}

/** Answers of `endpoint` with `status` that were expected rejections (not failures). */
function expectedOf(s: RunSummary, endpoint: string, status: string): number {
  let n = 0;
  for (const r of s.expected?.rejections ?? []) if (r.endpoint === endpoint && r.status === status) n += r.count;
  return n;
}

/** Why an expected rejection is normal, as the report says it. */
const EXPECTED_REASON_TEXT: Record<string, string> = {
  'before-attestation': 'before attestation, as EVE does',
};

/** Non-success answers the devices expected: listed apart, never as failures. */
export function expectedRejections(s: RunSummary): string[] {
  const list = s.expected?.rejections ?? [];
  if (list.length === 0) return [];
  const parts = list.map((r) => `${r.endpoint} ${r.status} ×${r.count} — ${EXPECTED_REASON_TEXT[r.reason] ?? r.reason}`);
  return parts.length === 1 ? [`expected rejections: ${parts[0]}`] : ['expected rejections:', ...parts.map((p) => `  ${p}`)];
}

function isSuccess(status: number): boolean {
  return (status >= 200 && status < 300) || status === 304;
}

function factLines(s: RunSummary): string[] {
  const d = s.devices;
  const pct = d.total > 0 ? ` (${formatPercent(d.onboarded / d.total)})` : '';
  const states = Object.entries(d.byLifecycle)
    .filter(([, n]) => (n ?? 0) > 0)
    .map(([state, n]) => `${state} ${n}`)
    .join(', ');
  const u = s.undelivered;
  const kinds = Object.entries(s.findings.byKind)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return [
    `devices      ${d.total} total, ${d.onboarded} onboarded${pct}${states ? `; at the end: ${states}` : ''}`,
    ...(s.onboarding ? [`onboarding   ${onboardingText(s.onboarding)}`] : []),
    ...(s.drain ? [drainLine(s.drain, u.total)] : []),
    `undelivered  ${u.total} reliable messages (info ${u.info}, logs ${u.logs}, flowlog ${u.flowlog})`,
    ...quotaLines(s),
    `findings     ${s.findings.total}${kinds ? ` (${kinds})` : ''}`,
    ...findingKindLines(s),
    ...(s.registerConflicts ? [registerConflictLine(s.registerConflicts)] : []),
  ];
}

/** Log files EVE's own on-disk quota deleted: apart from undelivered (a real device loses them too). */
function quotaLines(s: RunSummary): string[] {
  const n = s.droppedByQuota?.logs ?? 0;
  return n > 0 ? [`dropped by the device's quota  ${n} log files (EVE deletes its oldest kept files over logs.quotaMB; not in undelivered)`] : [];
}

/**
 * The graceful stop: how long it took and what it left (a simulator step, not EVE behaviour).
 * It speaks only of the queues at the end; messages given up on earlier are named so the line
 * never reads as "nothing lost" above a non-zero undelivered count.
 */
function drainLine(dr: DrainSummary, undelivered: number): string {
  const took = `${(dr.durationMs / 1000).toFixed(1)} s of up to ${(dr.gracefulStopMs / 1000).toFixed(1)} s`;
  const left = Object.entries(dr.leftAtStop).filter(([, n]) => n > 0);
  const leftTotal = left.reduce((a, [, n]) => a + n, 0);
  const earlier = Math.max(0, undelivered - leftTotal);
  const outcome =
    left.length === 0
      ? earlier === 0
        ? 'every queued reliable message delivered'
        : `queues emptied; ${earlier} reliable messages were given up on before the drain (counted undelivered)`
      : `still queued at stop: ${left.map(([k, n]) => `${k} ${n}`).join(', ')} (counted undelivered)` +
        (earlier > 0 ? `; ${earlier} more given up on before the drain` : '');
  return `drain        ${took} after the run (devices stop producing and deliver their queues, paced by EVE's sending rules): ${outcome}`;
}

/** ✓ passed, ✗ failed, – not checked (the target cannot provide the figure; does not fail the run). */
const STATUS_MARK: Record<ThresholdStatus, string> = { passed: '✓', failed: '✗', 'not-checked': '–' };

function thresholdLines(s: RunSummary): string[] {
  if (s.thresholds.length === 0) return ['thresholds   none set'];
  const passed = s.thresholds.filter((t) => t.status === 'passed').length;
  const notChecked = s.thresholds.filter((t) => t.status === 'not-checked').length;
  // A per-device threshold shows the bound it came to: "register.count >= 1 per device (≥ 20 for 20 devices)".
  const label = (t: ThresholdResult) => (t.perDevice ? `${t.source} (${t.perDevice.effective})` : t.source);
  const width = Math.max(...s.thresholds.map((t) => label(t).length));
  return [
    `thresholds   ${passed} of ${s.thresholds.length} passed${notChecked > 0 ? `, ${notChecked} not checked` : ''}`,
    ...s.thresholds.map((t) => `  ${STATUS_MARK[t.status]} ${label(t).padEnd(width)}  ${t.detail}`),
  ];
}

function generatorLine(s: RunSummary): string {
  const g = s.generator;
  const v = judgeGenerator(g, s.series);
  if (v.bottleneck) {
    return `generator    WAS THE BOTTLENECK: ${v.reasons.join('; ')}. ${generatorAdvice(v)}`;
  }
  const maxLag = g.workers.length > 0 ? Math.max(...g.workers.map((w) => w.eventLoopLagP99Ms)) : 0;
  const stalls = g.workers.flatMap((w) => (w.eventLoopLagMaxMs === undefined ? [] : [w.eventLoopLagMaxMs]));
  return (
    `generator    not the bottleneck: worker event-loop lag p99 ≤ ${formatMs(maxLag)} ms` +
    (stalls.length > 0 ? `, longest stall ${formatMs(Math.max(...stalls))} ms ` : ' ') +
    `(${g.workers.length} workers, main ${formatMs(g.mainEventLoopLagP99Ms)} ms), CPU ${g.cpuPercent.toFixed(0)}%` +
    (g.machineCpuPercent !== undefined ? ` (the whole machine ${g.machineCpuPercent.toFixed(0)}%)` : '') +
    (g.rssPeakBytes !== undefined ? `, RSS peak ${formatBytes(g.rssPeakBytes)}` : '') +
    (g.tickMs ? `, wake-ups on a ${formatMs(g.tickMs)} ms tick` : '')
  );
}

export const SATURATED_WORDS: Record<SaturatedParty, string> = {
  controller: 'the controller',
  generator: 'the generator',
  machine: "this machine's CPUs",
  neither: 'neither the controller nor the generator',
};

/** Who was saturated, with the evidence (saturation-verdict.ts). */
function saturationLine(s: RunSummary): string {
  const v = saturationOf(s);
  return `saturated    ${SATURATED_WORDS[v.verdict]}: ${v.evidence.join('; ')}`;
}

function formatRate(r: number): string {
  if (r >= 100) return r.toFixed(0);
  if (r >= 10) return r.toFixed(1);
  return r.toFixed(2);
}

function formatPercent(f: number): string {
  return `${String(Number((f * 100).toFixed(1)))}%`;
}
