// The HTML report's facts of the whole run besides requests: findings with their first examples,
// devices and the drain, undelivered messages, the generator's health. Pure: summary → HTML
// fragments, every summary string escaped.

import { onboardingText } from '../onboarding-text.js';
import type { RunSummary } from '../summary-json.js';
import { generatorAdvice, judgeGenerator, LAG_LIMIT_MS, SATURATED_WORDS } from '../report-table.js';
import { saturationOf } from '../saturation-verdict.js';
import { formatMs } from '../format-values.js';
import { escapeHtml } from './html-escape.js';
import { formatNumber, inlineText } from './generic-section.js';

/** Findings by kind, each with its first examples when the summary carries them (`findings.examples`). */
export function findingsSection(s: RunSummary): string {
  const kinds = Object.entries(s.findings.byKind).filter(([, n]) => n > 0);
  if (kinds.length === 0) return '<p class="ok-text">No findings: every answer of the target decoded and checked out.</p>';
  const examples = examplesByKind((s.findings as { examples?: unknown }).examples);
  const rows = kinds
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => {
      const list = examples.get(kind) ?? [];
      const ex = list.length > 0 ? `<ul class="examples">${list.map((e) => `<li>${escapeHtml(inlineText(e))}</li>`).join('')}</ul>` : '<span class="muted">no example kept</span>';
      return `<tr><th scope="row">${escapeHtml(kind)}</th><td class="num">${n}</td><td>${ex}</td></tr>`;
    });
  const unattached = examples.get('') ?? [];
  const rest = unattached.length > 0 ? `<h3>Examples</h3><ul class="examples">${unattached.map((e) => `<li>${escapeHtml(inlineText(e))}</li>`).join('')}</ul>` : '';
  return (
    `<p>${s.findings.total} findings: problems the devices found in the target's answers.</p>` +
    `<table class="grid findings"><thead><tr><th>kind</th><th class="num">count</th><th>first examples</th></tr></thead><tbody>${rows.join('')}</tbody></table>${rest}`
  );
}

/**
 * Examples as the summary may carry them, read loosely: a record keyed by kind (each a list or a
 * single example), or a list of examples with a `kind` field. Key '' holds what names no kind.
 */
function examplesByKind(examples: unknown): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  const add = (kind: string, e: unknown) => out.set(kind, [...(out.get(kind) ?? []), e]);
  if (Array.isArray(examples)) {
    for (const e of examples) {
      const kind = typeof e === 'object' && e !== null && typeof (e as { kind?: unknown }).kind === 'string' ? (e as { kind: string }).kind : '';
      add(kind, e);
    }
  } else if (typeof examples === 'object' && examples !== null) {
    for (const [kind, list] of Object.entries(examples)) for (const e of Array.isArray(list) ? list : [list]) add(kind, e);
  }
  return out;
}

export function devicesSection(s: RunSummary): string {
  const d = s.devices;
  const states = Object.entries(d.byLifecycle).filter(([, n]) => (n ?? 0) > 0);
  const pct = d.total > 0 ? ` (${formatNumber(Math.round((d.onboarded / d.total) * 1000) / 10)}%)` : '';
  const rows: [string, string][] = [
    ['devices', String(d.total)],
    ['onboarded at least once', `${d.onboarded}${pct}`],
    ...(s.onboarding ? [['time to onboard', onboardingText(s.onboarding)] as [string, string]] : []),
    ['at the end', states.length > 0 ? states.map(([st, n]) => `${st} ${n}`).join(', ') : '—'],
  ];
  const u = s.undelivered;
  rows.push(['undelivered reliable messages', `${u.total} (info ${u.info}, logs ${u.logs}, flowlog ${u.flowlog})`]);
  if (s.drain) {
    const dr = s.drain;
    const left = Object.entries(dr.leftAtStop).filter(([, n]) => n > 0);
    rows.push([
      'drain after the run',
      dr.gracefulStopMs === 0
        ? 'none (graceful stop 0 s)'
        : `${(dr.durationMs / 1000).toFixed(1)} s of up to ${(dr.gracefulStopMs / 1000).toFixed(1)} s: ` +
          (left.length === 0 ? 'every queued reliable message delivered' : `still queued at stop: ${left.map(([k, n]) => `${k} ${n}`).join(', ')}`),
    ]);
  }
  return kvTable(rows, u.total > 0 ? 'undelivered reliable messages' : undefined);
}

export function generatorSection(s: RunSummary): string {
  const g = s.generator;
  const v = judgeGenerator(g, s.series);
  const verdict = v.bottleneck
    ? `<p class="bad-text"><strong>The generator was the bottleneck:</strong> ${escapeHtml(v.reasons.join('; '))}. ${escapeHtml(generatorAdvice(v).replace(' above', ''))}</p>`
    : `<p class="ok-text">The generator was not the bottleneck (worker event-loop lag p99 within ${LAG_LIMIT_MS} ms, CPU ${g.cpuPercent.toFixed(0)}% of all cores).</p>`;
  // Who was saturated, as the text report's last line says it.
  const sat = saturationOf(s);
  const saturated =
    `<p class="${sat.verdict === 'neither' ? 'ok-text' : 'bad-text'}"><strong>Saturated: ${escapeHtml(SATURATED_WORDS[sat.verdict])}.</strong> ` +
    `${escapeHtml(sat.evidence.join('; '))}.</p>`;
  const embedded = s.target === 'embedded' ? '<p class="muted">The embedded controller ran on the same machine and shared its CPU with the generator.</p>' : '';
  const rows = g.workers.map(
    (w) =>
      `<tr><th scope="row">${w.worker}</th><td class="num${w.eventLoopLagP99Ms > LAG_LIMIT_MS ? ' bad-text' : ''}">${formatMs(w.eventLoopLagP99Ms)}</td>` +
      `<td class="num">${w.eventLoopLagMaxMs !== undefined ? formatMs(w.eventLoopLagMaxMs) : '—'}</td>` +
      `<td class="num">${w.heapPeakMiB !== undefined ? formatNumber(w.heapPeakMiB) : '—'}</td>` +
      `<td class="num">${w.settledKiBPerDevice !== undefined ? formatNumber(w.settledKiBPerDevice) : '—'}</td></tr>`,
  );
  const table =
    `<table class="grid workers"><thead><tr><th>worker</th><th class="num">loop lag p99 ms</th><th class="num">longest stall ms</th><th class="num">heap peak MiB</th><th class="num">KiB per device</th></tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table>` +
    `<p>main thread loop lag p99 ${formatMs(g.mainEventLoopLagP99Ms)} ms, CPU ${g.cpuPercent.toFixed(0)}% of ${s.machine.cpus} cores` +
    (g.machineCpuPercent !== undefined ? ` (every process on the machine: ${g.machineCpuPercent.toFixed(0)}%)` : '') +
    `</p>`;
  return verdict + saturated + embedded + table;
}

function kvTable(rows: [string, string][], flagged?: string): string {
  return `<table class="kv">${rows
    .map(([k, v]) => `<tr${k === flagged ? ' class="has-errors"' : ''}><th scope="row">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`)
    .join('')}</table>`;
}
