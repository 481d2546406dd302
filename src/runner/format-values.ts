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
    case 'bytes':
      return formatBytes(v);
  }
}

/** 812 B, 23.4 KiB, 512.0 MiB, 1.85 GiB. */
export function formatBytes(v: number): string {
  if (v >= 2 ** 30) return `${(v / 2 ** 30).toFixed(2)} GiB`;
  if (v >= 2 ** 20) return `${(v / 2 ** 20).toFixed(1)} MiB`;
  if (v >= 2 ** 10) return `${(v / 2 ** 10).toFixed(1)} KiB`;
  return `${Math.round(v)} B`;
}

export function formatMs(v: number): string {
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

function trimNumber(v: number, decimals: number): string {
  return String(Number(v.toFixed(decimals)));
}
