// A sharded run end to end through the compiled code (dist/, as runner-run-scenario.test.ts):
// `--shard 1/2 --fleet-id ... --start-at T` runs exactly the odd fleet indices, registers them with
// the serials the fleet plan gives them, starts at T (the summary's startedAt), and the summary
// says which shard it was; a --start-at already past is exit 2 before anything starts.
// Needs `npm run build` first.

import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { identitySeed } from '../src/identity/fleet-id.js';
import { hardwareSerial } from '../src/identity/serials.js';
import { startInstant } from '../src/runner/phases/run-timeline.js';
import type * as RunModule from '../src/runner/run-scenario.js';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';


const dir = mkdtempSync(join(tmpdir(), 'evesim-shard-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCENARIO = `
name: shard-e2e
seed: 21
duration: 3s
gracefulStop: 0s
target: embedded
groups:
  - name: a
    count: 3
  - name: b
    count: 2
thresholds:
  - register.count >= 1 per device
  - devices.total == 2
`;

describe('runScenario --shard 1/2 --start-at', () => {
  it('runs only its devices, with the fleet serials, from the given instant', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const file = join(dir, 'shard.yaml');
    writeFileSync(file, SCENARIO);
    let registered: string[] = [];
    const startEmbeddedController: RunModule.StartEmbeddedController = async (o) => {
      const c = await ctl.startControllerInThread(o);
      return {
        ...c,
        stop: async () => {
          const { devices } = await c.admin.devices({ limit: 100 });
          registered = devices.map((d) => String(d.serial)).sort();
          await c.stop();
        },
      };
    };
    const startAtMs = Math.ceil((Date.now() + 4000) / 1000) * 1000;
    let errText = '';
    let outText = '';
    const result = await run.runScenario({
      scenarioFile: file,
      shard: { index: 1, count: 2 },
      fleetId: 'e2e-fleet',
      startAtMs,
      workers: 2,
      stateDir: join(dir, 'state'),
      quiet: true,
      startEmbeddedController,
      out: (t) => (outText += t),
      err: (t) => (errText += t),
    });
    // On a loaded machine preparing may overrun the 4 s lead: the runner then keeps the instant and
    // says so (tested below); any other warning is a failure.
    expect(errText.replace(/^evesim: warning: --start-at \S+ passed [\d.]+ s ago while preparing;.*\n/m, '')).not.toContain('warning');
    expect(outText).toContain('evesim: shard 1/2: 2 of 5 devices, fleet id e2e-fleet; figures and thresholds are this shard\'s\n');
    const s = result.summary!;
    expect(s.startedAt).toBe(new Date(startAtMs).toISOString());
    expect(s.shard).toEqual({ index: 1, count: 2, devices: 2, fleetDevices: 5, fleetId: 'e2e-fleet' });
    expect(s.devices.total).toBe(2);
    expect(s.thresholds.map((t) => [t.source, t.passed, t.perDevice?.devices])).toEqual([
      ['register.count >= 1 per device', true, 2],
      ['devices.total == 2', true, undefined],
    ]);
    expect(result.exitCode).toBe(0);
    // Fleet indices 1 and 3, with the serials of the fleet id.
    const seed = identitySeed(21, 'e2e-fleet');
    expect(registered).toEqual([hardwareSerial(seed, 1), hardwareSerial(seed, 3)].sort());
  }, 60_000);

  it('the start instant is --start-at: waited for, or kept with a warning when preparing overran it', () => {
    const lines: string[] = [];
    const ctx = (now: number, startAtMs?: number) => ({ now: () => now, err: (t: string) => void lines.push(t), ...(startAtMs !== undefined ? { startAtMs } : {}) });
    const T = Date.UTC(2026, 10, 24, 22, 0, 0);
    expect(startInstant(ctx(T - 10_000, T))).toBe(T);
    expect(startInstant(ctx(T - 500, T))).toBe(T);
    expect(startInstant(ctx(T + 3_000, T))).toBe(T);
    expect(startInstant(ctx(T))).toBe(T + 250);
    expect(lines).toEqual([
      'evesim: waiting 10.0 s for --start-at 2026-11-24T22:00:00.000Z\n',
      'evesim: warning: --start-at 2026-11-24T22:00:00.000Z passed 3.0 s ago while preparing; starting now on that schedule (devices due meanwhile arrive at once)\n',
    ]);
  });

  it('a --start-at already past is exit 2 before anything starts', async () => {
    const { run } = await loadCompiledRunner();
    const file = join(dir, 'late.yaml');
    writeFileSync(file, SCENARIO);
    let errText = '';
    const stateDir = join(dir, 'late-state');
    const result = await run.runScenario({
      scenarioFile: file,
      startAtMs: Date.UTC(2026, 0, 1),
      now: () => Date.UTC(2026, 0, 1, 0, 0, 5),
      stateDir,
      quiet: true,
      out: () => {},
      err: (t) => (errText += t),
    });
    expect(result.exitCode).toBe(2);
    expect(errText).toBe('evesim: --start-at: 2026-01-01T00:00:00.000Z is 5.0 s in the past; give a later time\n');
    expect(existsSync(stateDir)).toBe(false);
  });
});
