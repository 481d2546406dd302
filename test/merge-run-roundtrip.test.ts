// A real run's summary JSON (compiled code, embedded controller, two workers) merged on its own by
// the `evesim merge` command: the merge gives the same figures, thresholds and exit code as the
// run. Needs `npm run build` first (as runner-run-scenario.test.ts).

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../src/runner/summary-json.js';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const cli = join(root, 'bin/evesim.js');

const dir = mkdtempSync(join(tmpdir(), 'evesim-merge-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCENARIO = `
name: merge-roundtrip
seed: 21
duration: 4s
target: embedded
arrival:
  model: uniform
  over: 1s
groups:
  - name: a
    count: 3
  - name: b
    count: 2
    preRegistered: true
thresholds:
  - devices.total == 5
  - certs.count >= 1 per device
  - register.count >= 1 per device of a
  - config.p99 < 1h
  - all.max < 1h
`;

/** The summary without the section meant for the merge (its encodings may differ byte for byte). */
function figures(s: RunSummary): Omit<RunSummary, 'mergeable'> {
  const { mergeable: _, ...rest } = s;
  return rest;
}

describe('evesim merge of a real run', () => {
  it('merging the summary of a single run gives its figures, thresholds and exit code', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const file = join(dir, 'roundtrip.yaml');
    writeFileSync(file, SCENARIO);
    const summaryFile = join(dir, 'summary.json');
    const result = await run.runScenario({
      scenarioFile: file,
      workers: 2,
      summaryJson: summaryFile,
      stateDir: join(dir, 'state'),
      quiet: true,
      startEmbeddedController: ctl.startControllerInThread,
      out: () => {},
      err: () => {},
    });
    expect(result.exitCode).toBe(0);
    const original = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
    expect(original.mergeable!.version).toBe(1);
    expect(original.mergeable!.identity).toEqual({ scenario: 'merge-roundtrip', scenarioFile: file, seed: 21, target: 'embedded', fleetId: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(Object.keys(original.mergeable!.histograms.endpoints).sort()).toEqual(Object.keys(original.endpoints).sort());
    expect(original.thresholds.find((t) => t.source.startsWith('register'))!.perDevice!.devices).toBe(3);

    const merged = join(dir, 'merged.json');
    const junit = join(dir, 'merged.xml');
    const out = execFileSync(process.execPath, [cli, 'merge', summaryFile, '--summary-json', merged, '--junit', junit], { encoding: 'utf8' });
    expect(out).toContain(`evesim merge: the whole fleet of "merge-roundtrip" (seed 21): ${summaryFile}`);
    expect(out).toContain('certs.count >= 1 per device');
    const m = JSON.parse(readFileSync(merged, 'utf8')) as RunSummary;
    expect(figures(m)).toEqual(figures(original));
    expect(m.mergeable!.histograms.overall).toBeTypeOf('string');
    expect(readFileSync(junit, 'utf8')).toContain('tests="5" failures="0"');

    // The command's exit codes: 2 on bad input with one line naming the file and the field.
    const broken = join(dir, 'broken.json');
    const { mergeable: _, ...noSection } = original;
    writeFileSync(broken, JSON.stringify(noSection));
    const bad = spawnSync(process.execPath, [cli, 'merge', broken], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe(`evesim merge: ${broken}: no "mergeable" section (written by an evesim without merge support): run the shard again with this evesim\n`);
    // 1 when a threshold fails on the merge: the same summary with a bound it cannot meet.
    const strict = join(dir, 'strict.json');
    const tight = JSON.parse(JSON.stringify(original)) as RunSummary;
    tight.mergeable!.thresholds[0]!.value = 6;
    writeFileSync(strict, JSON.stringify(tight));
    expect(spawnSync(process.execPath, [cli, 'merge', strict], { encoding: 'utf8' }).status).toBe(1);
  }, 120_000);
});
