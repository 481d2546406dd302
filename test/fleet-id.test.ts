// The fleet id enters every serial: two fleets from one seed never share one, every shard given the
// same id makes the same serials, a state directory keeps its own id, and identities cached under
// one id (or by an earlier version under the seed alone) are never reused under another.

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fleetIdProblem, identitySeed, readStateDirFleetId, stateDirFleetId } from '../src/identity/fleet-id.js';
import { FleetIdentityStore } from '../src/identity/fleet-identity-store.js';
import { hardwareSerial, softSerial } from '../src/identity/serials.js';

const tmp = mkdtempSync(join(tmpdir(), 'evesim-fleet-id-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const serialsOf = (seed: number, fleetId: string | undefined, n: number) => {
  const s = identitySeed(seed, fleetId);
  return Array.from({ length: n }, (_, i) => [hardwareSerial(s, i), softSerial(s, i)]).flat();
};

describe('fleet id', () => {
  it('same seed, different fleet ids: disjoint serials and soft serials; the same id: identical', () => {
    const a = serialsOf(5, 'fleet-a', 500);
    const b = serialsOf(5, 'fleet-b', 500);
    const legacy = serialsOf(5, undefined, 500);
    const inB = new Set(b);
    expect(a.filter((x) => inB.has(x))).toEqual([]);
    const inLegacy = new Set(legacy);
    expect(a.filter((x) => inLegacy.has(x))).toEqual([]);
    expect(serialsOf(5, 'fleet-a', 500)).toEqual(a);
    // Without a fleet id the serials are what earlier versions made from the seed alone.
    expect(legacy[0]).toBe(hardwareSerial(5, 0));
  });

  it('identities made by the store carry the fleet id in their serials', () => {
    const a = FleetIdentityStore.open({ seed: 5, fleetId: 'fleet-a' }).device(3);
    const b = FleetIdentityStore.open({ seed: 5, fleetId: 'fleet-b' }).device(3);
    expect(a.serial).toBe(hardwareSerial(identitySeed(5, 'fleet-a'), 3));
    expect(a.softSerial).toBe(softSerial(identitySeed(5, 'fleet-a'), 3));
    expect(b.serial).not.toBe(a.serial);
  });

  it('a state directory never reuses identities cached under another fleet id or by an earlier version', () => {
    const stateDir = join(tmp, 'cache');
    const legacy = FleetIdentityStore.open({ stateDir, seed: 9 });
    const legacySerial = legacy.device(0).serial;
    expect(legacy.stats).toEqual({ created: 1, loaded: 0 });
    const a = FleetIdentityStore.open({ stateDir, seed: 9, fleetId: 'a' });
    const aSerial = a.device(0).serial;
    expect(a.stats).toEqual({ created: 1, loaded: 0 });
    expect(aSerial).not.toBe(legacySerial);
    expect(a.dir).not.toBe(legacy.dir);
    const b = FleetIdentityStore.open({ stateDir, seed: 9, fleetId: 'b' });
    expect(b.device(0).serial).not.toBe(aSerial);
    expect(b.stats).toEqual({ created: 1, loaded: 0 });
    const aAgain = FleetIdentityStore.open({ stateDir, seed: 9, fleetId: 'a' });
    expect(aAgain.device(0).serial).toBe(aSerial);
    expect(aAgain.stats).toEqual({ created: 0, loaded: 1 });
  });

  it('the default id is made once per state directory and kept across opens', () => {
    const stateDir = join(tmp, 'default');
    expect(readStateDirFleetId(stateDir)).toBeUndefined();
    const first = stateDirFleetId(stateDir);
    expect(first).toMatch(/^[0-9a-f]{16}$/);
    expect(stateDirFleetId(stateDir)).toBe(first);
    expect(readFileSync(join(stateDir, 'fleet-id'), 'utf8')).toBe(`${first}\n`);
    expect(statSync(join(stateDir, 'fleet-id')).mode & 0o777).toBe(0o644);
    // Another state directory (another machine) makes another id.
    expect(stateDirFleetId(join(tmp, 'elsewhere'))).not.toBe(first);
  });

  it('a bad fleet id, given or in the file, is named', () => {
    expect(fleetIdProblem('job-42.a_b')).toBeUndefined();
    expect(fleetIdProblem('a/b')).toMatch(/"a\/b" is not a fleet id/);
    expect(fleetIdProblem('')).toMatch(/is not a fleet id/);
    expect(fleetIdProblem('-x')).toMatch(/is not a fleet id/);
    expect(fleetIdProblem('x'.repeat(65))).toMatch(/is not a fleet id/);
    const stateDir = join(tmp, 'bad');
    stateDirFleetId(stateDir);
    writeFileSync(join(stateDir, 'fleet-id'), '../escape\n');
    expect(() => stateDirFleetId(stateDir)).toThrow(/fleet-id: "\.\.\/escape" is not a fleet id/);
  });
});
