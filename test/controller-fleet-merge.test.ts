// PATCH /admin/fleet (DeviceRegistry.mergeFleet): the shards of one fleet run, sharing one
// `evesim controller`, each add their devices without wiping the others'; a group the controller
// has keeps its state, unless the body says replaceGroups (what the shard owning the timeline
// sends, so a run does not start where an earlier run's timeline left the group); before any
// fleet was set it is the same as PUT.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyConfigPatch } from '../src/servers/controller/config-overlay.js';
import { DeviceRegistry } from '../src/servers/controller/device-registry.js';
import { parseFleetSpec } from '../src/servers/controller/fleet-spec.js';
import { RegistryStore } from '../src/servers/controller/registry-store.js';
import { testGroup } from './fixtures/test-group.js';

const groups = [testGroup('a', 3), testGroup('b', 2)];

describe('DeviceRegistry.mergeFleet', () => {
  it("adds each shard's serials to the fleet; PUT would have replaced them", () => {
    const reg = new DeviceRegistry(true);
    expect(reg.mergeFleet({ groups, devices: [{ serial: 'S0', group: 'a' }, { serial: 'S2', group: 'a' }] })).toEqual({ groups: 2, devices: 2, preRegistered: 0 });
    const a = reg.group('a')!;
    applyConfigPatch(a.overlay, { configItems: { 'timer.config.interval': '7' } }); // a timeline action's change since
    expect(reg.mergeFleet({ groups: [...groups, testGroup('c', 1)], devices: [{ serial: 'S1', group: 'a' }, { serial: 'S3', group: 'b' }] })).toEqual({
      groups: 3,
      devices: 4,
      preRegistered: 0,
    });
    expect(reg.group('a')).toBe(a); // kept, with its change
    expect(reg.group('a')!.overlay.configItems?.get('timer.config.interval')).toBe('7');
    expect(reg.allGroups().map((g) => g.name)).toEqual(['a', 'b', 'c']);
    // With pre-registration required, every shard's serial is still known.
    const known = (serial: string) => (reg as unknown as { fleetSerials: Map<string, { name: string }> }).fleetSerials.get(serial)?.name;
    expect(['S0', 'S1', 'S2', 'S3'].map(known)).toEqual(['a', 'a', 'a', 'b']);
    reg.setFleet({ groups, devices: [{ serial: 'S1', group: 'a' }] });
    expect(['S0', 'S1'].map(known)).toEqual([undefined, 'a']);
  });

  it('checks everything before changing anything', () => {
    const reg = new DeviceRegistry(false);
    reg.mergeFleet({ groups, devices: [{ serial: 'S0', group: 'a' }] });
    expect(() => reg.mergeFleet({ groups, devices: [{ serial: 'S9', group: 'b', deviceCertPem: 'not a cert' }] })).toThrow(/not a PEM certificate/);
    const known = (serial: string) => (reg as unknown as { fleetSerials: Map<string, unknown> }).fleetSerials.has(serial);
    expect([known('S0'), known('S9')]).toEqual([true, false]);
  });

  it('replaceGroups makes the listed groups again from their spec; the others keep their state', () => {
    const reg = new DeviceRegistry(true);
    reg.mergeFleet({ groups, devices: [{ serial: 'S0', group: 'a' }, { serial: 'S1', group: 'b' }] });
    const [a, b] = [reg.group('a')!, reg.group('b')!];
    // An earlier run's timeline changed both groups.
    applyConfigPatch(a.overlay, { configItems: { 'timer.metric.interval': '120' } });
    applyConfigPatch(b.overlay, { configItems: { 'timer.metric.interval': '120' } });
    const changedVersion = a.overlay.version;
    // The next run's shard 0 lists group a only, with another spec.
    const a2 = testGroup('a', 3, { configItems: { 'timer.config.interval': '30' } });
    reg.mergeFleet({ groups: [a2], devices: [{ serial: 'S2', group: 'a' }], replaceGroups: true });
    const a3 = reg.group('a')!;
    expect(a3).not.toBe(a);
    expect(a3.spec).toEqual(a2);
    expect(a3.overlay.configItems?.get('timer.metric.interval')).toBeUndefined();
    expect(a3.overlay.version).toBeGreaterThan(changedVersion); // a new config hash for its devices
    expect(reg.group('b')).toBe(b); // not listed: kept, with its change
    expect(reg.allGroups()).toEqual([a3, b]);
    const known = (serial: string) => (reg as unknown as { fleetSerials: Map<string, unknown> }).fleetSerials.get(serial);
    expect(['S0', 'S1', 'S2'].map(known)).toEqual([a3, b, a3]);
    // Without the flag a listed group is kept, as before.
    reg.mergeFleet({ groups: [testGroup('a', 3)], devices: [] });
    expect(reg.group('a')).toBe(a3);
  });

  it('replaceGroups moves registered devices to the new group and is replayed from the saved registry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'evesim-fleet-merge-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const store = RegistryStore.open(dir);
    const reg = new DeviceRegistry(false);
    reg.listener = store;
    reg.mergeFleet({ groups, devices: [] });
    const a = reg.group('a')!;
    applyConfigPatch(a.overlay, { configItems: { 'timer.metric.interval': '120' } });
    store.groupOverlayChanged('a', a.overlay);
    // A device in group a, as register would have put it there.
    const dev = { group: a } as { group: typeof a };
    (reg as unknown as { byUuid: Map<string, typeof dev> }).byUuid.set('u-1', dev);
    reg.mergeFleet(parseFleetSpec({ groups: [testGroup('a', 3)], devices: [], replaceGroups: true }));
    expect(dev.group).toBe(reg.group('a'));
    expect(dev.group).not.toBe(a);
    await store.close();
    const reopened = RegistryStore.open(dir);
    const saved = reopened.load();
    await reopened.close();
    // Saved as one set, the changes folded (fleet-history.ts), with group a as made again.
    expect(saved.fleet.map((c) => c.op)).toEqual(['set']);
    expect(saved.fleet[0]!.spec.groups.map((g) => g.name)).toEqual(['a', 'b']);
    expect(saved.groupOverlays.get('a')?.configItems).toBeUndefined();
    const restored = new DeviceRegistry(false);
    restored.restore(saved);
    expect(restored.group('a')!.overlay.configItems?.get('timer.metric.interval')).toBeUndefined();
  });

  it('refuses a replaceGroups that is not true or false, naming the field', () => {
    expect(() => parseFleetSpec({ groups: [], devices: [], replaceGroups: 'yes' })).toThrow(/replaceGroups/);
    expect(parseFleetSpec({ groups: [], devices: [], replaceGroups: false }).replaceGroups).toBeUndefined();
  });
});
