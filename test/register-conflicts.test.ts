// Two generators against one controller: with their own state directories each makes its own fleet
// id, so their serials never collide and every device onboards; given the same --fleet-id (and
// seed) they name the same serials with other device keys, the controller answers /register 409,
// and the report and summary say so with the likely cause (register-conflicts.ts). The runs go
// through the compiled code (dist/; `npm run build` first).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateOnboardingKit } from '../src/cli/onboarding-kit.js';
import { emptyEndpointStats } from '../src/runner/endpoint-stats.js';
import { LIKELY_CAUSE, registerConflictLine, registerConflicts } from '../src/runner/register-conflicts.js';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'evesim-conflicts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCENARIO = `name: conflicts
seed: 77
duration: 8s
gracefulStop: 0s
target: embedded
arrival: {model: uniform, over: 1s}
groups:
  - name: edge
    count: 4
`;

describe('register conflicts', () => {
  it('are named when 409 answers reach half the devices, not before', () => {
    const run = (n409: number) => ({ endpoints: { register: { ...emptyEndpointStats(), byStatus: { '201': 1, '409': n409 } } }, devices: { total: 10 } });
    expect(registerConflicts(run(4))).toBeUndefined();
    const c = registerConflicts(run(5))!;
    expect(c).toEqual({ conflicts: 5, devices: 10, cause: LIKELY_CAUSE });
    expect(registerConflictLine(c)).toContain('register answered 409 ×5 for 10 devices: the controller already knows these serials');
    expect(registerConflicts({ endpoints: {}, devices: { total: 0 } })).toBeUndefined();
  });

  it('two state directories never collide; the same fleet id does, and the report says why', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const kit = loadOrCreateOnboardingKit(join(dir, 'controller'));
    const controller = await ctl.startControllerInThread({ stateDir: join(dir, 'controller'), onboardingCaPems: [readFileSync(kit.caFile, 'utf8')] });
    try {
      const rootCaFile = join(dir, 'root.pem');
      writeFileSync(rootCaFile, controller.rootCaPem);
      const file = join(dir, 'conflicts.yaml');
      writeFileSync(file, SCENARIO);
      const runOnce = async (stateDir: string, fleetId?: string) => {
        let out = '';
        const r = await run.runScenario({
          scenarioFile: file,
          workers: 1,
          stateDir: join(dir, stateDir),
          ...(fleetId !== undefined ? { fleetId } : {}),
          controller: { url: controller.url, rootCaFile, onboardCertFile: kit.certFile, onboardKeyFile: kit.keyFile, insecure: false },
          quiet: true,
          out: (t) => (out += t),
          err: () => {},
        });
        return { summary: r.summary!, out };
      };
      // Own state directories, own fleet ids: no conflict.
      for (const s of ['a', 'b']) {
        const { summary, out } = await runOnce(s);
        expect(summary.endpoints.register?.byStatus['201']).toBe(4);
        expect(summary.endpoints.register?.byStatus['409']).toBeUndefined();
        expect(summary.registerConflicts).toBeUndefined();
        expect(out).not.toContain('register answered 409');
      }
      // Two more state directories given one fleet id: the second meets the first's serials.
      expect((await runOnce('c', 'shared')).summary.endpoints.register?.byStatus['201']).toBe(4);
      const { summary, out } = await runOnce('d', 'shared');
      expect(summary.endpoints.register?.byStatus['409']).toBeGreaterThanOrEqual(4);
      expect(summary.registerConflicts).toMatchObject({ devices: 4, cause: LIKELY_CAUSE });
      expect(out).toContain('conflicts    register answered 409');
    } finally {
      await controller.stop();
    }
  }, 120_000);
});
