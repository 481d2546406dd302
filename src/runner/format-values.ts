// Measured values as people read them (report lines, threshold details). A leaf: the core report
// and thresholds and the capabilities' report lines all use it, and the capabilities may not
// import the core files that read their registry.

import type { ThresholdValueKind } from '../scenario/threshold-kinds.js';

/** A measured or bound value as people read it: 312.4ms, 0.05%, 48.2/s, 12. */
export function formatThresholdValue(kind: ThresholdValueKind, v: number): string {
  switch (kind) {
    case 'latency-ms':
      return `${formatMs(v)}ms`;
    case 'count':
      return Number.isInteger(v) ? String(v) : v.toFixed(2);
    case 'per-second':
      return `${trimNumber(v, 2)}/s`;
    case 'fraction':
      return `${trimNumber(v * 100, 3)}%`;
  }
}

export function formatMs(v: number): string {
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

function trimNumber(v: number, decimals: number): string {
  return String(Number(v.toFixed(decimals)));
}
