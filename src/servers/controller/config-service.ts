// The config a device is served and its hash. configHash = base64url (with padding, as Adam writes
// it) of SHA-256 over the encoded EdgeDevConfig. The hash is cached per device together with the
// group and device versions it was computed at, so a 304 costs a map lookup, not an encode.
//
// The last build is kept too, until the next one: a device whose hash is stale makes the config
// handler ask for the current hash (a build, when its config changed) and then for the config to
// send, so without it every device built its config twice after a change, and a fleet-wide config
// change cost the controller two builds, encodes and SHA-256s a device instead of one.

import { createHash } from 'node:crypto';
import type { config } from '../../gen/eve-types.js';
import { Msg } from '../../protocol/messages.js';
import { buildEdgeDevConfig, type ConfigBuildContext } from './config-builder.js';
import type { DeviceRecord } from './device-record.js';
import type { GroupState } from './group-state.js';

export interface BuiltConfig {
  config: config.EdgeDevConfig;
  encoded: Uint8Array;
  hash: string;
}

/** A build and what it was built from: valid while the device has the same group at the same versions. */
interface KeptBuild {
  dev: DeviceRecord;
  group: GroupState;
  groupVersion: number;
  deviceVersion: number;
  built: BuiltConfig;
}

export class ConfigService {
  /** Configs built so far (encoded and hashed), for tests and benchmarks. */
  builds = 0;
  private last: KeptBuild | undefined;

  constructor(private readonly ctx: ConfigBuildContext) {}

  /** The current hash, from the cache when the group and device versions have not moved. */
  currentHash(dev: DeviceRecord): string {
    if (dev.cachedConfigHash !== undefined && dev.cachedGroupVersion === dev.group.overlay.version && dev.cachedDeviceVersion === dev.deviceVersion) {
      return dev.cachedConfigHash;
    }
    return this.build(dev).hash;
  }

  /** The device's current config, encoded and hashed; the same object when asked again at the same versions. */
  build(dev: DeviceRecord): BuiltConfig {
    const group = dev.group;
    const groupVersion = group.overlay.version;
    const deviceVersion = dev.deviceVersion;
    const last = this.last;
    if (last && last.dev === dev && last.group === group && last.groupVersion === groupVersion && last.deviceVersion === deviceVersion) return last.built;
    const cfg = buildEdgeDevConfig(dev, this.ctx);
    const encoded = Msg.EdgeDevConfig.encode(cfg);
    const hash = configHashOf(encoded);
    this.builds++;
    dev.cachedConfigHash = hash;
    dev.cachedGroupVersion = groupVersion;
    dev.cachedDeviceVersion = deviceVersion;
    const built = { config: cfg, encoded, hash };
    this.last = { dev, group, groupVersion, deviceVersion, built };
    return built;
  }
}

export function configHashOf(encodedConfig: Uint8Array): string {
  return createHash('sha256').update(encodedConfig).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
}
