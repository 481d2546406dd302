// A device keeps what EVE keeps in /persist (lifecycle/device-disk-state.ts) and, brought back
// from it after the generator was cut off, boots as after a power failure: no /register, no /uuid,
// the same UUID, restart counter + 1 and last_boot_reason POWER_FAIL in its device info.

import { describe, expect, it } from 'vitest';
import { info } from '../src/gen/eve-types.js';
import { diskStateProblem, type DeviceDiskState } from '../src/device/lifecycle/device-disk-state.js';
import { onboard, rig } from './device-harness.js';

describe('device disk state', () => {
  it('is written once the device has a UUID and brings it back as after a power failure', async () => {
    const saved: DeviceDiskState[] = [];
    // Both callbacks name the device, so a worker can hand one function to all of its devices.
    const indices = new Set<number>();
    const first = rig({
      options: {
        onDiskStateChange: (s, index) => {
          saved.push(s);
          indices.add(index);
        },
        onStateChange: (_from, _to, index) => indices.add(index),
      },
    });
    await onboard(first);
    expect(saved.length).toBeGreaterThan(0);
    expect([...indices]).toEqual([first.device.opts.index]);
    const last = saved.at(-1)!;
    expect(diskStateProblem(last)).toBeUndefined();
    expect(last.uuid).toBe(first.controller.deviceUuid);
    expect(last.restartCounter).toBe(0);

    const second = rig({ options: { resume: last } });
    await onboard(second);
    expect(second.controller.of('register')).toHaveLength(0);
    expect(second.controller.of('uuid')).toHaveLength(0);
    expect(second.device.uuid).toBe(last.uuid);
    // Read once: the options no longer hold the record (a worker kept every resumed device's).
    expect(second.device.opts.resume).toBeUndefined();
    expect(second.device.bootReason).toBe(info.BootReason.BOOT_REASON_POWER_FAIL);
    const dinfo = second.controller.infos().find((m) => m.dinfo)!.dinfo!;
    expect(dinfo.last_boot_reason).toBe(info.BootReason.BOOT_REASON_POWER_FAIL);
    expect(Number(dinfo.restartCounter)).toBe(1);
    // Requests name the saved UUID in their paths.
    expect(second.controller.of('config')[0]!.path).toContain(last.uuid);
  });

  it('refuses records that are not a saved state', () => {
    expect(diskStateProblem(null)).toBe('not an object');
    expect(diskStateProblem({ v: 2, uuid: 'x', restartCounter: 0 })).toMatch(/layout version/);
    expect(diskStateProblem({ v: 1, uuid: '', restartCounter: 0 })).toBe('uuid missing');
    expect(diskStateProblem({ v: 1, uuid: 'x', restartCounter: -1 })).toMatch(/not a count/);
  });
});
