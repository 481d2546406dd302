// The config a device is served and its hash. configHash = base64url (with padding, as Adam writes
// it) of SHA-256 over the encoded EdgeDevConfig. The hash is cached per device together with the
// group and device versions it was computed at, so a 304 costs a map lookup, not an encode.

import { createHash } from 'node:crypto';
import type { config } from '../../gen/eve-types.js';
import { Msg } from '../../protocol/messages.js';
import { buildEdgeDevConfig, type ConfigBuildContext } from './config-builder.js';
import type { DeviceRecord } from './device-record.js';

export interface BuiltConfig {
  config: config.EdgeDevConfig;
  encoded: Uint8Array;
  hash: string;
}

export class ConfigService {
  constructor(private readonly ctx: ConfigBuildContext) {}

  /** The current hash, from the cache when the group and device versions have not moved. */
  currentHash(dev: DeviceRecord): string {
    if (dev.cachedConfigHash !== undefined && dev.cachedGroupVersion === dev.group.overlay.version && dev.cachedDeviceVersion === dev.deviceVersion) {
      return dev.cachedConfigHash;
    }
    return this.build(dev).hash;
  }

  build(dev: DeviceRecord): BuiltConfig {
    const cfg = buildEdgeDevConfig(dev, this.ctx);
    const encoded = Msg.EdgeDevConfig.encode(cfg);
    const hash = configHashOf(encoded);
    dev.cachedConfigHash = hash;
    dev.cachedGroupVersion = dev.group.overlay.version;
    dev.cachedDeviceVersion = dev.deviceVersion;
    return { config: cfg, encoded, hash };
  }
}

export function configHashOf(encodedConfig: Uint8Array): string {
  return createHash('sha256').update(encodedConfig).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
}
