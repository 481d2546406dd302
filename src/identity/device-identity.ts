// One simulated device's identity: serials from the seed, an onboarding certificate from the fleet
// CA, and the certificates EVE makes for itself (device, attestation, ECDH) with soft keys.

import type { KeyObject } from 'node:crypto';
import type { DeviceIdentity } from '../device/device-options.js';
import { senderCertHash } from '../protocol/cert-hash.js';
import { certificateDer } from '../protocol/pem.js';
import { createDeviceCertificate, createDeviceIssuedCertificate } from './eve-certificates.js';
import { issueOnboardingCertificate, type FleetCa } from './fleet-ca.js';
import { generateP256, privateKeyFromJwk, privateKeyToJwk, type PrivateJwk } from './keys.js';
import { hardwareSerial, softSerial } from './serials.js';

/** DeviceIdentity plus what envelopes and attestation need, computed once per device. */
export interface DeviceIdentityMaterial extends DeviceIdentity {
  /** Uses a fleet-wide onboarding certificate and key (a real controller's) instead of the device's own. */
  useSharedOnboarding(shared: SharedOnboarding): void;
  index: number;
  /** Soft attestation (quote) key and ECDH key, the private halves of attestCertPem / ecdhCertPem. */
  attestKey: KeyObject;
  ecdhKey: KeyObject;
  onboardCertDer: Uint8Array;
  deviceCertDer: Uint8Array;
  /** SHA-256 over the DER, the senderCertHash of register (onboarding) and all other requests. */
  onboardCertHash: Uint8Array;
  deviceCertHash: Uint8Array;
  /** AuthContainer.senderCert for register: the bytes of base64(onboarding PEM file). */
  onboardCertB64Pem: Uint8Array;
}

/** What the fleet state keeps per device (a 0600 file: it holds private keys). */
export interface StoredDeviceIdentity {
  version: 1;
  index: number;
  serial: string;
  softSerial: string;
  onboardCertPem: string;
  onboardKey: PrivateJwk;
  deviceCertPem: string;
  deviceKey: PrivateJwk;
  attestCertPem: string;
  attestKey: PrivateJwk;
  ecdhCertPem: string;
  ecdhKey: PrivateJwk;
}

export function createDeviceIdentity(
  ca: FleetCa,
  seed: string | number,
  index: number,
  nowMs: number,
): { identity: DeviceIdentityMaterial; stored: StoredDeviceIdentity } {
  const serial = hardwareSerial(seed, index);
  const soft = softSerial(seed, index);
  const onboard = generateP256();
  const device = generateP256();
  const attest = generateP256();
  const ecdh = generateP256();
  const onboardCert = issueOnboardingCertificate(ca, onboard.publicKey, serial, nowMs);
  const deviceCert = createDeviceCertificate(device.privateKey, device.publicKey, nowMs);
  const signer = { privateKey: device.privateKey, cert: deviceCert };
  const attestCert = createDeviceIssuedCertificate('attest', attest.publicKey, signer);
  const ecdhCert = createDeviceIssuedCertificate('ecdh', ecdh.publicKey, signer);

  const stored: StoredDeviceIdentity = {
    version: 1,
    index,
    serial,
    softSerial: soft,
    onboardCertPem: onboardCert.pem,
    onboardKey: privateKeyToJwk(onboard.privateKey),
    deviceCertPem: deviceCert.pem,
    deviceKey: privateKeyToJwk(device.privateKey),
    attestCertPem: attestCert.pem,
    attestKey: privateKeyToJwk(attest.privateKey),
    ecdhCertPem: ecdhCert.pem,
    ecdhKey: privateKeyToJwk(ecdh.privateKey),
  };
  // Only the device key (used on every request) is kept as a key object; the others are imported
  // from the stored JWK on first use, exactly as for an identity loaded from the state directory.
  const identity = new DeviceIdentityRecord(stored, device.privateKey, deviceCert.der, 'new device identity');
  return { identity, stored };
}

/** Rebuilds a device identity from its stored form; `where` names the file in errors. */
export function identityFromStored(raw: unknown, where: string): DeviceIdentityMaterial {
  const s = raw as Partial<StoredDeviceIdentity> | null;
  if (!s || typeof s !== 'object' || s.version !== 1) throw new Error(`${where}: not a version-1 stored device identity`);
  for (const field of ['serial', 'softSerial', 'onboardCertPem', 'deviceCertPem', 'attestCertPem', 'ecdhCertPem'] as const) {
    if (typeof s[field] !== 'string') throw new Error(`${where}: field ${field} missing or not a string`);
  }
  if (typeof s.index !== 'number') throw new Error(`${where}: field index missing`);
  const stored = s as StoredDeviceIdentity;
  for (const field of ['onboardKey', 'attestKey', 'ecdhKey'] as const) checkJwkShape(stored[field], `${where} ${field}`);
  const deviceKey = privateKeyFromJwk(stored.deviceKey, `${where} deviceKey`);
  return new DeviceIdentityRecord(stored, deviceKey, certificateDer(stored.deviceCertPem, `${where} deviceCertPem`), where);
}

function checkJwkShape(jwk: unknown, where: string): void {
  const j = jwk as PrivateJwk | null;
  if (!j || typeof j !== 'object' || j.kty !== 'EC' || typeof j.d !== 'string' || typeof j.x !== 'string') {
    throw new Error(`${where}: not an EC private JWK`);
  }
}

/**
 * A device identity as a worker holds it for the whole run, thousands of times over, so it keeps
 * little: the PEM texts, the device key and the hash of its certificate (both used on every
 * request). Everything else is derived when asked (prototype getters cost nothing per device):
 * the onboarding DER, hash and base64 (used by register, once), and the onboarding, attestation
 * and ECDH keys, imported from their stored JWK on first use (0.15–0.3 ms each) and kept.
 */
class DeviceIdentityRecord implements DeviceIdentityMaterial {
  readonly index: number;
  readonly serial: string;
  readonly softSerial: string;
  onboardCertPem: string;
  readonly deviceCertPem: string;
  readonly attestCertPem: string;
  readonly ecdhCertPem: string;
  readonly deviceKey: KeyObject;
  readonly deviceCertHash: Uint8Array;
  private readonly jwks: Pick<StoredDeviceIdentity, 'onboardKey' | 'attestKey' | 'ecdhKey'>;
  private readonly where: string;
  private keys: { onboard?: KeyObject; attest?: KeyObject; ecdh?: KeyObject } | undefined;
  private shared: SharedOnboarding | undefined;

  constructor(s: StoredDeviceIdentity, deviceKey: KeyObject, deviceCertDer: Uint8Array, where: string) {
    this.index = s.index;
    this.serial = s.serial;
    this.softSerial = s.softSerial;
    this.onboardCertPem = s.onboardCertPem;
    this.deviceCertPem = s.deviceCertPem;
    this.attestCertPem = s.attestCertPem;
    this.ecdhCertPem = s.ecdhCertPem;
    this.deviceKey = deviceKey;
    this.deviceCertHash = new Uint8Array(senderCertHash(deviceCertDer));
    this.jwks = { onboardKey: s.onboardKey, attestKey: s.attestKey, ecdhKey: s.ecdhKey };
    this.where = where;
  }

  /** Uses an onboarding certificate shared by the whole fleet (a real controller's) instead of the device's own. */
  useSharedOnboarding(shared: SharedOnboarding): void {
    this.shared = shared;
    this.onboardCertPem = shared.certPem;
  }

  get onboardKey(): KeyObject {
    if (this.shared) return this.shared.key;
    return ((this.keys ??= {}).onboard ??= privateKeyFromJwk(this.jwks.onboardKey, `${this.where} onboardKey`));
  }
  get attestKey(): KeyObject {
    return ((this.keys ??= {}).attest ??= privateKeyFromJwk(this.jwks.attestKey, `${this.where} attestKey`));
  }
  get ecdhKey(): KeyObject {
    return ((this.keys ??= {}).ecdh ??= privateKeyFromJwk(this.jwks.ecdhKey, `${this.where} ecdhKey`));
  }
  get onboardCertDer(): Uint8Array {
    return this.shared?.der ?? certificateDer(this.onboardCertPem, `${this.where} onboardCertPem`);
  }
  get deviceCertDer(): Uint8Array {
    return certificateDer(this.deviceCertPem, `${this.where} deviceCertPem`);
  }
  get onboardCertHash(): Uint8Array {
    return this.shared?.hash ?? senderCertHash(this.onboardCertDer);
  }
  get onboardCertB64Pem(): Uint8Array {
    return this.shared?.b64Pem ?? base64PemBytes(this.onboardCertPem);
  }
}

/** A real controller's onboarding certificate and key, shared by every device of a worker (as one EVE installer image carries one). */
export interface SharedOnboarding {
  certPem: string;
  key: KeyObject;
  der: Uint8Array;
  hash: Uint8Array;
  b64Pem: Uint8Array;
}

export function sharedOnboarding(certPem: string, key: KeyObject): SharedOnboarding {
  const der = certificateDer(certPem, 'onboarding certificate');
  return { certPem, key, der, hash: senderCertHash(der), b64Pem: base64PemBytes(certPem) };
}

/** AuthContainer.senderCert of register: the bytes of base64(onboarding PEM file text). */
function base64PemBytes(pem: string): Uint8Array {
  return new Uint8Array(Buffer.from(Buffer.from(pem, 'utf8').toString('base64'), 'latin1'));
}
