// PATCH /admin/fleet (DeviceRegistry.mergeFleet): the shards of one fleet run, sharing one
// `evesim controller`, each add their devices without wiping the others'; a group the controller
// has keeps its state; before any fleet was set it is the same as PUT.

import { describe, expect, it } from 'vitest';
import { applyConfigPatch } from '../src/servers/controller/config-overlay.js';
import { DeviceRegistry } from '../src/servers/controller/device-registry.js';
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
});
