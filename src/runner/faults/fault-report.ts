// The faults block of the end-of-run report: one line per fault with its kind, target, window,
// the devices it hit and the requests it changed.

import { formatDuration } from '../../scenario/parse-duration.js';
import type { FaultSummary } from './fault-summary.js';

export function faultReportLines(faults: readonly FaultSummary[] | undefined): string[] {
  if (!faults || faults.length === 0) return [];
  const lines = [`faults       ${faults.length} injected by the generator`];
  for (const f of faults) {
    const window = f.endMs === null ? `${formatDuration(f.startMs)} → end` : f.endMs === f.startMs ? `at ${formatDuration(f.startMs)}` : `${formatDuration(f.startMs)} → ${formatDuration(f.endMs)}`;
    const what = f.kind === 'power-loss' || f.kind === 'tpm-reset' ? `${f.devicesHit} of ${f.devices} devices hit` : `${f.devicesHit} of ${f.devices} devices hit, ${f.requests} requests affected`;
    const recovery = f.recovery === undefined ? '' : `; ${f.recovery.devices} of ${f.devicesHit} current again${f.recovery.devices > 0 ? `, the last ${formatDuration(Math.round(f.recovery.maxMs / 100) * 100)} after the end` : ''}`;
    lines.push(`  ${f.kind.padEnd(12)} ${f.target}${f.params ? ` (${f.params})` : ''}, ${window}: ${what}${recovery}`);
  }
  return lines;
}
