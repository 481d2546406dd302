// `evesim merge SHARD.json… [--summary-json ALL.json] [--junit FILE]`: the summaries of a fleet's
// shards combined into one (runner/merge-summaries.ts), its thresholds judged on the merged fleet,
// the report printed as a run prints it. Exit codes as a run: 0 no threshold failed, 1 one did (or
// a shard's worker died), 2 bad input, in one line naming the file and the field.
import { readFileSync, writeFileSync } from 'node:fs';
import { renderJUnit } from '../runner/junit.js';
import { mergeSummaries, MergeRefused } from '../runner/merge-summaries.js';
import { renderReport } from '../runner/report-table.js';
import { summaryToJson, type RunSummary } from '../runner/summary-json.js';

export interface MergeArgs {
  summaries: string[];
  summaryJson?: string;
  junit?: string;
}

export interface MergeIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

const STD_IO: MergeIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

export function runMerge(a: MergeArgs, io: MergeIo = STD_IO): { exitCode: number; summary?: RunSummary } {
  const files: { file: string; data: unknown }[] = [];
  for (const file of a.summaries) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      io.err(`evesim merge: ${file}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
      return { exitCode: 2 };
    }
    try {
      files.push({ file, data: JSON.parse(text) as unknown });
    } catch (e) {
      io.err(`evesim merge: ${file}: not an evesim run summary (not JSON: ${(e as Error).message})\n`);
      return { exitCode: 2 };
    }
  }
  let merged: ReturnType<typeof mergeSummaries>;
  try {
    merged = mergeSummaries(files);
  } catch (e) {
    if (!(e instanceof MergeRefused)) throw e;
    io.err(`evesim merge: ${e.message}\n`);
    return { exitCode: 2 };
  }
  const { summary, shards, failedShards } = merged;
  const n = shards[0]!.summary.mergeable.identity.shard?.count;
  io.out(`evesim merge: ${n === undefined ? 'the whole fleet' : `${n} shard${n > 1 ? 's' : ''}`} of "${summary.scenario}" (seed ${summary.seed}): ${shards.map((s) => s.file).join(', ')}\n`);
  io.out(renderReport(summary));
  for (const f of failedShards) io.out(`evesim merge: ${f} ended 1 without a failed threshold (a worker died): the merge ends 1\n`);
  const writes: [string | undefined, () => string][] = [
    [a.summaryJson, () => summaryToJson(summary)],
    [a.junit, () => renderJUnit(summary)],
  ];
  for (const [file, text] of writes) {
    if (file === undefined) continue;
    try {
      writeFileSync(file, text());
    } catch (e) {
      io.err(`evesim merge: ${file}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
      return { exitCode: 2, summary };
    }
  }
  return { exitCode: summary.exitCode, summary };
}
