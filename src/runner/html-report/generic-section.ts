// Any JSON section of a summary as readable HTML, without knowing its fields: the attestation and
// LPS outcomes (and the finding examples) change as those parts grow, and the report should show
// what a summary holds rather than what this file knew of when it was written. Counters become
// key/value tables, lists of records become tables with one column per field, nested records become
// titled subsections. Pure; every key and value escaped.

import { escapeHtml } from './html-escape.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A record as subsections and key/value tables; `depth` picks the heading level (h3 at 0). */
export function renderGeneric(value: unknown, depth = 0): string {
  const v = value as Json;
  if (isRecord(v)) {
    const entries = Object.entries(v);
    if (entries.length === 0) return '<p class="muted">none</p>';
    const scalars = entries.filter(([, x]) => !isRecord(x) && !isRecordList(x));
    const nested = entries.filter(([, x]) => isRecord(x) || isRecordList(x));
    const out: string[] = [];
    if (scalars.length > 0) out.push(keyValueTable(scalars));
    const h = `h${Math.min(4 + depth, 6)}`;
    for (const [k, x] of nested) {
      out.push(`<div class="generic-sub"><${h}>${escapeHtml(humanize(k))}</${h}>${isRecordList(x) ? recordTable(x) : renderGeneric(x, depth + 1)}</div>`);
    }
    return out.join('\n');
  }
  if (isRecordList(v)) return recordTable(v);
  return `<p>${escapeHtml(inlineText(v))}</p>`;
}

/** A value in one line of text: records as "key: value, …", lists comma-separated. */
export function inlineText(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.length === 0 ? '—' : v.map(inlineText).join(', ');
  const entries = Object.entries(v as Record<string, unknown>);
  return entries.length === 0 ? '—' : entries.map(([k, x]) => `${k}: ${inlineText(x)}`).join(', ');
}

/** Field names as words: byLastCode → "by last code", p50_ms → "p50 ms"; keys that are data
 *  (codes such as NONCE_MISMATCH, reasons such as bad-signature) stay as they are. */
export function humanize(key: string): string {
  if (!/^[a-z][a-z0-9]*([A-Z][a-z0-9]*|_[a-z0-9]+)+$/.test(key)) return key;
  return key.replace(/_/g, ' ').replace(/([a-z0-9])([A-Z])/g, (_, a: string, b: string) => `${a} ${b.toLowerCase()}`);
}

export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return String(v);
  return String(Number(v.toFixed(Math.abs(v) >= 100 ? 1 : 3)));
}

function keyValueTable(entries: [string, Json][]): string {
  const rows = entries.map(([k, x]) => `<tr><th scope="row">${escapeHtml(humanize(k))}</th><td class="num">${escapeHtml(inlineText(x))}</td></tr>`);
  return `<table class="kv">${rows.join('')}</table>`;
}

function recordTable(list: { [k: string]: Json }[]): string {
  const columns: string[] = [];
  for (const r of list) for (const k of Object.keys(r)) if (!columns.includes(k)) columns.push(k);
  const head = columns.map((c) => `<th>${escapeHtml(humanize(c))}</th>`).join('');
  const body = list.map((r) => `<tr>${columns.map((c) => `<td>${escapeHtml(inlineText(r[c]))}</td>`).join('')}</tr>`).join('');
  return `<table class="grid"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

function isRecord(v: unknown): v is { [k: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isRecordList(v: unknown): v is { [k: string]: Json }[] {
  return Array.isArray(v) && v.length > 0 && v.every(isRecord);
}
