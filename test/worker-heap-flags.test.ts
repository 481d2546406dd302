// A run sets its workers' V8 heap flags before the workers start (src/fleet/worker-heap-flags.ts):
// no memory reducer (its compacting mark-compacts stopped each fleet worker's event loop for
// 285–389 ms about 100 s after a large fleet had onboarded), and a fixed growth of the old
// generation between mark-compacts (V8 kept a slowly promoting worker's heap at about 1.1 × its
// live heap and marked all of it every 15–25 s). When the reducer fires is up to V8, so a test
// cannot wait for it to be missing; the growth can be seen: a worker that promotes steadily runs
// several times fewer mark-compacts with it. bench/README.md has the fleet traces.

import v8 from 'node:v8';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';
import { DEFAULT_WORKER_HEAP_GROWING_PERCENT, workerHeapFlags, workerHeapGrowingPercent } from '../src/fleet/worker-heap-flags.js';

const dir = mkdtempSync(join(tmpdir(), 'evesim-heap-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

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

describe('the workers\' heap growth setting', () => {
  it('is 50 % unless EVESIM_HEAP_GROWING_PERCENT gives a whole number from 0 to 1000', () => {
    expect(DEFAULT_WORKER_HEAP_GROWING_PERCENT).toBe(50);
    expect(workerHeapGrowingPercent(undefined)).toBe(50);
    expect(workerHeapGrowingPercent('')).toBe(50);
    expect(workerHeapGrowingPercent('0')).toBe(0);
    expect(workerHeapGrowingPercent(' 100 ')).toBe(100);
    expect(workerHeapGrowingPercent('1000')).toBe(1000);
    for (const bad of ['1.5', '-1', 'lots', '1001', '5%']) {
      expect(() => workerHeapGrowingPercent(bad)).toThrowError(new RegExp(`EVESIM_HEAP_GROWING_PERCENT=${bad.replace('.', '\\.')}: expected a whole number of percent from 0 \\(V8 chooses\\) to 1000`));
    }
  });

  it('sets the growth every time, 0 included, since the flag is process-wide', () => {
    expect(workerHeapFlags(50)).toEqual(['--no-memory-reducer', '--heap-growing-percent=50']);
    expect(workerHeapFlags(0)).toEqual(['--no-memory-reducer', '--heap-growing-percent=0']);
  });

  it('a bad value ends the run before anything starts, naming the variable', async () => {
    const { run } = await loadCompiledRunner();
    const file = join(dir, 'bad-env.yaml');
    writeFileSync(file, SCENARIO);
    vi.stubEnv('EVESIM_HEAP_GROWING_PERCENT', 'lots');
    const errs: string[] = [];
    const result = await run.runScenario({ scenarioFile: file, dryRun: true, out: () => {}, err: (t: string) => void errs.push(t) });
    expect(result.exitCode).toBe(2);
    expect(errs.join('')).toContain('EVESIM_HEAP_GROWING_PERCENT=lots: expected a whole number of percent');
  });
});

describe('fleet worker heaps', () => {
  it('are made without V8\'s memory reducer and with the set growth: the run sets both before its workers start', async () => {
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
    expect(flags.mock.calls).toContainEqual(['--heap-growing-percent=50']);
    // Already set when the run said it was preparing the devices, which it does once the workers are launched.
    expect(preparing).toBeGreaterThan(0);
  }, 60_000);

  // A child process sets the flags with the compiled setWorkerHeapFlags, then starts a worker that
  // holds about 40 MB and keeps each new object alive long enough for scavenges to promote it. The
  // worker counts its own mark-compacts. It promotes fast, so V8 left to itself lets the heap grow
  // a lot between them; a set growth of 10 % makes them several times as frequent. That a worker
  // made after the call follows the flag is what this shows (a fleet worker's 50 % is the other
  // way round: fewer than V8's own at a fleet's slow steady-state promotion, bench/README.md).
  const PROBE = `
    const { Worker } = require('node:worker_threads');
    import(process.argv[1]).then(({ setWorkerHeapFlags }) => {
      setWorkerHeapFlags(Number(process.argv[2]));
      const w = new Worker(\`
        const { PerformanceObserver, constants } = require('node:perf_hooks');
        const { parentPort } = require('node:worker_threads');
        let majors = 0;
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
        }).observe({ entryTypes: ['gc'] });
        const live = [];
        for (let i = 0; i < 400000; i++) live.push({ i, s: 'device ' + i, a: [i, i] });
        const ring = new Array(200000);
        let k = 0, rounds = 0;
        const step = () => {
          for (let i = 0; i < 4000; i++) ring[k++ % ring.length] = { k, a: [k, k, k] };
          if (++rounds < 600) setTimeout(step, 1);
          else setTimeout(() => parentPort.postMessage({ majors, live: live.length }), 50);
        };
        setTimeout(() => { majors = 0; step(); }, 50);
      \`, { eval: true });
      w.on('message', (m) => { console.log(JSON.stringify(m)); w.terminate(); });
    });
  `;
  const flagsModule = pathToFileURL(fileURLToPath(new URL('../dist/src/fleet/worker-heap-flags.js', import.meta.url))).href;

  /** The probe's mark-compacts with the growth set to `percent`; both probes run at once. */
  function majorGcs(percent: number): Promise<number> {
    return new Promise((resolve, reject) => {
      execFile(process.execPath, ['-e', PROBE, flagsModule, String(percent)], { encoding: 'utf8', timeout: 90_000 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`probe at ${percent} %: ${err.message}\n${stderr}`));
        else resolve((JSON.parse(stdout.trim()) as { majors: number }).majors);
      });
    });
  }

  it('follow the set growth when made after the call: 10 % marks several times as often as V8\'s own', async () => {
    const [own, tight] = await Promise.all([majorGcs(0), majorGcs(10)]);
    expect(tight, `10 %: ${tight} mark-compacts against ${own} with V8's own`).toBeGreaterThanOrEqual(3 * Math.max(own, 2));
  }, 120_000);
});
