// State that survives a SIGKILL, end to end through the compiled CLI (dist/; `npm run build` first):
// - the standalone controller (`evesim controller`) killed with SIGKILL while devices run against
//   it and started again on the same state directory and ports: the devices carry on (no /register,
//   no /uuid, no 400/401/403 from the restarted controller), none is lost;
// - `evesim run` killed with SIGKILL and started again with the same seed and state directory:
//   its devices resume (no /register or /uuid at the controller, the same UUIDs) and report boot
//   reason POWER_FAIL with restart counter 1.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../src/runner/summary-json.js';
import { ControllerAdminClient } from '../src/servers/controller/controller-admin-client.js';
import { CliProcess, startCliController } from './fixtures/cli-process.js';

const work = mkdtempSync(join(tmpdir(), 'evesim-sigkill-'));
const started: CliProcess[] = [];
afterAll(async () => {
  for (const p of started) if (p.child.exitCode === null && p.child.signalCode === null) await p.killHard();
  rmSync(work, { recursive: true, force: true });
});

const DEVICES = 8;
const scenario = (name: string, duration: string) => `name: ${name}
seed: 12
duration: ${duration}
gracefulStop: 2s
target: embedded
arrival: {model: uniform, over: 2s}
groups:
  - name: edge
    count: ${DEVICES}
    configItems:
      timer.config.interval: 5
      timer.metric.interval: 5
`;

type Ctl = Awaited<ReturnType<typeof startCliController>>;

function runArgs(file: string, ctl: Ctl, stateDir: string, summary: string): string[] {
  return [
    'run', file, '--quiet', '--workers', '1',
    '--controller', ctl.url, '--root-ca', ctl.rootCaFile, '--onboard-cert', ctl.onboardCertFile, '--onboard-key', ctl.onboardKeyFile,
    '--state-dir', stateDir, '--summary-json', summary,
  ];
}

type Endpoints = Record<string, { requests: number; byStatus: Record<string, number> }>;
const endpointsOf = async (admin: ControllerAdminClient) => ((await admin.stats()) as { endpoints: Endpoints }).endpoints;
const requestsTo = (e: Endpoints, k: string) => e[k]?.requests ?? 0;

async function allDevices(admin: ControllerAdminClient): Promise<Record<string, unknown>[]> {
  const list = await admin.devices();
  return Promise.all(list.devices.map((d) => admin.device(String(d.uuid))));
}

/** Waits until `n` devices are attested (their integrity token issued), polling the admin API. */
async function attested(admin: ControllerAdminClient, n: number, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const list = await admin.devices();
    if (list.devices.filter((d) => d.attested === true).length >= n) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`fewer than ${n} devices attested within ${ms} ms`);
}

describe('state that survives SIGKILL', () => {
  it('a controller killed and restarted on its state directory loses no device', async () => {
    const ctlDir = join(work, 'ctl-a');
    let ctl = await startCliController(ctlDir, work);
    started.push(ctl.process);
    let admin = new ControllerAdminClient(ctl.adminUrl);
    const file = join(work, 'a.yaml');
    writeFileSync(file, scenario('controller-restart', '75s'));
    const summaryFile = join(work, 'a.json');
    const run = new CliProcess(runArgs(file, ctl, join(work, 'run-a'), summaryFile), work);
    started.push(run);

    await attested(admin, DEVICES, 60_000);
    const before = new Map((await allDevices(admin)).map((d) => [String(d.serial), String(d.uuid)]));
    await new Promise((r) => setTimeout(r, 500)); // the last registry writes of the moment committed
    await admin.close();
    await ctl.process.killHard();
    const restartedAt = Date.now();
    ctl = await startCliController(ctlDir, work, ctl.port, ctl.adminPort);
    started.push(ctl.process);
    admin = new ControllerAdminClient(ctl.adminUrl);
    try {
      expect(await run.exited).not.toBeNull();
      const after = await allDevices(admin);
      // The restarted controller knows every device under its UUID, and they carry on.
      expect(after).toHaveLength(DEVICES);
      for (const d of after) expect(before.get(String(d.serial))).toBe(d.uuid);
      const lost = after.filter((d) => Date.parse(String((d.counts as { lastSeenAt?: string }).lastSeenAt ?? 0)) < restartedAt);
      expect(lost.map((d) => d.serial)).toEqual([]);
      // Served by the restarted process: no registration again, no unknown-device answers, tokens kept.
      const e = await endpointsOf(admin);
      expect(requestsTo(e, 'register')).toBe(0);
      expect(requestsTo(e, 'uuid')).toBe(0);
      for (const [k, v] of Object.entries(e)) for (const s of ['400', '401', '403']) expect(`${k} ${s} ${v.byStatus[s] ?? 0}`).toBe(`${k} ${s} 0`);
      expect((e.config?.byStatus['200'] ?? 0) + (e.config?.byStatus['304'] ?? 0)).toBeGreaterThanOrEqual(DEVICES);
      const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
      expect(summary.devices.onboarded).toBe(DEVICES);
    } finally {
      await admin.close();
    }
  }, 180_000);

  it('a run killed and started again with the same seed and state directory resumes its devices', async () => {
    const ctl = await startCliController(join(work, 'ctl-b'), work);
    started.push(ctl.process);
    const admin = new ControllerAdminClient(ctl.adminUrl);
    try {
      const stateDir = join(work, 'run-b');
      const file = join(work, 'b.yaml');
      writeFileSync(file, scenario('run-restart', '120s'));
      const first = new CliProcess(runArgs(file, ctl, stateDir, join(work, 'b1.json')), work);
      started.push(first);
      await attested(admin, DEVICES, 60_000);
      await new Promise((r) => setTimeout(r, 500));
      await first.killHard();
      const uuids = new Set((await admin.devices()).devices.map((d) => String(d.uuid)));
      const e1 = await endpointsOf(admin);
      expect(requestsTo(e1, 'register')).toBe(DEVICES);

      writeFileSync(file, scenario('run-restart', '30s'));
      const second = new CliProcess(runArgs(file, ctl, stateDir, join(work, 'b2.json')), work);
      started.push(second);
      expect(await second.exited).not.toBeNull();
      expect(second.err.join('\n')).toContain(`${DEVICES} devices resumed from the state directory`);
      const e2 = await endpointsOf(admin);
      // Devices re-registered after the SIGKILL restart: none (and none asked for its UUID again).
      expect(requestsTo(e2, 'register') - requestsTo(e1, 'register')).toBe(0);
      expect(requestsTo(e2, 'uuid') - requestsTo(e1, 'uuid')).toBe(0);
      const after = await allDevices(admin);
      expect(new Set(after.map((d) => String(d.uuid)))).toEqual(uuids);
      for (const d of after) {
        expect(d.lastBootReason).toBe('BOOT_REASON_POWER_FAIL');
        expect(d.restartCounter).toBe(1);
      }
      const summary = JSON.parse(readFileSync(join(work, 'b2.json'), 'utf8')) as RunSummary;
      expect(summary.devices, JSON.stringify(summary.devices) + JSON.stringify(summary.endpoints)).toMatchObject({ onboarded: DEVICES });
    } finally {
      await admin.close();
    }
  }, 180_000);
});
