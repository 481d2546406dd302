// Exact arithmetic on the sparse histograms (latency-histogram.ts) the series keeps per interval:
// a sparse histogram of a 1 s interval is a few hundred bytes where a full HDR histogram is ~95 KiB,
// so the series can keep one per endpoint per interval and still merge neighbours exactly.
// Percentiles go through one scratch histogram, so they are computed exactly as the summary's are.

import { addSparse, newLatencyHistogram, percentileMs, type LatencyHistogram, type SparseHistogram } from '../../fleet/latency-histogram.js';

export function emptySparse(): SparseHistogram {
  return { idx: new Uint32Array(0), counts: new Float64Array(0) };
}

/** The bucket-wise sum of two sparse histograms (both sorted by index, as toSparse makes them). */
export function sumSparse(a: SparseHistogram, b: SparseHistogram): SparseHistogram {
  if (b.idx.length === 0) return a;
  if (a.idx.length === 0) return b;
  const idx: number[] = [];
  const counts: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.idx.length || j < b.idx.length) {
    const ai = i < a.idx.length ? a.idx[i]! : Infinity;
    const bj = j < b.idx.length ? b.idx[j]! : Infinity;
    if (ai === bj) {
      idx.push(ai);
      counts.push(a.counts[i++]! + b.counts[j++]!);
    } else if (ai < bj) {
      idx.push(ai);
      counts.push(a.counts[i++]!);
    } else {
      idx.push(bj);
      counts.push(b.counts[j++]!);
    }
  }
  return { idx: Uint32Array.from(idx), counts: Float64Array.from(counts) };
}

export function sparseTotal(s: SparseHistogram): number {
  let n = 0;
  for (let i = 0; i < s.counts.length; i++) n += s.counts[i]!;
  return n;
}

let scratch: LatencyHistogram | undefined;

/** p50/p90/p99/max in ms, rounded as the summary rounds them; undefined when the histogram is empty. */
export function sparsePercentiles(s: SparseHistogram): { p50Ms: number; p90Ms: number; p99Ms: number; maxMs: number } | undefined {
  if (s.idx.length === 0) return undefined;
  scratch ??= newLatencyHistogram();
  scratch.reset();
  addSparse(scratch, s);
  return {
    p50Ms: round3(percentileMs(scratch, 50)),
    p90Ms: round3(percentileMs(scratch, 90)),
    p99Ms: round3(percentileMs(scratch, 99)),
    maxMs: round3(percentileMs(scratch, 100)),
  };
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
