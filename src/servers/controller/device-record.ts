// Everything the controller keeps about one device. Compact on purpose (10^5 devices): the device's
// public key as a KeyObject made once at registration, hashes instead of certificates, counters
// instead of bodies, and the config hash cached with the versions it was computed at.

import type { KeyObject } from 'node:crypto';
import { info } from '../../gen/eve-types.js';
import { AttestState } from './attest-state.js';
import type { ConfigOverlay } from './config-overlay.js';
import { DeviceCounters } from './device-counters.js';
import type { GroupState } from './group-state.js';

export class DeviceRecord {
  /** Onboarding certificate fingerprint (hex SHA-256 of DER) it registered with; unset while only pre-registered. */
  onboardFingerprint: string | undefined;
  readonly counters = new DeviceCounters();
  attest: AttestState | undefined;
  overlay: ConfigOverlay | undefined;
  /** Config hash cache and the group / device overlay versions it belongs to. */
  cachedConfigHash: string | undefined;
  cachedGroupVersion = -1;
  cachedDeviceVersion = -1;
  /** Hash the device last sent in a ConfigRequest, and the hash last served in a 200. */
  lastRequestedConfigHash: string | undefined;
  lastServedConfigHash: string | undefined;
  /** Controller APIs the device has used, as bits: 1 = v1 (mutual TLS), 2 = v2. */
  apiMask = 0;
  /** From the last device info: ZInfoDevice.last_boot_reason (info.BootReason) and restartCounter. */
  lastBootReason: number | undefined;
  restartCounter: number | undefined;

  constructor(
    readonly uuid: string,
    readonly serial: string,
    readonly softSerial: string,
    /** SHA-256 of the device certificate DER as a latin1 string (map key). */
    readonly certHashKey: string,
    readonly publicKey: KeyObject,
    public group: GroupState,
    readonly registeredAt: number,
    /** Created from the fleet's deviceCertPem rather than by /register. */
    readonly preRegistered: boolean,
  ) {}

  attestState(): AttestState {
    return (this.attest ??= new AttestState());
  }

  get deviceVersion(): number {
    return this.overlay?.version ?? 0;
  }

  summary(): Record<string, unknown> {
    return {
      uuid: this.uuid,
      serial: this.serial,
      group: this.group.name,
      /** Has called /register (a pre-registered device may skip it). */
      registered: this.onboardFingerprint !== undefined,
      preRegistered: this.preRegistered,
      attested: this.attest?.attested ?? false,
      api: (['none', 'v1', 'v2', 'v1+v2'] as const)[this.apiMask & 3],
      lastConfigHash: this.lastServedConfigHash,
      requests: this.counters.totalRequests(),
    };
  }

  toJSON(): Record<string, unknown> {
    return {
      ...this.summary(),
      softSerial: this.softSerial || undefined,
      registeredAt: new Date(this.registeredAt).toISOString(),
      deviceCertSha256: Buffer.from(this.certHashKey, 'latin1').toString('hex'),
      onboardFingerprint: this.onboardFingerprint,
      lastRequestedConfigHash: this.lastRequestedConfigHash,
      lastBootReason: this.lastBootReason === undefined ? undefined : (info.BootReason[this.lastBootReason] ?? this.lastBootReason),
      restartCounter: this.restartCounter,
      attestation: this.attest?.toJSON(),
      counts: this.counters.toJSON(),
    };
  }
}
