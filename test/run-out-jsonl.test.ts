// `--out jsonl=FILE` from a real short run through the compiled runner (needs `npm run build`):
// a start line, one line per 1 s interval (the drain's included), an end line with the exit code;
// the intervals are contiguous and their requests add up to the summary's. The same series is in
// summary.series. And the --out values the CLI refuses before anything starts (exit 2).

import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { runRun } from '../src/cli/run-command.js';
import type { RunInterval } from '../src/runner/run-series.js';
import { parseOutSpec } from '../src/runner/series/out-spec.js';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'evesim-out-jsonl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const SCENARIO = `
name: out-jsonl
seed: 5
duration: 6s
gracefulStop: 10s
target: embedded
arrival: { model: uniform, over: 1s }
groups:
  - name: a
    count: 4
    logs: { linesPerSec: 5 }
timeline:
  - { at: 3s, action: config-item, key: timer.config.interval, value: "60" }
thresholds:
  - errors.count == 0
`;

type Line = { type: 'start' | 'end' } & Record<string, unknown>;

describe('evesim run --out jsonl=FILE', () => {
  it('streams a start line, every interval of the run and the drain, and an end line; totals match the summary', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const file = join(dir, 'run.yaml');
    writeFileSync(file, SCENARIO);
    const out = join(dir, 'series.jsonl');
    const linesSeenDuringRun: number[] = [];
    const result = await run.runScenario({
      scenarioFile: file,
      workers: 2,
      stateDir: join(dir, 'state'),
      quiet: true,
      startEmbeddedController: ctl.startControllerInThread,
      out: () => {},
      err: () => {},
      outputs: [{ format: 'jsonl', target: out }],
      // Written as the run goes, not at the end.
      onProgress: () => void linesSeenDuringRun.push(readFileSync(out, 'utf8').split('\n').length - 1),
    });
    const s = result.summary!;
    expect(result.exitCode).toBe(0);
    expect(Math.max(...linesSeenDuringRun)).toBeGreaterThan(3);

    const text = readFileSync(out, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as Line);
    const start = lines[0]!;
    expect(start).toMatchObject({ type: 'start', scenario: 'out-jsonl', seed: 5, intervalMs: 1000, startedAt: s.startedAt });
    expect(start.version).toMatch(/^\d+\.\d+\.\d+/);
    const end = lines[lines.length - 1]!;
    expect(end).toMatchObject({ type: 'end', exitCode: 0, durationMs: s.durationMs, intervals: lines.length - 2 });
    const intervals = lines.slice(1, -1) as unknown as (RunInterval & { type: string })[];
    expect(intervals.every((i) => i.type === 'interval')).toBe(true);

    // Contiguous 1 s intervals from the start instant: the run phase's, then the drain's.
    intervals.forEach((i, k) => {
      expect(i.tMs).toBe(k * 1000);
      expect(i.durationMs).toBe(1000);
    });
    const phases = intervals.map((i) => i.phase);
    expect(phases.slice(0, 6)).toEqual(Array(6).fill('run'));
    expect(phases.lastIndexOf('run')).toBeLessThan(phases.indexOf('drain'));
    expect(phases).toContain('drain');

    // Every request of the summary, the run's and the drain's (kept apart), is in exactly one interval.
    const drainEndpoints = s.drain?.endpoints ?? {};
    for (const endpoint of new Set([...Object.keys(s.endpoints), ...Object.keys(drainEndpoints)])) {
      const inLines = intervals.reduce((n, i) => n + (i.endpoints[endpoint]?.requests ?? 0), 0);
      expect(inLines, endpoint).toBe((s.endpoints[endpoint]?.count ?? 0) + (drainEndpoints[endpoint]?.count ?? 0));
    }
    const withConfig = intervals.find((i) => (i.endpoints.config?.requests ?? 0) > 0)!;
    expect(withConfig.endpoints.config!.p99Ms).toBeGreaterThan(0);
    expect(Math.max(...intervals.map((i) => i.devices.onboarded ?? 0))).toBe(s.devices.onboarded);
    // Both workers' loop figures (a worker whose 'go' came late first reports in the second interval).
    expect([...new Set(intervals.flatMap((i) => i.workers.map((w) => w.worker)))].sort()).toEqual([0, 1]);
    expect(intervals.some((i) => i.workers.length === 2 && i.workers.every((w) => w.busy > 0 && w.loopMaxMs >= w.loopP99Ms))).toBe(true);
    // The embedded controller's side: it answered every request the devices counted (none failed
    // in transport here), sampled each second; its thread was busy some of the time.
    const answered = intervals.reduce((n, i) => n + (i.controller?.requests ?? 0), 0);
    expect(answered).toBeGreaterThan(0);
    const allCount = s.overall.count + (s.drain?.overall?.count ?? 0);
    expect(answered).toBeLessThanOrEqual(allCount);
    expect(answered).toBeGreaterThanOrEqual(allCount * 0.8);
    expect(intervals.some((i) => (i.controller?.busy ?? 0) > 0)).toBe(true);

    // The timeline action and the drain are marked where they happened.
    const events = intervals.flatMap((i) => i.events);
    expect(events).toContainEqual({ tMs: 3000, kind: 'action', label: 'config-item key=timer.config.interval value=60' });
    expect(events.find((e) => e.kind === 'drain')?.tMs).toBe(s.durationMs);

    // summary.series holds the same intervals (a short run: none merged).
    expect(s.series!.intervalMs).toBe(1000);
    expect(s.series!.intervals).toEqual(intervals.map(({ type: _type, ...i }) => i));
    expect(s.series!.events).toEqual(events);
  }, 120_000);

  it('refuses a bad --out before anything starts: unknown format, no file, unwritable directory (exit 2)', async () => {
    expect(parseOutSpec('jsonl=a/b.jsonl')).toEqual({ format: 'jsonl', target: 'a/b.jsonl' });
    const locked = join(dir, 'locked');
    mkdirSync(locked);
    chmodSync(locked, 0o500);
    const cases: [string, RegExp][] = [
      ['csv=out.csv', /^evesim: --out csv=out.csv: unknown format "csv"; known: jsonl \(e\.g\. --out jsonl=series\.jsonl\)$/],
      ['jsonl', /^evesim: --out jsonl: jsonl needs a file: jsonl=FILE/],
      ['jsonl=', /^evesim: --out jsonl=: jsonl needs a file/],
      [`jsonl=${join(dir, 'no-such-dir', 'x.jsonl')}`, /directory .*no-such-dir does not exist$/],
      [`jsonl=${dir}`, /is a directory; name a file$/],
    ];
    // root may write anywhere: the unwritable directory is checked only where permissions hold.
    if (process.getuid?.() !== 0) cases.push([`jsonl=${join(locked, 'x.jsonl')}`, /directory .*locked is not writable$/]);
    for (const [value, message] of cases) {
      const errors: string[] = [];
      vi.spyOn(console, 'error').mockImplementation((m: unknown) => void errors.push(String(m)));
      const code = await runRun({ scenario: 'no-such-scenario.yaml', out: ['jsonl=' + join(dir, 'ok.jsonl'), value], insecureSkipVerify: false, quiet: true });
      expect(code, value).toBe(2);
      expect(errors, value).toHaveLength(1);
      expect(errors[0], value).toMatch(message);
      vi.restoreAllMocks();
    }
  });
});
