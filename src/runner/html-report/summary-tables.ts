// The HTML report's tables of the whole run: thresholds (status, measured value, bound) and
// requests per endpoint with the same figures as the text report (report-table.ts), per API too.
// Pure: summary → HTML fragments, every summary string escaped.

import type { EndpointStats, RunSummary, ThresholdResult, ThresholdStatus } from '../summary-json.js';
import { expectedRejections, failedRequests, orderedEndpoints, row, sums } from '../report-table.js';
import { escapeHtml } from './html-escape.js';

const STATUS_TEXT: Record<ThresholdStatus, string> = { passed: 'pass', failed: 'FAIL', 'not-checked': 'not checked' };

export function thresholdsTable(s: RunSummary): string {
  if (s.thresholds.length === 0) return '<p class="muted">No thresholds set: the run passes unless a worker fails.</p>';
  const passed = s.thresholds.filter((t) => t.status === 'passed').length;
  const failed = s.thresholds.filter((t) => t.status === 'failed').length;
  const notChecked = s.thresholds.length - passed - failed;
  const head = '<tr><th>result</th><th>threshold</th><th class="num">measured</th><th class="num">bound</th></tr>';
  const rows = s.thresholds.map(
    (t) =>
      `<tr class="threshold ${t.status}" data-status="${t.status}"><td><span class="badge ${t.status}">${STATUS_TEXT[t.status]}</span></td>` +
      `<td class="source">${escapeHtml(t.source)}${t.required ? ' <span class="muted">(required)</span>' : ''}</td>` +
      `<td class="num">${escapeHtml(t.detail)}</td><td class="num">${escapeHtml(boundText(t))}</td></tr>`,
  );
  const counts = `${passed} of ${s.thresholds.length} passed${failed > 0 ? `, ${failed} failed` : ''}${notChecked > 0 ? `, ${notChecked} not checked (the target cannot provide the figure)` : ''}`;
  return `<p>${counts}</p><table class="grid thresholds"><thead>${head}</thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The bound as written after the comparison ("< 200ms"), or the per-device bound it came to. */
function boundText(t: ThresholdResult): string {
  if (t.perDevice) return t.perDevice.effective;
  const m = /(<=|>=|==|!=|<|>)\s*(.+)$/.exec(t.source);
  if (m) return `${m[1]} ${m[2]}`;
  return t.bound === null ? '—' : String(t.bound);
}

const ENDPOINT_HEAD = ['endpoint', 'requests', 'errors', 'rate/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'];

/** Requests per endpoint and all together, then failed requests by cause and expected rejections. */
export function endpointsTable(s: RunSummary): string {
  const out = [endpointGrid(s)];
  const failed = failedRequests(s);
  if (failed.length > 0) out.push(`<h3>Failed requests</h3><ul class="failed">${failed.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>`);
  const expected = expectedRejections(s);
  if (expected.length > 0) out.push(`<p class="muted">${expected.map((l) => escapeHtml(l.trim())).join('<br>')}</p>`);
  // Per API only when devices spoke more than one controller API (as the text report): otherwise the same table again.
  const apis = Object.entries(s.byApi ?? {}).filter(([, part]) => part !== undefined);
  const controllerApis = apis.filter(([api]) => api === 'v1' || api === 'v2').length;
  for (const [api, part] of controllerApis >= 2 ? apis : []) {
    if (!part) continue;
    const devices = part.devices ? ` — ${part.devices.total} devices, ${part.devices.onboarded} onboarded` : '';
    out.push(`<h3>API ${escapeHtml(api)}${escapeHtml(devices)}</h3>${endpointGrid({ endpoints: part.endpoints, overall: part.overall })}`);
  }
  return out.join('\n');
}

function endpointGrid(s: Pick<RunSummary, 'endpoints' | 'overall'>): string {
  const rows = orderedEndpoints(s as RunSummary).map(([key, st]) => gridRow(row(key, st), st));
  const total = row('all', { ...s.overall, ...sums(s as RunSummary) }, s.overall);
  const body = rows.length > 0 ? rows.join('') : `<tr><td colspan="${ENDPOINT_HEAD.length}" class="muted">no requests</td></tr>`;
  return (
    `<table class="grid endpoints"><thead><tr>${ENDPOINT_HEAD.map((h, c) => `<th${c > 0 ? ' class="num"' : ''}>${h}</th>`).join('')}</tr></thead>` +
    `<tbody>${body}</tbody><tfoot>${gridRow(total, s.overall)}</tfoot></table>`
  );
}

/** Cells of row(); the errors cell in red when there are any. */
function gridRow(cells: string[], st: EndpointStats): string {
  const cell = (c: string, i: number) =>
    i === 0 ? `<th scope="row">${escapeHtml(c)}</th>` : `<td class="num${i === 2 && st.errors > 0 ? ' bad-text' : ''}">${escapeHtml(c)}</td>`;
  return `<tr>${cells.map(cell).join('')}</tr>`;
}
