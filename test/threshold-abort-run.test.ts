// abortOnFail in a real run through the compiled runner (needs `npm run build`): a threshold that
// must fail ends a ten-minute run phase early, after its delayAbortEval; the drain and the report
// follow, the series marks the abort, and the exit code is the threshold failure's (1).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'evesim-abort-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Ten minutes: only the abort lets the run end within the test's timeout. Every device polls its
// configuration at once, so `config.count < 1` fails as soon as it is judged (from 3 s on).
const SCENARIO = `
name: abort-on-fail
seed: 9
duration: 10m
gracefulStop: 10s
target: embedded
arrival: { model: uniform, over: 1s }
groups:
  - name: a
    count: 3
thresholds:
  - onboarded.ratio == 1
  - { threshold: "config.count < 1", abortOnFail: true, delayAbortEval: 3s }
`;

describe('abortOnFail in a run', () => {
  it('ends the run phase early when the threshold fails, drains, reports which threshold and when, exits 1', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const file = join(dir, 'abort.yaml');
    writeFileSync(file, SCENARIO);
    // A safety net so a broken abort fails this test rather than hanging for ten minutes.
    const safety = new AbortController();
    const net = setTimeout(() => safety.abort(), 90_000);
    const report: string[] = [];
    const messages: string[] = [];
    const jsonl = join(dir, 'series.jsonl');
    const t0 = Date.now();
    const result = await run.runScenario({
      scenarioFile: file,
      workers: 1,
      stateDir: join(dir, 'state'),
      quiet: true,
      startEmbeddedController: ctl.startControllerInThread,
      out: (t) => void report.push(t),
      err: (t) => void messages.push(t),
      endRunPhase: safety.signal,
      outputs: [{ format: 'jsonl', target: jsonl }],
    });
    clearTimeout(net);
    expect(safety.signal.aborted, 'the safety net ended the run: abortOnFail did not').toBe(false);
    const s = result.summary!;
    expect(result.exitCode).toBe(1);
    expect(s.exitCode).toBe(1);
    // Judged from 3 s on, at the end of each closed interval.
    const aborting = s.thresholds[1]!;
    expect(aborting).toMatchObject({ source: 'config.count < 1', status: 'failed', passed: false });
    expect(aborting.abortedRun!.tMs).toBeGreaterThanOrEqual(3000);
    expect(aborting.abortedRun!.tMs).toBeLessThan(30_000);
    expect(aborting.actual).toBeGreaterThanOrEqual(1);
    expect(aborting.detail).toContain(`at ${(aborting.abortedRun!.tMs / 1000).toFixed(1)} s: aborted the run (abortOnFail)`);
    expect(s.thresholds[0]).toMatchObject({ status: 'passed' });
    // The run phase ended about then (the interval closes ~1.5 s after its end), not after ten minutes.
    expect(s.durationMs).toBeGreaterThanOrEqual(aborting.abortedRun!.tMs);
    expect(s.durationMs).toBeLessThan(aborting.abortedRun!.tMs + 5000);
    expect(Date.now() - t0).toBeLessThan(80_000);
    // The drain followed, and the report says which threshold aborted the run.
    expect(s.drain?.gracefulStopMs).toBe(10_000);
    expect(report.join('')).toMatch(/config\.count < 1 .*aborted the run \(abortOnFail\)/);
    expect(messages.join('')).toContain('threshold "config.count < 1" failed at');
    // The series marks the abort, then the drain; the JSONL end line names the threshold.
    const abortEvent = s.series!.events.find((e) => e.kind === 'abort');
    expect(abortEvent).toMatchObject({ tMs: aborting.abortedRun!.tMs });
    expect(abortEvent!.label).toContain('config.count < 1');
    const drainEvent = s.series!.events.find((e) => e.kind === 'drain')!;
    expect(drainEvent.tMs).toBe(s.durationMs);
    // The series runs to the early end at least (a drain this short has no interval of its own:
    // intervals that start at or after the end are the drain's).
    const last = s.series!.intervals[s.series!.intervals.length - 1]!;
    expect(last.tMs + last.durationMs).toBeGreaterThanOrEqual(s.durationMs);
    expect(s.series!.intervals.every((i) => i.phase === (i.tMs >= s.durationMs ? 'drain' : 'run'))).toBe(true);
    const lines = readFileSync(jsonl, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[lines.length - 1]).toMatchObject({ type: 'end', exitCode: 1, aborted: { threshold: 'config.count < 1', tMs: aborting.abortedRun!.tMs } });
  }, 120_000);
});
