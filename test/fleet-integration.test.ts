// Integration: a fleet of 50 devices against the embedded controller in one run, through the
// compiled code (piscina starts dist/workers/fleet-worker.js). Every v2 endpoint is exercised, the
// controller's own per-endpoint counts equal what the devices recorded, and nothing unexpected fails.
// Needs `npm run build` first (npm test does it through the pretest script).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../src/runner/summary-json.js';
import type { FleetAggregate } from '../src/runner/aggregate.js';
import type { RequestEndpointKey as EndpointKey } from '../src/device/ports.js';
import type { ControllerAdminClient } from '../src/servers/controller/controller-admin-client.js';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'evesim-integration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Devices learn the fast timers from their first accepted config (the poll before attestation is
// answered 403, as for real EVE). The duration is only an upper bound: the run phase ends
// (endRunPhase) once every device is onboarded and has sent a flow log (fleetIsBusy below), so a
// loaded machine gets more time instead of a failure. The graceful stop is a bound too: it ends as
// soon as every queue is delivered.
const SCENARIO = `
name: integration-50
seed: 4242
duration: 240s
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
  # Legacy bundles are not compressed and a device keeps at most 32 KiB of log files in memory:
  # low rates keep a run that a loaded machine stretches to the 240 s bound under that limit.
  - name: legacy
    count: 10
    logs: { format: legacy, linesPerSec: 0.5 }
    flowlog: { interval: 10s }
    appStep: 1s
    apps:
      - { name: web, logLinesPerSec: 0.25 }
    configItems:
      timer.config.interval: 10
      timer.metric.interval: 10
      newlog.allow.fastupload: true
thresholds:
  - onboarded.ratio == 1
`;

const V2_ENDPOINTS = ['ping', 'certs', 'register', 'uuid', 'attest', 'config', 'info', 'metrics', 'logs', 'newlogs', 'applogs', 'appnewlogs', 'flowlog'];
/** Delivered by the graceful stop (EVE's first upload tick is 90 s away): not watched while running. */
const LOG_ENDPOINTS = new Set(['logs', 'newlogs', 'applogs', 'appnewlogs']);

/**
 * Every device is onboarded, every endpoint but the log ones was used, and the controller has a flow
 * log from every device. A device sends a flow log only once an app of its has run for the 10 s
 * flow-log interval, so by then every device has device lines (written from its start) and app
 * lines: the graceful stop closes those files and delivers them (logs and applogs from the legacy
 * group, newlogs and appnewlogs from the current one).
 */
async function fleetIsBusy(aggregate: FleetAggregate, admin: ControllerAdminClient, withFlowLog: Set<string>): Promise<boolean> {
  if (aggregate.onboardedEver() !== 50 || (aggregate.endpoints.get('flowlog')?.count ?? 0) < 50) return false;
  if (!V2_ENDPOINTS.every((e) => LOG_ENDPOINTS.has(e) || (aggregate.endpoints.get(e as EndpointKey)?.count ?? 0) > 0)) return false;
  const { devices } = await admin.devices({ limit: 1000 });
  for (const { uuid } of devices as { uuid: string }[]) {
    if (withFlowLog.has(uuid)) continue;
    const detail = (await admin.device(uuid)) as { counts: { endpoints: Record<string, { requests: number }> } };
    if ((detail.counts.endpoints.flowlog?.requests ?? 0) > 0) withFlowLog.add(uuid);
  }
  return devices.length === 50 && withFlowLog.size === 50;
}

describe('a 50-device fleet against the embedded controller', () => {
  it('exercises every v2 endpoint, and the controller counts what the devices sent', async () => {
    const {
      run: { runScenario },
      ctl: { startControllerInThread },
    } = await loadCompiledRunner();

    const file = join(dir, 'integration.yaml');
    writeFileSync(file, SCENARIO);
    let controllerStats: Record<string, unknown> | undefined;
    const summaryJson = join(dir, 'summary.json');
    let admin: ControllerAdminClient | undefined;
    const end = new AbortController();
    let checking = false;
    const withFlowLog = new Set<string>();
    let conditionMet = false;
    const { exitCode } = await runScenario({
      endRunPhase: end.signal,
      // One look at the controller's devices at a time; a failed look is tried on the next delta.
      onProgress: (aggregate) => {
        if (end.signal.aborted || checking || !admin) return;
        checking = true;
        fleetIsBusy(aggregate, admin, withFlowLog)
          .then((busy) => {
            if (busy && !end.signal.aborted) {
              conditionMet = true;
              end.abort();
            }
          })
          .catch((e: unknown) => console.error('fleetIsBusy:', e))
          .finally(() => (checking = false));
      },
      scenarioFile: file,
      stateDir: join(dir, 'state'),
      summaryJson,
      quiet: true,
      out: () => {},
      err: () => {},
      // The runner stops the controller at the end; read its counts just before.
      startEmbeddedController: async (opts) => {
        const c = await startControllerInThread(opts);
        admin = c.admin;
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
    expect(conditionMet, 'the run phase reached its 240 s bound before every device was onboarded and had sent a flow log').toBe(true);

    expect(exitCode).toBe(0);
    expect(s.devices.total).toBe(50);
    expect(s.devices.onboarded).toBe(50);
    // Run and drain together (the drain's requests are reported apart: log files go only in it here).
    const both = (e: string) => ({ count: (s.endpoints[e]?.count ?? 0) + (s.drain?.endpoints?.[e]?.count ?? 0), byStatus: addCounts(s.endpoints[e]?.byStatus, s.drain?.endpoints?.[e]?.byStatus) });
    for (const e of V2_ENDPOINTS) expect(both(e).count, `${e} requests`).toBeGreaterThan(0);
    // Nothing failed that EVE would not expect (the config poll before attestation is 'expected').
    expect(s.overall.errors).toBe(0);
    expect(s.drain?.overall?.errors ?? 0).toBe(0);
    expect(s.findings.total).toBe(0);
    expect(s.undelivered.total).toBe(0);

    // The controller's per-endpoint request counts equal the devices' (every request got an answer).
    const ctl = (controllerStats as { endpoints: Record<string, { requests: number; byStatus: Record<string, number> }> }).endpoints;
    for (const e of V2_ENDPOINTS) {
      const sent = both(e);
      expect(ctl[e]?.requests, `controller count for ${e}`).toBe(sent.count);
      expect(ctl[e]?.byStatus, `controller statuses for ${e}`).toEqual(sent.byStatus);
    }
  }, 360_000);
});

function addCounts(a: Record<string, number> = {}, b: Record<string, number> = {}): Record<string, number> {
  const out: Record<string, number> = { ...a };
  for (const [k, n] of Object.entries(b)) out[k] = (out[k] ?? 0) + n;
  return out;
}
