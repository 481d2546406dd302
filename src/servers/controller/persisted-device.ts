// The saved forms of what the controller keeps per device (registry entry, attestation state,
// counters) and of config overlays: plain data that the registry store writes to its database and
// turns back into live objects at the next start. Pure: no I/O here (registry-store.ts does it).

import { createPublicKey } from 'node:crypto';
import type { attest } from '../../gen/eve-types.js';
import { AttestState, type StoredDeviceCert } from './attest-state.js';
import { emptyOverlay, reserveConfigVersion, type AppOverlay, type ConfigOverlay } from './config-overlay.js';
import type { SavedCounters } from './device-counters.js';
import { DeviceRecord } from './device-record.js';
import type { GroupState } from './group-state.js';

/** A registered (or pre-registered) device as saved: written at register, attest and pre-registration. */
export interface SavedDevice {
  uuid: string;
  serial: string;
  softSerial: string;
  /** SHA-256 of the device certificate DER, hex. */
  certSha256: string;
  /** The device's public key, SubjectPublicKeyInfo DER. */
  publicKeySpki: Uint8Array;
  group: string;
  registeredAt: number;
  preRegistered: boolean;
  onboardFingerprint?: string;
}

export function saveDevice(d: DeviceRecord): SavedDevice {
  return {
    uuid: d.uuid,
    serial: d.serial,
    softSerial: d.softSerial,
    certSha256: Buffer.from(d.certHashKey, 'latin1').toString('hex'),
    publicKeySpki: new Uint8Array(d.publicKey.export({ type: 'spki', format: 'der' })),
    group: d.group.name,
    registeredAt: d.registeredAt,
    preRegistered: d.preRegistered,
    ...(d.onboardFingerprint !== undefined ? { onboardFingerprint: d.onboardFingerprint } : {}),
  };
}

/** The live record of a saved device, placed in `group` (the registry finds it by the saved name). */
export function restoreDevice(s: SavedDevice, group: GroupState): DeviceRecord {
  const key = createPublicKey({ key: Buffer.from(s.publicKeySpki), format: 'der', type: 'spki' });
  const d = new DeviceRecord(s.uuid, s.serial, s.softSerial, Buffer.from(s.certSha256, 'hex').toString('latin1'), key, group, s.registeredAt, s.preRegistered);
  if (s.onboardFingerprint !== undefined) d.onboardFingerprint = s.onboardFingerprint;
  return d;
}

/**
 * Attestation state as saved; the parsed certificate check (`checked`) is redone on demand. The
 * outstanding nonce is not saved: it lives for one round trip (NONCE, then the quote), so saving it
 * would cost a database write per nonce (40–70 µs of the controller's CPU in controller-throughput)
 * for the rare quote that crosses a restart: it gets NONCE_MISMATCH, and the device asks for a new
 * nonce after EVE's restart wait (15 s). A `nonce` key in an older registry's record is not read.
 */
export interface SavedAttest {
  integrityToken?: Uint8Array;
  certs?: [number, Omit<StoredDeviceCert, 'checked'>][];
  storageKeys?: attest.AttestVolumeKey[];
  lastQuoteReason?: string;
  lastQuoteReasonKey?: string;
  attested: boolean;
  quotes: number;
  lastQuoteResult: number;
  lastQuoteEmpty: boolean;
  lastResetCount?: number;
  tpmResets: number;
}

export function saveAttest(a: AttestState): SavedAttest {
  const out: SavedAttest = {
    attested: a.attested,
    quotes: a.quotes,
    lastQuoteResult: a.lastQuoteResult,
    lastQuoteEmpty: a.lastQuoteEmpty,
    tpmResets: a.tpmResets,
  };
  if (a.integrityToken) out.integrityToken = a.integrityToken;
  if (a.certs) out.certs = [...a.certs].map(([t, { checked: _c, ...c }]) => [t, c]);
  if (a.storageKeys) out.storageKeys = a.storageKeys;
  if (a.lastQuoteReason !== undefined) out.lastQuoteReason = a.lastQuoteReason;
  if (a.lastQuoteReasonKey !== undefined) out.lastQuoteReasonKey = a.lastQuoteReasonKey;
  if (a.lastResetCount !== undefined) out.lastResetCount = a.lastResetCount;
  return out;
}

export function restoreAttest(s: SavedAttest): AttestState {
  const a = new AttestState();
  a.integrityToken = s.integrityToken === undefined ? undefined : new Uint8Array(s.integrityToken);
  if (s.certs) {
    a.certs = new Map(
      s.certs.map(([t, c]) => [t, { ...c, ...(c.pem ? { pem: new Uint8Array(c.pem) } : {}), ...(c.metaData ? { metaData: c.metaData.map((m) => ({ type: m.type, data: new Uint8Array(m.data) })) } : {}) }]),
    );
  }
  if (s.storageKeys) a.storageKeys = s.storageKeys;
  a.lastQuoteReason = s.lastQuoteReason;
  a.lastQuoteReasonKey = s.lastQuoteReasonKey;
  a.attested = s.attested;
  a.quotes = s.quotes;
  a.lastQuoteResult = s.lastQuoteResult;
  a.lastQuoteEmpty = s.lastQuoteEmpty;
  a.lastResetCount = s.lastResetCount;
  a.tpmResets = s.tpmResets;
  return a;
}

/** What changes with every request (flushed periodically): counters, API mask, config hashes. */
export interface SavedActivity {
  counters: SavedCounters;
  apiMask: number;
  lastRequestedConfigHash?: string;
  lastServedConfigHash?: string;
  lastBootReason?: number;
  restartCounter?: number;
}

export function saveActivity(d: DeviceRecord): SavedActivity {
  return {
    counters: d.counters.toSaved(),
    apiMask: d.apiMask,
    ...(d.lastRequestedConfigHash !== undefined ? { lastRequestedConfigHash: d.lastRequestedConfigHash } : {}),
    ...(d.lastServedConfigHash !== undefined ? { lastServedConfigHash: d.lastServedConfigHash } : {}),
    ...(d.lastBootReason !== undefined ? { lastBootReason: d.lastBootReason } : {}),
    ...(d.restartCounter !== undefined ? { restartCounter: d.restartCounter } : {}),
  };
}

export function restoreActivity(d: DeviceRecord, s: SavedActivity): void {
  d.counters.restore(s.counters);
  d.apiMask = s.apiMask;
  d.lastRequestedConfigHash = s.lastRequestedConfigHash;
  d.lastServedConfigHash = s.lastServedConfigHash;
  d.lastBootReason = s.lastBootReason;
  d.restartCounter = s.restartCounter;
}

/**
 * A config overlay as saved (maps as entry lists). Its version is kept: it enters the served
 * config (EdgeDevConfig.id.version), so a restarted controller serves the same config hash.
 */
export interface SavedOverlay extends Omit<ConfigOverlay, 'configItems' | 'apps'> {
  configItems?: [string, string | null][];
  apps?: [string, AppOverlay][];
}

export function saveOverlay(o: ConfigOverlay): SavedOverlay {
  const { configItems, apps, ...rest } = o;
  return { ...rest, ...(configItems ? { configItems: [...configItems] } : {}), ...(apps ? { apps: [...apps] } : {}) };
}

/** Fills `into` (a group's or device's overlay) from the saved form, version included. */
export function restoreOverlay(s: SavedOverlay, into: ConfigOverlay = emptyOverlay()): ConfigOverlay {
  const { configItems, apps, ...rest } = s;
  Object.assign(into, rest);
  if (configItems) into.configItems = new Map(configItems);
  if (apps) into.apps = new Map(apps);
  reserveConfigVersion(into.version);
  return into;
}
