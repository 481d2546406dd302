// A run turns V8's memory reducer off before its workers start (src/fleet/worker-heap-flags.ts):
// its compacting mark-compacts stopped each fleet worker's event loop for 285–389 ms about 100 s
// after a large fleet had onboarded. When the reducer fires is up to V8 (10 to 40 s after an
// isolate goes quiet in trials, or never within a minute), so a test cannot wait for it to be
// missing; this one checks the flag is set, through the compiled runner, before any worker
// exists. bench/README.md ("The memory reducer's pause") has the traces that show its effect.

import v8 from 'node:v8';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'evesim-heap-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const SCENARIO = `
name: heap-flags
seed: 3
duration: 3s
target: embedded
arrival: { model: uniform, over: 1s }
groups:
  - name: a
    count: 2
`;

describe('fleet worker heaps', () => {
  it('are made without V8\'s memory reducer: the run sets --no-memory-reducer before its workers start', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const file = join(dir, 'run.yaml');
    writeFileSync(file, SCENARIO);
    // Not passed on: this test process keeps its own V8 settings.
    const flags = vi.spyOn(v8, 'setFlagsFromString').mockImplementation(() => undefined);
    let preparing = -1;
    const result = await run.runScenario({
      scenarioFile: file,
      workers: 1,
      stateDir: join(dir, 'state'),
      quiet: false,
      startEmbeddedController: ctl.startControllerInThread,
      out: () => {},
      // "preparing N devices on 1 worker" is written as the workers are launched.
      err: (line: string) => {
        if (preparing < 0 && line.includes('preparing')) preparing = flags.mock.calls.length;
      },
    });
    expect(result.exitCode).toBe(0);
    expect(flags.mock.calls).toContainEqual(['--no-memory-reducer']);
    // Already set when the run said it was preparing the devices, which it does once the workers are launched.
    expect(preparing).toBeGreaterThan(0);
  }, 60_000);
});
