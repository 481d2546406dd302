// What `evesim merge` refuses before combining anything: a file that is not a run summary or has no
// mergeable section, summaries of different scenarios, seeds, targets or thresholds, a shard given
// twice, and a missing shard when the shard count is known. Each refusal is one line naming the
// file and the field. Pure: parsed JSON in, checked summaries out.

import type { RunSummary } from './summary-json.js';
import { MERGEABLE_VERSION, sumEncodedHistograms, type EncodedHistograms, type MergeableSection } from './mergeable-summary.js';

/** A summary that passed the checks, with the file it came from. */
export interface ShardSummary {
  file: string;
  summary: RunSummary & { mergeable: MergeableSection };
}

/** Bad input: the message names the file and the field (exit 2). */
export class MergeRefused extends Error {}

/** Checks one parsed file: a run summary with a mergeable section this evesim reads. */
export function checkSummaryFile(file: string, data: unknown): ShardSummary {
  const s = data as Partial<RunSummary> | null;
  if (typeof s !== 'object' || s === null || Array.isArray(s)) throw new MergeRefused(`${file}: not an evesim run summary (not a JSON object)`);
  for (const field of ['scenario', 'endpoints', 'overall', 'devices', 'undelivered', 'findings'] as const) {
    if (s[field] === undefined) throw new MergeRefused(`${file}: not an evesim run summary (no "${field}" field)`);
  }
  const m = s.mergeable as Partial<MergeableSection> | undefined;
  if (typeof m !== 'object' || m === null) {
    throw new MergeRefused(`${file}: no "mergeable" section (written by an evesim without merge support): run the shard again with this evesim`);
  }
  if (m.version !== MERGEABLE_VERSION) {
    throw new MergeRefused(`${file}: mergeable.version is ${JSON.stringify(m.version)}; this evesim merges version ${MERGEABLE_VERSION}`);
  }
  for (const field of ['identity', 'histograms', 'thresholds', 'groups'] as const) {
    if (typeof m[field] !== 'object' || m[field] === null) throw new MergeRefused(`${file}: mergeable.${field} is missing`);
  }
  for (const field of ['startedAtMs', 'durationMs', 'rateSeconds'] as const) {
    if (typeof m[field] !== 'number' || !Number.isFinite(m[field])) throw new MergeRefused(`${file}: mergeable.${field} is not a number`);
  }
  const shard = m.identity!.shard;
  if (shard !== undefined) {
    const { index, count } = shard;
    if (!Number.isInteger(count) || count < 1 || !Number.isInteger(index) || index < 0 || index >= count) {
      throw new MergeRefused(`${file}: mergeable.identity.shard ${JSON.stringify(shard)} is not a shard i/n with 0 ≤ i < n`);
    }
  }
  checkHistograms(file, m.histograms!, '');
  for (const [api, h] of Object.entries(m.histograms!.byApi ?? {})) checkHistograms(file, h, `.byApi.${api}`);
  return { file, summary: s as ShardSummary['summary'] };
}

/** Every histogram decodes (a damaged one would otherwise surface as a library error mid-merge). */
function checkHistograms(file: string, h: Partial<EncodedHistograms>, where: string): void {
  const each: [string, unknown][] = [[`${where}.overall`, h.overall], ...Object.entries(h.endpoints ?? {}).map(([k, v]): [string, unknown] => [`${where}.endpoints["${k}"]`, v])];
  for (const [path, encoded] of each) {
    try {
      if (typeof encoded !== 'string') throw new Error('not a string');
      sumEncodedHistograms([encoded]);
    } catch (e) {
      throw new MergeRefused(`${file}: mergeable.histograms${path} is not an HDR histogram in compressed base64 (${e instanceof Error ? e.message : String(e)})`);
    }
  }
}

/** Checks the summaries belong to one fleet and, when the shard count is known, that all are there. */
export function checkShardSet(shards: readonly ShardSummary[]): void {
  if (shards.length === 0) throw new MergeRefused('no summary files given');
  const first = shards[0]!;
  const id0 = first.summary.mergeable.identity;
  for (const s of shards.slice(1)) {
    const id = s.summary.mergeable.identity;
    for (const field of ['scenarioFile', 'scenario', 'seed', 'target', 'fleetId'] as const) {
      if (id[field] !== id0[field]) {
        throw new MergeRefused(
          `${s.file}: mergeable.identity.${field} is ${JSON.stringify(id[field])} but ${first.file} has ${JSON.stringify(id0[field])}: not shards of one run`,
        );
      }
    }
    if (thresholdsKey(s) !== thresholdsKey(first)) {
      throw new MergeRefused(`${s.file}: mergeable.thresholds differ from those of ${first.file}: not shards of one scenario`);
    }
  }

  const sharded = shards.filter((s) => s.summary.mergeable.identity.shard !== undefined);
  if (sharded.length === 0) {
    if (shards.length > 1) {
      throw new MergeRefused(`${shards[1]!.file}: no mergeable.identity.shard, and neither has ${first.file}: both ran the whole fleet, merging would count it twice`);
    }
    return;
  }
  if (sharded.length < shards.length) {
    const whole = shards.find((s) => s.summary.mergeable.identity.shard === undefined)!;
    throw new MergeRefused(`${whole.file}: no mergeable.identity.shard (it ran the whole fleet) but ${sharded[0]!.file} is a shard`);
  }
  const n = sharded[0]!.summary.mergeable.identity.shard!.count;
  const seen = new Map<number, string>();
  for (const s of shards) {
    const shard = s.summary.mergeable.identity.shard!;
    if (shard.count !== n) {
      throw new MergeRefused(`${s.file}: mergeable.identity.shard is ${shard.index}/${shard.count} but ${sharded[0]!.file} is one of ${n} shards`);
    }
    const before = seen.get(shard.index);
    if (before !== undefined) throw new MergeRefused(`${s.file}: mergeable.identity.shard ${shard.index}/${n} again (also ${before})`);
    seen.set(shard.index, s.file);
  }
  const missing: string[] = [];
  for (let i = 0; i < n; i++) if (!seen.has(i)) missing.push(`${i}/${n}`);
  if (missing.length > 0) {
    throw new MergeRefused(`missing shard${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (mergeable.identity.shard): got ${[...seen.keys()].sort((a, b) => a - b).map((i) => `${i}/${n}`).join(', ')}`);
  }
}

/** The thresholds as written and parsed, without the per-device counts (which may be per shard). */
function thresholdsKey(s: ShardSummary): string {
  return JSON.stringify(s.summary.mergeable.thresholds, (key, value: unknown) => (key === 'devices' ? undefined : value));
}
