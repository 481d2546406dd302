// runScenario's endRunPhase signal and onProgress hook, through the compiled runner (piscina starts
// dist/workers/fleet-worker.js; needs `npm run build` first): a run with a long duration ends once
// what the caller waits for has happened, the drain and summary follow as at the planned end.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';



const dir = mkdtempSync(join(tmpdir(), 'evesim-end-run-phase-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DURATION_MS = 600_000;
// Ten minutes: only ending the run phase early lets these tests finish within their timeouts.
const SCENARIO = `
name: end-run-phase
seed: 31
duration: 10m
gracefulStop: 30s
target: embedded
arrival: { model: uniform, over: 1s }
groups:
  - name: a
    count: 4
    logs: { linesPerSec: 3 }
thresholds:
  - onboarded.ratio == 1
`;

describe('runScenario endRunPhase', () => {
  it('ends the run phase once every device onboarded (onProgress), then drains and reports', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const file = join(dir, 'onboarded.yaml');
    writeFileSync(file, SCENARIO);
    const end = new AbortController();
    let progressCalls = 0;
    let onboardedWhenEnded: number | undefined;
    const t0 = Date.now();
    const result = await run.runScenario({
      scenarioFile: file,
      workers: 2,
      stateDir: join(dir, 'state'),
      quiet: true,
      startEmbeddedController: ctl.startControllerInThread,
      out: () => {},
      err: () => {},
      endRunPhase: end.signal,
      onProgress: (aggregate) => {
        progressCalls++;
        if (!end.signal.aborted && aggregate.onboardedEver() === 4) {
          onboardedWhenEnded = aggregate.onboardedEver();
          end.abort();
        }
      },
    });
    const tookMs = Date.now() - t0;
    expect(onboardedWhenEnded, 'onProgress never saw every device onboarded').toBe(4);
    expect(progressCalls).toBeGreaterThan(1);
    const s = result.summary!;
    expect(result.exitCode).toBe(0);
    expect(s.devices.onboarded).toBe(4);
    // The run phase lasted until the signal, not the scenario's ten minutes.
    expect(s.durationMs).toBeGreaterThan(0);
    expect(s.durationMs).toBeLessThan(DURATION_MS);
    expect(s.durationMs).toBeLessThanOrEqual(tookMs);
    expect(tookMs).toBeLessThan(150_000);
    // The graceful stop followed, as at the planned end: the devices' log lines were delivered in it
    // (the drain's requests, reported apart from the run's).
    expect(s.drain).toBeDefined();
    expect(s.drain!.gracefulStopMs).toBe(30_000);
    expect(s.drain!.complete).toBe(true);
    expect(s.undelivered.total).toBe(0);
    expect(s.drain!.endpoints?.newlogs?.count ?? 0).toBeGreaterThan(0);
  }, 180_000);

  it('a signal that fired before the run ends the run phase right at the start', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const file = join(dir, 'before.yaml');
    writeFileSync(file, SCENARIO);
    const end = new AbortController();
    end.abort();
    const t0 = Date.now();
    const result = await run.runScenario({
      scenarioFile: file,
      workers: 2,
      stateDir: join(dir, 'state'),
      quiet: true,
      startEmbeddedController: ctl.startControllerInThread,
      out: () => {},
      err: () => {},
      endRunPhase: end.signal,
    });
    const tookMs = Date.now() - t0;
    const s = result.summary!;
    expect(s.devices.total).toBe(4);
    // No run phase to speak of (the summary's floor is 1 ms), and the drain still ran.
    expect(s.durationMs).toBeLessThan(1000);
    expect(s.drain).toBeDefined();
    expect(s.drain!.complete).toBe(true);
    expect(tookMs).toBeLessThan(60_000);
  }, 120_000);
});
