// End to end through the compiled code (piscina starts workers from dist/workers/fleet-worker.js,
// so the whole run uses dist/ to stay consistent): embedded controller in its thread, two fleet
// workers, metrics scraped mid-run, report, summary JSON and exit codes.
// Needs `npm run build` first (npm test does it through the pretest script).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';


const dir = mkdtempSync(join(tmpdir(), 'evesim-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A fixed 6 s window on purpose (not ended early with endRunPhase): this test checks that a run
// lasts its duration (durationMs below) with the timeline actions at 3 s and 4 s inside it. What
// must happen in it is every device's first request (certs, arrivals over 1 s), which leaves a
// loaded machine 5 s; the metrics scrape waits for its condition, not for a fixed time.
const SCENARIO = `
name: runner-e2e
seed: 11
duration: 6s
target: embedded
arrival:
  model: uniform
  over: 1s
groups:
  - name: a
    count: 4
    configItems:
      timer.config.interval: 5
  - name: b
    count: 2
    preRegistered: true
timeline:
  - at: 3s
    action: config-item
    group: a
    key: timer.metric.interval
    value: 20
  - at: 4s
    action: reboot
    group: b
thresholds:
  - devices.total == 6
  - certs.count >= 6
  - ping.count > 1000000
`;

describe('runScenario', () => {
  it('runs a small fleet end to end: metrics while running, report, summary JSON, exit 1 on a failed threshold', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const file = join(dir, 'e2e.yaml');
    writeFileSync(file, SCENARIO);
    const summaryFile = join(dir, 'summary.json');
    let outText = '';
    let errText = '';
    let scraped: string | undefined;
    // What /metrics shows once devices are at work: request counters, the devices gauge, both workers.
    const LIVE = [
      /evesim_requests_total\{api="v2",endpoint="certs",code="200",class="2xx"\} [1-9]/,
      /evesim_devices\{state="[a-z-]+"\} \d/,
      /evesim_worker_event_loop_lag_p99_seconds\{worker="1"\}/,
    ];
    const scrape = async (url: string) => {
      // Read /metrics until it shows devices at work, not once after a fixed 4 s (a loaded machine
      // may not be there yet). The server closes with the run, which ends the polling too.
      const end = Date.now() + 100_000;
      while (Date.now() < end) {
        try {
          const res = await request(url);
          scraped = await res.body.text();
        } catch {
          return;
        }
        if (LIVE.every((re) => re.test(scraped!))) return;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    let scraping: Promise<void> | undefined;
    const result = await run.runScenario({
      scenarioFile: file,
      workers: 2,
      metricsPort: 0,
      summaryJson: summaryFile,
      stateDir: join(dir, 'state'),
      quiet: true,
      startEmbeddedController: ctl.startControllerInThread,
      out: (t) => (outText += t),
      err: (t) => {
        errText += t;
        const m = /metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(t);
        if (m) scraping = scrape(m[1]!);
      },
    });
    await scraping;

    expect(result.exitCode).toBe(1);
    const s = result.summary!;
    expect(s.devices.total).toBe(6);
    expect(s.thresholds.map((t) => t.passed)).toEqual([true, true, false]);
    expect(s.endpoints.certs!.count).toBeGreaterThanOrEqual(6);
    // Overall is the sum of the endpoints.
    const sum = Object.values(s.endpoints).reduce((a, e) => a + e.count, 0);
    expect(s.overall.count).toBe(sum);
    expect(s.overall.p99_ms).toBeGreaterThan(0);
    expect(s.generator.workers.map((w) => w.worker).sort()).toEqual([0, 1]);
    // Each worker's longest stall is measured, and no stall is shorter than its p99.
    for (const w of s.generator.workers) expect(w.eventLoopLagMaxMs).toBeGreaterThanOrEqual(w.eventLoopLagP99Ms);
    // The whole machine's CPU over the run, every process counted (this one ran on it): a share of
    // the same cores as cpuPercent, so absent only where the process may not use every CPU listed.
    if (os.cpus().length === os.availableParallelism()) {
      expect(s.generator.machineCpuPercent).toBeGreaterThan(0);
      expect(s.generator.machineCpuPercent).toBeLessThanOrEqual(100);
    } else {
      expect(s.generator.machineCpuPercent).toBeUndefined();
    }
    expect(s.durationMs).toBeGreaterThanOrEqual(5900);
    expect(s.target).toBe('embedded');
    // The report went to `out`, the summary JSON to its file, equal to what was returned.
    expect(outText).toContain('runner-e2e');
    expect(outText).toContain('ping.count > 1000000');
    expect(JSON.parse(readFileSync(summaryFile, 'utf8'))).toEqual(JSON.parse(JSON.stringify(s)));
    expect(errText).toContain('created 6 device identities');
    // Scraped during the run: request counters and the devices gauge were live.
    expect(scraped).toMatch(LIVE[0]!);
    expect(scraped).toMatch(LIVE[1]!);
    expect(scraped).toMatch(LIVE[2]!);

    // Same seed again: identities come from the state directory, nothing is created.
    let errText2 = '';
    const again = await run.runScenario({
      scenarioFile: file,
      durationMs: 4000,
      workers: 1,
      stateDir: join(dir, 'state'),
      quiet: true,
      startEmbeddedController: ctl.startControllerInThread,
      out: () => {},
      err: (t) => (errText2 += t),
    });
    expect(again.summary!.devices.total).toBe(6);
    expect(errText2).not.toContain('created');
  }, 120_000);

  it('exits 2 on bad input, naming what was wrong', async () => {
    const { run } = await loadCompiledRunner();
    const errs: string[] = [];
    const common = { quiet: true, out: () => {}, err: (t: string) => errs.push(t), stateDir: join(dir, 'state') };

    expect((await run.runScenario({ ...common, scenarioFile: join(dir, 'missing.yaml') })).exitCode).toBe(2);
    expect(errs.pop()).toMatch(/missing\.yaml: cannot read the file/);

    const file = join(dir, 'ok.yaml');
    writeFileSync(file, SCENARIO);
    expect((await run.runScenario({ ...common, scenarioFile: file, workers: 0 })).exitCode).toBe(2);
    expect(errs.pop()).toMatch(/--workers: must be a whole number/);

    expect((await run.runScenario({ ...common, scenarioFile: file, summaryJson: join(dir, 'no/such/dir/s.json') })).exitCode).toBe(2);
    expect(errs.pop()).toMatch(/--summary-json .*does not exist or is not writable/);

    const res = await run.runScenario({
      ...common,
      scenarioFile: file,
      controller: {
        url: 'https://127.0.0.1:1',
        rootCaFile: join(dir, 'nope-ca.pem'),
        onboardCertFile: join(dir, 'nope.pem'),
        onboardKeyFile: join(dir, 'nope.key'),
        insecure: false,
      },
    });
    expect(res.exitCode).toBe(2);
    expect(errs.pop()).toMatch(/controller root CA .*nope-ca\.pem: cannot read \(ENOENT\)/);
  });
});
