// Integration: a fleet of 50 devices against the embedded controller in one run, through the
// compiled code (piscina starts dist/workers/fleet-worker.js). Every v2 endpoint is exercised, the
// controller's own per-endpoint counts equal what the devices recorded, and nothing unexpected fails.
// Needs `npm run build` first (npm test does it through the pretest script).

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type * as RunModule from '../src/runner/run-scenario.js';
import type * as ControllerThreadModule from '../src/servers/controller/controller-thread.js';
import type { RunSummary } from '../src/runner/summary-json.js';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'evesim-integration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Devices learn the fast timers from their first accepted config (the poll before attestation is
// answered 403, as for real EVE), so the run is long enough for two config rounds and log uploads.
// (A fixed window: runScenario has no way yet to end the run phase once every endpoint was used.)
// The graceful stop is only a bound: it ends as soon as every queue is delivered, so it can leave
// a loaded machine plenty of room.
const SCENARIO = `
name: integration-50
seed: 4242
duration: 75s
gracefulStop: 120s
target: embedded
arrival: { model: uniform, over: 5s }
groups:
  - name: current
    count: 40
    logs: { format: newlogs, linesPerSec: 2 }
    flowlog: { interval: 10s }
    appStep: 1s
    apps:
      - { name: web, logLinesPerSec: 1, flowsPerMessage: 3 }
      - { name: db, logLinesPerSec: 0.5, flowsPerMessage: 2 }
    configItems:
      timer.config.interval: 10
      timer.metric.interval: 10
      timer.deviceinfo.interval: 30
      newlog.allow.fastupload: true
  - name: legacy
    count: 10
    logs: { format: legacy, linesPerSec: 2 }
    flowlog: { interval: 10s }
    appStep: 1s
    apps:
      - { name: web, logLinesPerSec: 1 }
    configItems:
      timer.config.interval: 10
      timer.metric.interval: 10
      newlog.allow.fastupload: true
thresholds:
  - onboarded.ratio == 1
`;

const V2_ENDPOINTS = ['ping', 'certs', 'register', 'uuid', 'attest', 'config', 'info', 'metrics', 'logs', 'newlogs', 'applogs', 'appnewlogs', 'flowlog'];

describe('a 50-device fleet against the embedded controller', () => {
  it('exercises every v2 endpoint, and the controller counts what the devices sent', async () => {
    const runFile = join(dist, 'src/runner/run-scenario.js');
    if (!existsSync(runFile)) throw new Error(`${runFile} is missing: run "npm run build" before this test`);
    const { runScenario } = (await import(runFile)) as typeof RunModule;
    const { startControllerInThread } = (await import(join(dist, 'src/servers/controller/controller-thread.js'))) as typeof ControllerThreadModule;

    const file = join(dir, 'integration.yaml');
    writeFileSync(file, SCENARIO);
    let controllerStats: Record<string, unknown> | undefined;
    const summaryJson = join(dir, 'summary.json');
    const { exitCode } = await runScenario({
      scenarioFile: file,
      stateDir: join(dir, 'state'),
      summaryJson,
      quiet: true,
      out: () => {},
      err: () => {},
      // The runner stops the controller at the end; read its counts just before.
      startEmbeddedController: async (opts) => {
        const c = await startControllerInThread(opts);
        return {
          ...c,
          stop: async () => {
            controllerStats = await c.admin.stats();
            await c.stop();
          },
        };
      },
    });
    const s = JSON.parse(readFileSync(summaryJson, 'utf8')) as RunSummary;

    expect(exitCode).toBe(0);
    expect(s.devices.total).toBe(50);
    expect(s.devices.onboarded).toBe(50);
    for (const e of V2_ENDPOINTS) expect(s.endpoints[e]?.count ?? 0, `${e} requests`).toBeGreaterThan(0);
    // Nothing failed that EVE would not expect (the config poll before attestation is 'expected').
    expect(s.overall.errors).toBe(0);
    expect(s.findings.total).toBe(0);
    expect(s.undelivered.total).toBe(0);

    // The controller's per-endpoint request counts equal the devices' (every request got an answer).
    const ctl = (controllerStats as { endpoints: Record<string, { requests: number; byStatus: Record<string, number> }> }).endpoints;
    for (const e of V2_ENDPOINTS) {
      const sent = s.endpoints[e]!;
      expect(ctl[e]?.requests, `controller count for ${e}`).toBe(sent.count);
      expect(ctl[e]?.byStatus, `controller statuses for ${e}`).toEqual(sent.byStatus);
    }
  }, 360_000);
});
