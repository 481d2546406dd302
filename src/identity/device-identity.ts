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
  const identity = assemble(stored, {
    onboardKey: onboard.privateKey,
    deviceKey: device.privateKey,
    attestKey: attest.privateKey,
    ecdhKey: ecdh.privateKey,
    onboardCertDer: onboardCert.der,
    deviceCertDer: deviceCert.der,
  });
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
  // Importing a JWK costs 0.15–0.3 ms; only the device key is needed on every request, the others
  // (register once, attestation, ECDH) are imported on first use.
  return assemble(stored, {
    onboardKey: () => privateKeyFromJwk(stored.onboardKey, `${where} onboardKey`),
    deviceKey: privateKeyFromJwk(stored.deviceKey, `${where} deviceKey`),
    attestKey: () => privateKeyFromJwk(stored.attestKey, `${where} attestKey`),
    ecdhKey: () => privateKeyFromJwk(stored.ecdhKey, `${where} ecdhKey`),
    onboardCertDer: certificateDer(stored.onboardCertPem, `${where} onboardCertPem`),
    deviceCertDer: certificateDer(stored.deviceCertPem, `${where} deviceCertPem`),
  });
}

function checkJwkShape(jwk: unknown, where: string): void {
  const j = jwk as PrivateJwk | null;
  if (!j || typeof j !== 'object' || j.kty !== 'EC' || typeof j.d !== 'string' || typeof j.x !== 'string') {
    throw new Error(`${where}: not an EC private JWK`);
  }
}

type KeySource = KeyObject | (() => KeyObject);

/** Defines `name` on `target` as the key itself, or as a getter importing it once on first use. */
function defineKey(target: object, name: string, source: KeySource): void {
  if (typeof source !== 'function') {
    Object.defineProperty(target, name, { value: source, enumerable: true });
    return;
  }
  let key: KeyObject | undefined;
  Object.defineProperty(target, name, { enumerable: true, get: () => (key ??= source()) });
}

function assemble(
  s: StoredDeviceIdentity,
  k: {
    onboardKey: KeySource;
    deviceKey: KeyObject;
    attestKey: KeySource;
    ecdhKey: KeySource;
    onboardCertDer: Uint8Array;
    deviceCertDer: Uint8Array;
  },
): DeviceIdentityMaterial {
  const identity = {
    index: s.index,
    serial: s.serial,
    softSerial: s.softSerial,
    onboardCertPem: s.onboardCertPem,
    deviceCertPem: s.deviceCertPem,
    deviceKey: k.deviceKey,
    attestCertPem: s.attestCertPem,
    ecdhCertPem: s.ecdhCertPem,
    onboardCertDer: k.onboardCertDer,
    deviceCertDer: k.deviceCertDer,
    onboardCertHash: senderCertHash(k.onboardCertDer),
    deviceCertHash: senderCertHash(k.deviceCertDer),
    onboardCertB64Pem: new Uint8Array(Buffer.from(Buffer.from(s.onboardCertPem, 'utf8').toString('base64'), 'latin1')),
  };
  defineKey(identity, 'onboardKey', k.onboardKey);
  defineKey(identity, 'attestKey', k.attestKey);
  defineKey(identity, 'ecdhKey', k.ecdhKey);
  return identity as DeviceIdentityMaterial;
}
