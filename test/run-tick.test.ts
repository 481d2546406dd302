// `--tick` through the compiled CLI (`npm run build` first): smoke.yaml's fleet against the embedded
// controller on two workers, every exchange recorded. Timer-driven requests (config, metrics, log
// uploads, attestation, certs) must be due on their worker's grid — the moved time is the due time
// the latency counts from — and the two workers' grids must have different phases, so their batches
// do not reach the controller at the same instant. Requests that follow an answer at once (ping,
// register, uuid after certs) are due when the answer came, as without a tick.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../src/runner/summary-json.js';
import { readRecording, type RecordedExchange } from '../src/transport/record-reader.js';
import { CliProcess } from './fixtures/cli-process.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'evesim-tick-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const TICK = 50;
const TIMER_DRIVEN = new Set(['config', 'metrics', 'newlogs', 'attest', 'certs']);

/** Distance of `t` from the nearest point of the grid phase + k·TICK, ms. */
function offGrid(t: number, phase: number): number {
  const r = (((t - phase) % TICK) + TICK) % TICK;
  return Math.min(r, TICK - r);
}

describe('--tick', () => {
  it('puts timer-driven requests on each worker\'s grid, with a phase of its own, and says so in the summary', async () => {
    const summaryFile = join(work, 'summary.json');
    const recordDir = join(work, 'record');
    const args = ['run', 'scenarios/smoke.yaml', '--tick', `${TICK}ms`, '--workers', '2', '--duration', '45s', '--graceful-stop', '5s'];
    const run = new CliProcess([...args, '--metrics-linger', '0', '--record', recordDir, '--state-dir', join(work, 'state'), '--summary-json', summaryFile], repo);
    const code = await run.exited;
    const printed = [...run.out, ...run.err].join('\n');
    expect(code === 0 || code === 1, printed).toBe(true); // 45 s is too short for smoke.yaml's log thresholds

    const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
    expect(summary.generator.tickMs).toBe(TICK);
    expect(summary.devices.onboarded, printed).toBe(summary.devices.total);
    expect(printed).toContain(`wake-ups on a ${TICK}.0 ms tick`);

    const workers = readdirSync(recordDir).filter((d) => d.startsWith('worker-')).sort();
    expect(workers).toHaveLength(2);
    const phases: number[] = [];
    for (const w of workers) {
      const xs: RecordedExchange[] = [];
      for await (const x of readRecording(join(recordDir, w))) xs.push(x);
      const timed = xs.filter((x) => TIMER_DRIVEN.has(x.endpoint));
      expect(timed.length, w).toBeGreaterThan(100);
      // The phase is the first config request's residue; every timer-driven request must share it.
      const phase = ((timed[0]!.dueAt % TICK) + TICK) % TICK;
      const off = timed.filter((x) => offGrid(x.dueAt, phase) > 0.01).map((x) => `${x.endpoint} due ${x.dueAt}`);
      expect(off, `${w}: timer-driven requests off the ${TICK} ms grid (phase ${phase})`).toEqual([]);
      for (const x of timed) expect(x.latencyMs).toBeCloseTo(x.doneAt - x.dueAt, 6);
      phases.push(phase);
    }
    expect(Math.abs(phases[0]! - phases[1]!), 'both workers on the same phase').toBeGreaterThan(1);
  }, 180_000);
});
