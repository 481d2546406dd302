// Two shards of one fleet run at once against ONE `evesim controller` (the way a cluster runs:
// --controller with --controller-admin), the controller requiring pre-registration: each shard
// adds its devices to the controller's fleet (PATCH, so neither wipes the other's and every device
// registers), and the controller-side timeline action is applied once, by shard 0, reaching shard
// 1's devices too. A later run against the same controller starts from its scenario: its shard 0
// has the groups made again from their spec, so the first run's timeline change is gone. Through
// the compiled code (dist/); needs `npm run build` first.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateOnboardingKit } from '../src/cli/onboarding-kit.js';
import { identitySeed } from '../src/identity/fleet-id.js';
import { hardwareSerial } from '../src/identity/serials.js';
import type { ControllerAdminApi } from '../src/runner/controller-admin-api.js';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';


const dir = mkdtempSync(join(tmpdir(), 'evesim-shared-ctl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCENARIO = `
name: shared-controller
seed: 31
duration: 60s
gracefulStop: 0s
target: embedded
groups:
  - name: a
    count: 3
  - name: b
    count: 2
timeline:
  - at: 1s
    action: config-item
    group: a
    key: timer.metric.interval
    value: 77
thresholds:
  - register.count >= 1 per device
  - onboarded.count >= 100% of devices
`;

describe('shards sharing one evesim controller', () => {
  it('each adds its devices; shard 0 alone applies the controller-side action', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const kit = loadOrCreateOnboardingKit(join(dir, 'controller'));
    const controller = await ctl.startControllerInThread({
      stateDir: join(dir, 'controller'),
      onboardingCaPems: [readFileSync(kit.caFile, 'utf8')],
      requirePreRegistration: true,
    });
    try {
      const rootCaFile = join(dir, 'root.pem');
      writeFileSync(rootCaFile, controller.rootCaPem);
      const file = join(dir, 'shared.yaml');
      writeFileSync(file, SCENARIO);
      const admin = controller.admin;
      const counting = (calls: string[]): ControllerAdminApi => ({
        setFleet: (f) => (calls.push('setFleet'), admin.setFleet(f)),
        mergeFleet: (f) => (calls.push(f.replaceGroups === true ? 'mergeFleet replaceGroups' : 'mergeFleet'), admin.mergeFleet(f)),
        patchGroup: (n, p) => (calls.push('patchGroup'), admin.patchGroup(n, p).then((r) => ((patched = true), r))),
        setMaintenance: (e) => (calls.push('setMaintenance'), admin.setMaintenance(e)),
      });
      // Each shard's run phase ends once its devices are onboarded and (shard 0) the timeline's
      // config-item reached the controller: 60 s is only a bound, so a loaded machine cannot make
      // the run too short for its devices.
      let patched = false;
      const shardDevices = [3, 2];
      const ends = [new AbortController(), new AbortController()];
      const startAtMs = Date.now() + 6000;
      const calls: string[][] = [[], []];
      const errs = ['', ''];
      const results = await Promise.all(
        [0, 1].map((i) =>
          run.runScenario({
            scenarioFile: file,
            shard: { index: i, count: 2 },
            fleetId: 'cluster-1',
            startAtMs,
            workers: 1,
            stateDir: join(dir, `state-${i}`), // as on two machines
            controller: { url: controller.url, rootCaFile, onboardCertFile: kit.certFile, onboardKeyFile: kit.keyFile, insecure: false },
            controllerAdmin: counting(calls[i]!),
            quiet: true,
            out: () => {},
            err: (t) => (errs[i] += t),
            endRunPhase: ends[i]!.signal,
            onProgress: (agg) => {
              if (agg.onboardedEver() >= shardDevices[i]! && (i !== 0 || patched)) ends[i]!.abort();
            },
          }),
        ),
      );
      expect(calls).toEqual([['mergeFleet replaceGroups', 'patchGroup'], ['mergeFleet']]);
      expect(errs[1]).toContain('controller-side timeline actions are applied by shard 0 (this is shard 1/2)');
      expect(results.map((r) => [r.exitCode, r.summary?.devices.total, r.summary?.devices.onboarded])).toEqual([
        [0, 3, 3],
        [0, 2, 2],
      ]);
      const seed = identitySeed(31, 'cluster-1');
      const { devices } = await admin.devices({ limit: 100 });
      expect(devices.map((d) => String(d.serial)).sort()).toEqual([0, 1, 2, 3, 4].map((i) => hardwareSerial(seed, i)).sort());
      // Shard 1's device 1 (group a) is served the item shard 0 set on the shared group.
      const config = await admin.deviceConfig(hardwareSerial(seed, 1));
      expect(JSON.stringify(config.config)).toMatch(/timer\.metric\.interval.{0,20}77/);

      // The next run, shard 0 again (its devices 0, 2 and 4), without the timeline: its devices are
      // served the scenario's group as it is, not as the first run's timeline left it.
      writeFileSync(file, SCENARIO.replace(/timeline:[\s\S]*?thresholds:/, 'thresholds:'));
      const end = new AbortController();
      const again: string[] = [];
      let nextOut = '';
      const next = await run.runScenario({
        scenarioFile: file,
        shard: { index: 0, count: 2 },
        fleetId: 'cluster-1',
        workers: 1,
        stateDir: join(dir, 'state-0'),
        controller: { url: controller.url, rootCaFile, onboardCertFile: kit.certFile, onboardKeyFile: kit.keyFile, insecure: false },
        controllerAdmin: counting(again),
        quiet: true,
        out: (t) => (nextOut += t),
        err: (t) => (nextOut += t),
        endRunPhase: end.signal,
        onProgress: (agg) => {
          if (agg.onboardedEver() >= 3) end.abort();
        },
      });
      expect(again).toEqual(['mergeFleet replaceGroups']);
      expect(next.exitCode, nextOut).toBe(0);
      const served = await admin.deviceConfig(hardwareSerial(seed, 0));
      expect(JSON.stringify(served.config)).not.toMatch(/timer\.metric\.interval/);
    } finally {
      await controller.stop();
    }
  }, 90_000);
});
