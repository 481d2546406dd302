// What `npm start` runs, whole: scenarios/smoke.yaml through the compiled CLI (dist/; `npm run
// build` first, as the pretest script does) against the embedded controller, 50 devices for 90 s
// plus the drain. The README promises that it exits 0 with every threshold passed; a change that
// breaks any part of that (a threshold the run no longer meets, a figure moved to another section,
// a message left undelivered) fails here instead of on a newcomer's first command. Only the state
// directory and the summary file differ from `npm start`, so the test leaves the clone as it was.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../src/runner/summary-json.js';
import { CliProcess } from './fixtures/cli-process.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'evesim-npm-start-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm start (scenarios/smoke.yaml, embedded controller)', () => {
  it('exits 0 with every threshold passed, every device onboarded and nothing undelivered', async () => {
    const summaryFile = join(work, 'summary.json');
    const run = new CliProcess(['run', 'scenarios/smoke.yaml', '--state-dir', join(work, 'state'), '--summary-json', summaryFile], repo);
    const code = await run.exited;
    const printed = [...run.out, ...run.err].join('\n');
    expect(code, printed).toBe(0);

    const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
    const failed = summary.thresholds.filter((t) => !t.passed).map((t) => `${t.source}: ${t.detail ?? t.actual}`);
    expect(failed, printed).toEqual([]);
    // smoke.yaml's own list: losing thresholds would make the check above pass vacuously.
    expect(summary.thresholds.length).toBeGreaterThanOrEqual(19);
    expect(summary.devices.onboarded).toBe(summary.devices.total);
    expect(summary.undelivered.total).toBe(0);
    expect(summary.findings.total).toBe(0);
    // The report the README describes: the thresholds' verdict is printed.
    const n = summary.thresholds.length;
    expect(printed).toContain(`thresholds   ${n} of ${n} passed`);
  }, 240_000);
});
