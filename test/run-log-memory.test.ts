// `--log-memory` through the compiled CLI (`npm run build` first): smoke.yaml's fleet against the
// embedded controller, cut off from it (a partition fault) from 80 s on. A device closes its first
// log files at its first upload tick, 90 s after it boots, and cannot deliver them, so at the
// memory sample (100 s, the end of the run phase) every device holds waiting files. With the
// default budget part of them is in memory; with `--log-memory 0` all of them wait in the worker's
// spill file. Both runs go side by side (they spend most of their time waiting).

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../src/runner/summary-json.js';
import { CliProcess } from './fixtures/cli-process.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'evesim-logmem-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** One run; its summary and everything it printed. */
async function run(name: string, extra: string[]): Promise<{ summary: RunSummary; printed: string; stateDir: string }> {
  const summaryFile = join(work, `${name}.json`);
  const stateDir = join(work, name);
  const args = ['run', 'scenarios/smoke.yaml', ...extra, '--workers', '1', '--duration', '100s', '--graceful-stop', '5s', '--fault', 'partition at=80s for=60s'];
  const p = new CliProcess([...args, '--metrics-linger', '0', '--state-dir', stateDir, '--summary-json', summaryFile], repo);
  const code = await p.exited;
  const printed = [...p.out, ...p.err].join('\n');
  expect(code, printed).toBe(1); // the partition fails smoke.yaml's thresholds; anything else is a problem
  return { summary: JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary, printed, stateDir };
}

describe('--log-memory', () => {
  it('0 keeps every waiting log file on disk, where the default holds some in memory; the summary says how much', async () => {
    const [byDefault, zero] = await Promise.all([run('default', []), run('zero', ['--log-memory', '0'])]);
    const d = byDefault.summary.generator.workers[0]!.atMemorySample!;
    const z = zero.summary.generator.workers[0]!.atMemorySample!;
    expect(d.logFilesKeptKiB!, byDefault.printed).toBeGreaterThan(0);
    expect(d.logFilesInMemoryKiB!, byDefault.printed).toBeGreaterThan(0);
    expect(z.logFilesKeptKiB!, zero.printed).toBeGreaterThan(0);
    expect(z.logFilesInMemoryKiB).toBe(0);
    // The same fleet, seed and fault: about the same files were waiting (the runs' clocks differ a
    // little, so their files may differ by a few lines), wherever they were kept.
    expect(Math.abs(z.logFilesKeptKiB! - d.logFilesKeptKiB!)).toBeLessThan(0.2 * d.logFilesKeptKiB!);
    // Still cut off in the drain: the files are counted undelivered, none lost silently, and the
    // spill is gone with the run.
    expect(zero.summary.undelivered.logs).toBeGreaterThan(0);
    expect(existsSync(join(zero.stateDir, 'log-spill')), 'the spill directory is removed at the end').toBe(false);
  }, 240_000);
});
