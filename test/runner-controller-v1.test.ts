// A run against a real controller that serves API v1 on a port of its own (`evesim run --controller
// URL --controller-v1 V1URL`): its v1 devices reach the v1 port, register with the onboarding
// certificate as TLS client certificate and onboard; without the v1 address they would talk mutual
// TLS to the v2 port. Through the compiled code (dist/); needs `npm run build` first.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateOnboardingKit } from '../src/cli/onboarding-kit.js';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'evesim-ctl-v1-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCENARIO = `
name: controller-v1
seed: 17
duration: 60s
gracefulStop: 0s
target: embedded
groups:
  - name: old
    count: 2
    api: v1
  - name: new
    count: 1
`;

describe('--controller-v1', () => {
  it("sends the v1 devices to the controller's v1 address and the v2 ones to its v2 address", async () => {
    const { run, ctl } = await loadCompiledRunner();
    const kit = loadOrCreateOnboardingKit(join(dir, 'controller'));
    const controller = await ctl.startControllerInThread({ stateDir: join(dir, 'controller'), onboardingCaPems: [readFileSync(kit.caFile, 'utf8')] });
    try {
      expect(controller.v1Url).toBeDefined();
      expect(controller.v1Url).not.toBe(controller.url);
      const rootCaFile = join(dir, 'root.pem');
      writeFileSync(rootCaFile, controller.rootCaPem);
      const file = join(dir, 'v1.yaml');
      writeFileSync(file, SCENARIO);
      const end = new AbortController();
      let err = '';
      const result = await run.runScenario({
        scenarioFile: file,
        workers: 1,
        stateDir: join(dir, 'state'),
        controller: { url: controller.url, v1Url: controller.v1Url!, rootCaFile, onboardCertFile: kit.certFile, onboardKeyFile: kit.keyFile, insecure: false },
        controllerAdmin: controller.admin,
        quiet: true,
        out: () => {},
        err: (t) => (err += t),
        endRunPhase: end.signal,
        onProgress: (agg) => {
          if (agg.onboardedEver() >= 3) end.abort();
        },
      });
      expect(err).not.toMatch(/error/i);
      expect([result.exitCode, result.summary?.devices.onboarded]).toEqual([0, 3]);
      const byApi = result.summary!.byApi!;
      expect(byApi.v1!.devices).toEqual({ total: 2, onboarded: 2 });
      expect(byApi.v1!.endpoints.register!.count).toBe(2);
      expect(byApi.v1!.endpoints.register!.errors).toBe(0);
      expect(byApi.v2!.endpoints.register!.count).toBe(1);
      expect(result.summary!.connections!.v1!.devices).toBe(2);
    } finally {
      await controller.stop();
    }
  }, 90_000);
});
