// The summary's `mergeable` section: what `evesim merge` needs besides the human-facing fields to
// combine the summaries of the shards of one fleet into the result one process would have given.
// Percentiles cannot be added, so every latency histogram a percentile of the summary comes from is
// carried whole, in HDR's compressed base64 encoding; LPS command times are nearest-rank over the
// commands, so their raw times are kept. Counters are exact integers in the human-facing fields
// and are summed from there. The scenario's thresholds and groups come along so the merge judges
// the thresholds without the scenario file (which may not be where the merge runs).

import hdr from 'hdr-histogram-js';
import { newLatencyHistogram, type LatencyHistogram } from '../fleet/latency-histogram.js';
import type { ApiLabel } from '../protocol/api-version.js';
import type { GroupSpec, ThresholdSpec } from '../scenario/scenario-types.js';
import type { SiteCommand } from './lps/lps-sites.js';

/** Bumped when the section changes in a way an older `evesim merge` would misread. */
export const MERGEABLE_VERSION = 1;

/** `--shard i/n`: this process ran part i (0..n-1) of a fleet split in n. */
export interface ShardOfFleet {
  index: number;
  count: number;
}

/** Encoded histograms of one set of endpoint figures (the run's, or one API's). */
export interface EncodedHistograms {
  /** Keyed like RunSummary.endpoints. */
  endpoints: Record<string, string>;
  /** The histogram of `overall`. */
  overall: string;
}

/** The groups as the thresholds' per-device bases count them (threshold-basis.ts). */
export type BasisGroup = Pick<GroupSpec, 'name' | 'count' | 'api' | 'tpmShare' | 'tampered'>;

/** The onboarding times of a run (fleet/onboarding-times.ts): encoded histograms and exact extremes, ms. */
export interface MergeableOnboarding {
  took: string;
  at: string;
  lastAtMs: number;
  maxTookMs: number;
}

export interface MergeableSection {
  version: number;
  identity: {
    scenario: string;
    scenarioFile: string;
    seed: number;
    target: string;
    /** `--fleet-id` (or the state directory's): shards of one fleet share it. */
    fleetId?: string;
    /** Absent: the process ran the whole fleet. */
    shard?: ShardOfFleet;
  };
  /** Onboarding times (onboarding-merge.ts); absent when no device onboarded and in older summaries. */
  onboarding?: MergeableOnboarding;
  /** Start (epoch ms) and measured run time, unrounded. */
  startedAtMs: number;
  durationMs: number;
  /** The seconds request rates are over (the run phase; the drain's requests are apart). */
  rateSeconds: number;
  /** `drain`: the drain's own requests (summary `drain.endpoints`), absent when it made none. */
  histograms: EncodedHistograms & { byApi?: Partial<Record<ApiLabel, EncodedHistograms>>; drain?: EncodedHistograms };
  /** LPS commands by name: how many were issued and the issue → acknowledgement times, ms. */
  lpsCommands?: Record<string, { issued: number; ackedMs: number[] }>;
  /** The scenario's thresholds as the loader resolved them (per-device bases counted). */
  thresholds: ThresholdSpec[];
  groups: BasisGroup[];
}

export function encodeHistogram(h: LatencyHistogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

/** Adds an encoded histogram into `into` (one built by newLatencyHistogram()). Throws on bad text. */
export function addEncodedHistogram(into: LatencyHistogram, encoded: string): void {
  // Without WebAssembly the library decodes into its JS histogram, the kind `into` is.
  const decoded = hdr.decodeFromCompressedBase64(encoded, 32, false) as unknown as LatencyHistogram;
  try {
    into.add(decoded);
  } finally {
    decoded.destroy();
  }
}

/** A new latency histogram holding the sum of the encoded ones. */
export function sumEncodedHistograms(encoded: readonly string[]): LatencyHistogram {
  const h = newLatencyHistogram();
  for (const e of encoded) addEncodedHistogram(h, e);
  return h;
}

export function encodeHistograms(endpoints: Iterable<[string, LatencyHistogram]>, overall: LatencyHistogram): EncodedHistograms {
  const out: Record<string, string> = {};
  for (const [k, h] of endpoints) out[k] = encodeHistogram(h);
  return { endpoints: out, overall: encodeHistogram(overall) };
}

/** The LPS command records as the section keeps them. */
export function lpsCommandTimes(commands: readonly Pick<SiteCommand, 'command' | 'issuedAt' | 'completedAt'>[]): NonNullable<MergeableSection['lpsCommands']> {
  const out: NonNullable<MergeableSection['lpsCommands']> = {};
  for (const c of commands) {
    const e = (out[c.command] ??= { issued: 0, ackedMs: [] });
    e.issued++;
    if (c.completedAt !== null) e.ackedMs.push(Math.max(0, c.completedAt - c.issuedAt));
  }
  return out;
}

/** Back to command records (issued at 0) for lps-summary.ts's commandLatency(). */
export function commandsOfTimes(times: NonNullable<MergeableSection['lpsCommands']>): { command: string; issuedAt: number; completedAt: number | null }[] {
  const out: { command: string; issuedAt: number; completedAt: number | null }[] = [];
  for (const [command, t] of Object.entries(times)) {
    for (const ms of t.ackedMs) out.push({ command, issuedAt: 0, completedAt: ms });
    for (let i = t.ackedMs.length; i < t.issued; i++) out.push({ command, issuedAt: 0, completedAt: null });
  }
  return out;
}
