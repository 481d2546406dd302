// Signed ConfigResponse bodies kept per device, so a device that polls with a stale hash again and
// again (its config failed to apply, or a capacity bench) costs a lookup instead of a config
// build, an encode, a hash and a signature. An entry holds while the device's group (the object,
// not only its name) and the group and device config versions are the ones it was built at. The
// number of entries is bounded (oldest dropped first, 4,096 by default, about 10 MiB at a few KiB
// a body): most devices need their body once per config change and then poll with its hash (304),
// so keeping 10^5 bodies would be memory for nothing.

import type { DeviceRecord } from './device-record.js';

interface Entry {
  group: DeviceRecord['group'];
  groupVersion: number;
  deviceVersion: number;
  hash: string;
  body: Uint8Array;
}

export class SealedConfigReplies {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly capacity = 4_096) {}

  get size(): number {
    return this.entries.size;
  }

  /** The sealed body for the device's current config, if one was kept. */
  get(dev: DeviceRecord): { hash: string; body: Uint8Array } | undefined {
    const e = this.entries.get(dev.uuid);
    if (!e) return undefined;
    if (e.group !== dev.group || e.groupVersion !== dev.group.overlay.version || e.deviceVersion !== dev.deviceVersion) {
      this.entries.delete(dev.uuid);
      return undefined;
    }
    return e;
  }

  /** Keeps `body` (the sealed ConfigResponse of `hash`) for the versions the device is at now. */
  put(dev: DeviceRecord, hash: string, body: Uint8Array): void {
    this.entries.delete(dev.uuid);
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(dev.uuid, { group: dev.group, groupVersion: dev.group.overlay.version, deviceVersion: dev.deviceVersion, hash, body });
  }
}
