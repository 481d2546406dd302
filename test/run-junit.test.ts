// `evesim run --junit FILE` through the compiled CLI: a real (short) run against the embedded
// controller writes JUnit XML that parses, with one test case per threshold, the counts of tests,
// failures and skipped equal to the summary JSON of the same run, and a failed threshold's failure
// carrying the value that was measured. Needs `npm run build` first.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../src/runner/summary-json.js';
import { elementsNamed, parseXml } from './fixtures/parse-xml.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const cli = join(root, 'bin/evesim.js');
const dir = mkdtempSync(join(tmpdir(), 'evesim-junit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCENARIO = `
name: junit-check
seed: 5
duration: 3s
gracefulStop: 2s
arrival: { model: uniform, over: 500ms }
groups:
  - name: kvm
    count: 2
thresholds:
  - devices.total == 2
  - config.p99 < 1h
  - register.count > 1000000
`;

describe('evesim run --junit', () => {
  it('writes one test case per threshold; the failed one carries its measured value', () => {
    const scenario = join(dir, 'junit.yaml');
    writeFileSync(scenario, SCENARIO);
    const junit = join(dir, 'out.xml');
    const summaryFile = join(dir, 'summary.json');
    const r = spawnSync(
      process.execPath,
      [cli, 'run', scenario, '--quiet', '--workers', '1', '--state-dir', join(dir, 'state'), '--junit', junit, '--summary-json', summaryFile],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status, r.stderr).toBe(1); // the impossible threshold fails
    const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
    const doc = parseXml(readFileSync(junit, 'utf8'));
    expect(doc.name).toBe('testsuites');
    const [suite] = elementsNamed(doc, 'testsuite');
    const cases = elementsNamed(suite!, 'testcase');
    const count = (status: string) => summary.thresholds.filter((t) => t.status === status).length;
    expect(cases.map((c) => c.attrs.name)).toEqual(summary.thresholds.map((t) => t.source));
    expect(Number(suite!.attrs.tests)).toBe(summary.thresholds.length);
    expect(Number(suite!.attrs.failures)).toBe(count('failed'));
    expect(Number(suite!.attrs.skipped)).toBe(count('not-checked'));
    expect(Number(doc.attrs.failures)).toBe(1);
    expect(elementsNamed(suite!, 'failure')).toHaveLength(1);
    expect(elementsNamed(suite!, 'skipped')).toHaveLength(0);

    const failed = summary.thresholds.find((t) => t.status === 'failed')!;
    expect(failed.source).toBe('register.count > 1000000');
    expect(failed.actual).toBe(2); // each device registered once
    const failure = elementsNamed(cases[2]!, 'failure')[0]!;
    expect(failure.attrs.message).toBe(failed.detail);
    expect(failure.attrs.message).toContain('2');
    expect(failure.text).toBe(`register.count > 1000000: ${failed.detail}`);
    expect(elementsNamed(cases[0]!, 'failure')).toHaveLength(0);
    expect(elementsNamed(suite!, 'system-out')[0]!.text).toContain('register.count > 1000000');
  }, 90_000);
});
