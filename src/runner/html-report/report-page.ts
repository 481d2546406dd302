// The HTML report's page: one self-contained file built from a run summary alone (a run's own,
// or one `evesim merge` wrote). Verdict and facts of the run first, then thresholds, requests per
// endpoint, the charts over time (from summary.series), findings, devices, the generator's health
// and the attestation and LPS outcomes. The chart library, its stylesheet, our drawing script and
// the chart data are inline, and a Content-Security-Policy allows nothing else: no network at
// view time, and no script but those two (by hash). Pure: summary + chart library → HTML text.

import { createHash } from 'node:crypto';
import type { RunSummary } from '../summary-json.js';
import type { ChartLibrary } from './uplot-assets.js';
import { chartData, type ChartData } from './chart-specs.js';
import { CHART_SCRIPT } from './chart-script.js';
import { escapeHtml, inlineAsset, jsonForScriptTag } from './html-escape.js';
import { renderGeneric } from './generic-section.js';
import { devicesSection, findingsSection, generatorSection } from './run-facts.js';
import { endpointsTable, thresholdsTable } from './summary-tables.js';
import { PAGE_STYLE } from './page-style.js';
import { machineText } from '../machine-text.js';

export interface HtmlReportOptions {
  /** Named in the footer: which evesim wrote the report. */
  evesimVersion?: string;
}

export function renderHtmlReport(s: RunSummary, lib: ChartLibrary, opts: HtmlReportOptions = {}): string {
  const charts = s.series && s.series.intervals.length > 0 ? chartData(s.series) : undefined;
  const libScript = inlineAsset('uPlot', lib.script, 'script');
  const csp = [
    "default-src 'none'",
    `script-src ${sha256Source(libScript)} ${sha256Source(CHART_SCRIPT)}`,
    "style-src 'unsafe-inline'",
    'img-src data:',
  ].join('; ');
  const title = `evesim ${s.scenario}: ${verdictWord(s)}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${inlineAsset('uPlot stylesheet', lib.stylesheet, 'style')}</style>
<style>${PAGE_STYLE}</style>
</head>
<body>
${header(s)}
<main>
${section('thresholds', 'Thresholds', thresholdsTable(s))}
${section('endpoints', 'Requests by endpoint', endpointsTable(s))}
${section('over-time', 'Over time', charts ? chartsHtml(charts) : noSeriesNotice())}
${section('findings', 'Findings', findingsSection(s))}
${section('devices', 'Devices, drain and undelivered messages', devicesSection(s))}
${section('generator', 'Generator health', generatorSection(s))}
${s.attestation ? section('attestation', 'Attestation outcomes', `<p class="muted">As the embedded controller counted them.</p>${renderGeneric(s.attestation)}`) : ''}
${s.lps ? section('lps', 'Local profile servers', renderGeneric(s.lps)) : ''}
</main>
<footer>Written by evesim${opts.evesimVersion ? ` ${escapeHtml(opts.evesimVersion)}` : ''} from the run summary; charts by uPlot ${escapeHtml(lib.version)}, inline: this file needs no network.</footer>
${charts ? `<script type="application/json" id="evesim-chart-data">${jsonForScriptTag(charts)}</script>
<script>${libScript}</script>
<script>${CHART_SCRIPT}</script>` : ''}
</body>
</html>
`;
}

function verdictWord(s: RunSummary): string {
  return s.exitCode === 0 ? 'PASS' : 'FAIL';
}

function header(s: RunSummary): string {
  const pass = s.exitCode === 0;
  const failedThresholds = s.thresholds.filter((t) => t.status === 'failed').length;
  const why = pass
    ? s.thresholds.length > 0
      ? 'every threshold passed'
      : 'no threshold set, no worker failed'
    : failedThresholds > 0
      ? `${failedThresholds} threshold${failedThresholds > 1 ? 's' : ''} failed`
      : `exit code ${s.exitCode}`;
  const facts: [string, string][] = [
    ['scenario file', s.scenarioFile],
    ['seed', String(s.seed)],
    ['target', s.target === 'embedded' ? 'embedded controller' : s.target],
    ['started', s.startedAt],
    ['duration', `${(s.durationMs / 1000).toFixed(1)} s`],
    ['devices', `${s.devices.total} (${s.devices.onboarded} onboarded)`],
    ['requests', `${s.overall.count} (${s.overall.errors} errors)`],
    ['machine', machineText(s.machine)],
  ];
  return `<header class="${pass ? 'pass' : 'fail'}">
<div class="verdict" id="verdict">${verdictWord(s)}</div>
<div class="run">
<h1>${escapeHtml(s.scenario)}</h1>
<p class="why">${escapeHtml(why)} — exit code ${s.exitCode}</p>
<dl>${facts.map(([k, v]) => `<div><dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd></div>`).join('')}</dl>
</div>
</header>`;
}

function section(id: string, title: string, body: string): string {
  return `<section id="${id}"><h2>${escapeHtml(title)}</h2>\n${body}\n</section>`;
}

function chartsHtml(d: ChartData): string {
  const events =
    d.events.length > 0
      ? `<details class="events"><summary>${d.events.length} timeline events (vertical markers on every chart)</summary><table class="grid"><thead><tr><th class="num">at</th><th>kind</th><th>what</th></tr></thead><tbody>${d.events
          .map((e) => `<tr><td class="num">${escapeHtml(clock(e.tMs / 1000))}</td><td>${escapeHtml(e.kind)}</td><td>${escapeHtml(e.label)}</td></tr>`)
          .join('')}</tbody></table></details>`
      : '<p class="muted">No timeline actions or faults in this run.</p>';
  const intro = `<p class="muted">${d.x.length} intervals of ${d.intervalS} s; time is minutes:seconds since the run started${d.drainStartS !== null ? `; the shaded part is the drain (from ${clock(d.drainStartS)})` : ''}. Drag across a chart to zoom, double-click to reset.</p>`;
  const sections = d.sections.map(
    (sec) =>
      `<h3>${escapeHtml(sec.title)}</h3>${sec.note ? `<p class="muted">${escapeHtml(sec.note)}</p>` : ''}<div class="charts">${sec.charts
        .map((c) => `<figure class="chart${c.small ? ' small' : ''}"><figcaption>${escapeHtml(c.title)} <span class="muted">(${escapeHtml(c.unit)})</span></figcaption><div data-chart="${escapeHtml(c.id)}"></div></figure>`)
        .join('')}</div>`,
  );
  return intro + events + sections.join('\n');
}

function noSeriesNotice(): string {
  return '<p class="notice" id="no-series">No time series in this summary: it was written by an evesim that did not record one (or the run had no interval), so there is nothing to chart over time. The whole-run figures above and below are complete.</p>';
}

function clock(s: number): string {
  const t = Math.round(Math.abs(s));
  const m = Math.floor(t / 60);
  const r = t - m * 60;
  return `${s < 0 ? '-' : ''}${m}:${r < 10 ? '0' : ''}${r}`;
}

function sha256Source(script: string): string {
  return `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;
}
