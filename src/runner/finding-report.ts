// The report's lines about findings: one per kind, with its count and the first example, so the
// reason (a certificate that does not chain to the given root, an undocumented status) is in the
// report itself and the user need not read the source. Pure: summary → lines.

import type { RunSummary } from './summary-json.js';
import type { FindingExample } from './finding-examples.js';

/** Longest detail text shown on a report line (the summary JSON has it whole). */
const DETAIL_LIMIT = 240;

/** "  bad-certs ×30, e.g. device 4 (serial …) certs: chain: …", one line per kind that has an example. */
export function findingKindLines(s: Pick<RunSummary, 'findings'>): string[] {
  const examples = s.findings.examples ?? {};
  const kinds = Object.entries(s.findings.byKind).filter(([, n]) => n > 0);
  const width = Math.max(0, ...kinds.map(([k]) => k.length));
  const lines: string[] = [];
  for (const [kind, n] of kinds) {
    const first = examples[kind]?.[0];
    if (!first) continue;
    lines.push(`  ${kind.padEnd(width)}  ×${n}, e.g. ${describeExample(first)}`);
  }
  return lines;
}

export function describeExample(e: FindingExample): string {
  const who = `device ${e.device}${e.serial !== undefined ? ` (serial ${e.serial})` : ''}`;
  const about = [e.status !== undefined ? `HTTP ${e.status}` : '', e.requestId !== undefined ? `request ${e.requestId}` : ''].filter(Boolean).join(', ');
  const detail = e.detail.length > DETAIL_LIMIT ? `${e.detail.slice(0, DETAIL_LIMIT - 1)}…` : e.detail;
  return `${who} ${e.endpoint}${about ? ` (${about})` : ''}: ${detail}`;
}
