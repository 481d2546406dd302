// loop_lag and memory thresholds in a real run of the compiled CLI (its own process, so the RSS is
// the generator's and not the test runner's): bounds a generator cannot meet fail with the
// measured value, reasonable ones pass, and the summary carries the peak RSS they were judged on.
// Needs `npm run build` first.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../src/runner/summary-json.js';

const cli = fileURLToPath(new URL('../bin/evesim.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'evesim-genthr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCENARIO = `
name: generator-thresholds
seed: 3
duration: 4s
gracefulStop: 2s
target: embedded
arrival: { model: uniform, over: 1s }
groups:
  - name: kvm
    count: 2
thresholds:
  - memory.rss < 1MiB
  - memory.rss_per_device < 1KiB
  - memory.rss < 64GiB
  - loop_lag.p99 < 10s
  - loop_lag.p99 < 10s after 2s
  - { threshold: "loop_lag.p99 < 10s", abortOnFail: true }
`;

describe('generator thresholds in a real run', () => {
  it('fails the memory bounds no process meets, passes the others, judged on the summary\'s figures', () => {
    const file = join(dir, 'g.yaml');
    writeFileSync(file, SCENARIO);
    const summaryFile = join(dir, 'summary.json');
    const r = spawnSync(process.execPath, [cli, 'run', file, '--quiet', '--workers', '1', '--metrics-linger', '0', '--state-dir', join(dir, 'state'), '--summary-json', summaryFile], {
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(r.status, r.stdout + r.stderr).toBe(1);
    const s = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
    const peak = s.generator.rssPeakBytes!;
    // A Node process with a worker thread and an embedded controller: tens of MiB at least.
    expect(peak).toBeGreaterThan(20 * 2 ** 20);
    expect(peak).toBeLessThan(8 * 2 ** 30);
    expect(s.thresholds.map((t) => [t.source, t.status])).toEqual([
      ['memory.rss < 1MiB', 'failed'],
      ['memory.rss_per_device < 1KiB', 'failed'],
      ['memory.rss < 64GiB', 'passed'],
      ['loop_lag.p99 < 10s', 'passed'],
      ['loop_lag.p99 < 10s after 2s', 'passed'],
      ['loop_lag.p99 < 10s', 'passed'],
    ]);
    expect(s.thresholds[0]!.actual).toBe(peak);
    expect(s.thresholds[1]!.actual).toBe(peak / 2);
    expect(s.thresholds[3]!.actual).toBe(Math.max(...s.generator.workers.map((w) => w.eventLoopLagP99Ms)));
    // The window's figure is the worst worker's worst interval from 2 s on, as the series shows it.
    const fromSeries = s.series!.intervals.filter((i) => i.phase === 'run' && i.tMs >= 2000).flatMap((i) => i.workers.map((w) => w.loopP99Ms));
    expect(fromSeries.length).toBeGreaterThan(0);
    expect(s.thresholds[4]!.actual).toBeCloseTo(Math.max(...fromSeries), 0);
    expect(r.stdout).toMatch(/✗ memory\.rss < 1MiB\s+\d+\.\d MiB/);
    // The report's generator line shows the peak the memory thresholds were judged on.
    expect(r.stdout).toContain(`RSS peak ${(peak / 2 ** 20).toFixed(1)} MiB`);
  }, 120_000);
});
