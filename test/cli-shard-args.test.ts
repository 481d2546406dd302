// `evesim run` with --shard, --start-at, --fleet-id and --dry-run through the CLI function: bad
// forms are exit 2 with one line naming the flag, before anything starts; --dry-run prints the
// shard's plan, exit 0, and writes nothing.

import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { runRun, type RunArgs } from '../src/cli/run-command.js';
import { parseStartAt } from '../src/cli/parse-start-at.js';
import { hardwareSerial } from '../src/identity/serials.js';
import { identitySeed } from '../src/identity/fleet-id.js';

afterEach(() => vi.restoreAllMocks());
const dir = mkdtempSync(join(tmpdir(), 'evesim-cli-shard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCENARIO = `
name: dry
seed: 3
duration: 10s
target: embedded
groups:
  - name: a
    count: 10
  - name: b
    count: 5
`;
const scenarioFile = join(dir, 'dry.yaml');
writeFileSync(scenarioFile, SCENARIO);

async function run(args: Partial<RunArgs>): Promise<{ code: number; errors: string[]; out: string }> {
  const errors: string[] = [];
  let out = '';
  vi.spyOn(console, 'error').mockImplementation((m: unknown) => void errors.push(String(m)));
  vi.spyOn(process.stderr, 'write').mockImplementation((t: string | Uint8Array) => (errors.push(String(t).trimEnd()), true));
  vi.spyOn(process.stdout, 'write').mockImplementation((t: string | Uint8Array) => ((out += String(t)), true));
  const code = await runRun({ scenario: scenarioFile, insecureSkipVerify: false, quiet: true, ...args });
  vi.restoreAllMocks();
  return { code, errors, out };
}

describe('evesim run --shard / --start-at / --fleet-id / --dry-run', () => {
  for (const [shard, message] of [
    ['3/3', 'evesim: --shard: "3/3": the shard index i must be 0..2 (shards are numbered from 0)'],
    ['a/b', 'evesim: --shard: "a/b" is not of the form i/n (e.g. 0/4: the first of 4 shards)'],
    ['1/0', 'evesim: --shard: "1/0": the shard count n must be at least 1'],
  ] as const) {
    it(`--shard ${shard} is exit 2 with one line`, async () => {
      const stateDir = join(dir, `state-${shard.replace('/', '-')}`);
      const r = await run({ shard, stateDir });
      expect(r.code).toBe(2);
      expect(r.errors).toEqual([message]);
      expect(existsSync(stateDir)).toBe(false);
    });
  }

  it('a bad --fleet-id or --start-at is exit 2 with one line', async () => {
    expect((await run({ fleetId: 'a/b' })).errors).toEqual([
      `evesim: --fleet-id: "a/b" is not a fleet id: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter, digit or '_'`,
    ]);
    const late = await run({ startAt: '2001-01-01T00:00:00Z', dryRun: true });
    expect(late.code).toBe(2);
    expect(late.errors).toHaveLength(1);
    expect(late.errors[0]).toMatch(/^evesim: --start-at: 2001-01-01T00:00:00\.000Z is \d+\.\d s in the past; give a later time$/);
    const bad = await run({ startAt: 'tomorrow' });
    expect(bad.code).toBe(2);
    expect(bad.errors).toEqual(['evesim: --start-at: "tomorrow" is not an ISO-8601 time such as 2026-11-24T22:00:00Z, nor a relative time such as +30s']);
  });

  it('--controller-admin is a URL and needs --controller', async () => {
    const bad = await run({ controllerAdmin: 'nope' });
    expect(bad.code).toBe(2);
    expect(bad.errors).toEqual(['evesim: --controller-admin: "nope" is not a URL; expected e.g. http://127.0.0.1:8444']);
    const alone = await run({ controllerAdmin: 'http://127.0.0.1:9', dryRun: true });
    expect(alone.code).toBe(2);
    expect(alone.errors).toEqual(['evesim: --controller-admin: needs --controller (the admin API of that controller)']);
  });

  it('--start-at takes an ISO time or +duration from the process start', () => {
    expect(parseStartAt('2026-11-24T22:00:00Z', 0)).toBe(Date.UTC(2026, 10, 24, 22, 0, 0));
    expect(parseStartAt('2026-11-24T23:00:00+01:00', 0)).toBe(Date.UTC(2026, 10, 24, 22, 0, 0));
    expect(parseStartAt('+30s', 1_000_000)).toBe(1_030_000);
    expect(parseStartAt('+2m', 5)).toBe(120_005);
    expect(() => parseStartAt('+soon', 0)).toThrow('--start-at: "+soon" is not "+" and a duration (examples: +30s, +2m)');
    expect(() => parseStartAt('12', 0)).toThrow(/not an ISO-8601 time/);
  });

  it('--dry-run prints the shard plan and writes nothing', async () => {
    const stateDir = join(dir, 'dry-state');
    const r = await run({ dryRun: true, shard: '1/4', workers: 2, fleetId: 'job-7', stateDir, startAt: '+1h' });
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toBe(`evesim: dry run of "dry" (${scenarioFile})`);
    expect(lines[1]).toBe('  seed 3, fleet id job-7 (--fleet-id)');
    expect(lines[2]).toBe('  shard 1/4: 4 of 15 devices, on 2 workers'); // indices 1, 5, 9, 13
    expect(lines[3]).toBe('  groups: a 3, b 1');
    expect(lines[4]).toBe('  target: embedded controller');
    expect(lines[5]).toMatch(/^ {2}start: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const s = identitySeed(3, 'job-7');
    expect(lines[6]).toBe(`  serials: device 1 ${hardwareSerial(s, 1)} … device 13 ${hardwareSerial(s, 13)}`);
    expect(existsSync(stateDir)).toBe(false);
    // Without --fleet-id and a state directory that has none yet, none is made.
    const fresh = await run({ dryRun: true, stateDir });
    expect(fresh.code).toBe(0);
    expect(fresh.out).toContain(`fleet id not made yet (the first run makes one in ${join(stateDir, 'fleet-id')})`);
    expect(fresh.out).toContain('shard 0/1: 15 of 15 devices');
    expect(existsSync(stateDir)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['dry.yaml']);
  });

  it('--dry-run with a bad scenario is exit 2 as a run is', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'name: bad\nseed: 1\nduration: 10s\ngroups: []\n');
    const errors: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((t: string | Uint8Array) => (errors.push(String(t)), true));
    const code = await runRun({ scenario: file, dryRun: true, insecureSkipVerify: false, quiet: true });
    expect(code).toBe(2);
    expect(errors.join('')).toMatch(/bad\.yaml/);
    rmSync(file);
  });
});
