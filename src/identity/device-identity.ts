// One simulated device's identity: serials from the seed, an onboarding certificate from the fleet
// CA, and the certificates EVE makes for itself (device, attestation, ECDH) with soft keys.

import type { KeyObject } from 'node:crypto';
import { bytesEqual, senderCertHash } from '../protocol/cert-hash.js';
import { certificateDer, derToPem, pemBase64Bytes } from '../protocol/pem.js';
import { createDeviceCertificate, createDeviceIssuedCertificate } from './eve-certificates.js';
import { issueOnboardingCertificate, type FleetCa } from './fleet-ca.js';
import { readCertificates, type CertificatesRegion, type CompactDeviceIdentity } from './identity-batch-file.js';
import { generateP256Raw, p256Jwk, p256KeyFromRaw, p256PrivateKeyFromScalar, p256PrivateScalar, privateKeyFromJwk, type PrivateJwk } from './keys.js';
import { hardwareSerial, softSerial } from './serials.js';
import { smallArraySlab } from '../memory/small-array-slab.js';

/**
 * The identity a virtual device is given (DeviceOptions.identity), created once per device. Key
 * objects, never PEM parsing per call.
 */
export interface DeviceIdentity {
  serial: string;
  softSerial: string;
  /** Onboarding certificate PEM exactly as the file would hold it, and its private key object. */
  onboardCertPem: string;
  onboardKey: KeyObject;
  /** Self-signed EVE device certificate (PEM) and its key object. */
  deviceCertPem: string;
  deviceKey: KeyObject;
  /** Device-issued attestation (type 11) and ECDH (13) certificates, PEM file bytes as EVE writes them. */
  attestCertPem: string;
  ecdhCertPem: string;
  /** Private key of attestCertPem: the TPM's quote key (DeviceIdentityMaterial has it; needed only with a TPM). */
  attestKey?: KeyObject;
}

/** DeviceIdentity plus what envelopes and attestation need, computed once per device. */
export interface DeviceIdentityMaterial extends DeviceIdentity {
  /** Uses a fleet-wide onboarding certificate and key (a real controller's) instead of the device's own. */
  useSharedOnboarding(shared: SharedOnboarding): void;
  /**
   * The certificates are in batch file `path` at `region` (as written or read): memory lets them
   * go and reads them from there when asked, as EVE reads its certificates from /config and
   * /persist. The file must stay, unchanged, for as long as the identity is used.
   */
  keepCertificatesOnDisk(path: string, region: CertificatesRegion): void;
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

/** A newly made device identity: what the worker holds, and what the state directory keeps of it. */
export interface CreatedDeviceIdentity {
  identity: DeviceIdentityMaterial;
  /** The record of the binary batch file (identity-batch-file.ts). */
  compact: CompactDeviceIdentity;
  /** The same identity as the earlier one-JSON-file-per-device layout held it (made on demand). */
  readonly stored: StoredDeviceIdentity;
}

/**
 * Makes a device's four P-256 keys and four certificates, the cheapest correct way: keys as raw
 * bytes from an ECDH object (keys.ts), certificates built by hand and signed with node:crypto
 * (certificate.ts), and a single key object, the device key's (it signs the device's own
 * certificates now and every request later).
 */
export function createDeviceIdentity(ca: FleetCa, seed: string | number, index: number, nowMs: number): CreatedDeviceIdentity {
  const serial = hardwareSerial(seed, index);
  const soft = softSerial(seed, index);
  const onboard = generateP256Raw();
  const device = generateP256Raw();
  const attest = generateP256Raw();
  const ecdh = generateP256Raw();
  const deviceKey = p256KeyFromRaw(device);
  const onboardCert = issueOnboardingCertificate(ca, onboard.point, serial, nowMs);
  const deviceCert = createDeviceCertificate(deviceKey, device.point, nowMs);
  const signer = { privateKey: deviceKey, cert: deviceCert };
  const attestCert = createDeviceIssuedCertificate('attest', attest.point, signer);
  const ecdhCert = createDeviceIssuedCertificate('ecdh', ecdh.point, signer);

  const compact: CompactDeviceIdentity = {
    index,
    serial,
    softSerial: soft,
    certs: [onboardCert.der, deviceCert.der, attestCert.der, ecdhCert.der],
    scalars: [onboard.d, device.d, attest.d, ecdh.d],
    devicePoint: device.point,
  };
  const identity = new DeviceIdentityRecord(
    { index, serial, softSerial: soft, ders: compact.certs, verbatim: undefined, scalars: [onboard.d, attest.d, ecdh.d] },
    deviceKey,
  );
  return {
    identity,
    compact,
    get stored(): StoredDeviceIdentity {
      return {
        version: 1,
        index,
        serial,
        softSerial: soft,
        onboardCertPem: onboardCert.pem,
        onboardKey: p256Jwk(onboard),
        deviceCertPem: deviceCert.pem,
        deviceKey: p256Jwk(device),
        attestCertPem: attestCert.pem,
        attestKey: p256Jwk(attest),
        ecdhCertPem: ecdhCert.pem,
        ecdhKey: p256Jwk(ecdh),
      };
    },
  };
}

/** Rebuilds a device identity from its batch-file record; `where` names the file in errors. */
export function identityFromCompact(c: CompactDeviceIdentity, where: string): DeviceIdentityMaterial {
  if (c.devicePoint.length !== 65 || c.devicePoint[0] !== 4) throw new Error(`${where}: device ${c.index}: device key point is not an uncompressed P-256 point`);
  // The key object is made when the device first signs (about 0.1 ms each, most of a load).
  const raw = new Uint8Array(97);
  raw.set(c.scalars[1]);
  raw.set(c.devicePoint, 32);
  return new DeviceIdentityRecord(
    { index: c.index, serial: c.serial, softSerial: c.softSerial, ders: c.certs, verbatim: undefined, scalars: [c.scalars[0], c.scalars[2], c.scalars[3]] },
    raw,
  );
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
  const pems = [stored.onboardCertPem, stored.deviceCertPem, stored.attestCertPem, stored.ecdhCertPem];
  const ders = pems.map((pem, i) => certificateDer(pem, `${where} ${CERTS[i]}CertPem`));
  let verbatim: Partial<Record<(typeof CERTS)[number], string>> | undefined;
  pems.forEach((pem, i) => {
    if (derToPem(ders[i]!) !== pem) (verbatim ??= {})[CERTS[i]!] = pem;
  });
  const scalars = (['onboardKey', 'attestKey', 'ecdhKey'] as const).map((k) => p256PrivateScalar(stored[k], `${where} ${k}`));
  return new DeviceIdentityRecord({ index: stored.index, serial: stored.serial, softSerial: stored.softSerial, ders, verbatim, scalars }, deviceKey);
}

function checkJwkShape(jwk: unknown, where: string): void {
  const j = jwk as PrivateJwk | null;
  if (!j || typeof j !== 'object' || j.kty !== 'EC' || typeof j.d !== 'string' || typeof j.x !== 'string') {
    throw new Error(`${where}: not an EC private JWK`);
  }
}

/** What a DeviceIdentityRecord is made of, whether newly made, from a batch file or from a JSON file. */
interface RecordParts {
  index: number;
  serial: string;
  softSerial: string;
  /** DER of the onboarding, device, attestation and ECDH certificates. */
  ders: readonly Uint8Array[];
  /** PEM texts not in Go's layout, kept verbatim. */
  verbatim: Partial<Record<'onboard' | 'device' | 'attest' | 'ecdh', string>> | undefined;
  /** Private scalars of the onboarding, attestation and ECDH keys. */
  scalars: readonly Uint8Array[];
}

/** The four certificates of a device, in the order they sit in DeviceIdentityRecord.certs. */
const CERTS = ['onboard', 'device', 'attest', 'ecdh'] as const;

/**
 * A device identity as a worker holds it for the whole run, thousands of times over, so it keeps
 * little: its four certificates as DER in one buffer (PEM text is 4/3 of that and was 3 KiB a
 * device), or once the fleet store wrote or read them in a batch file only where they are there
 * (they are used a few times per boot), the device key (made on first use for an identity read from a batch file) and the
 * hash of its certificate (both used on every request), and the
 * private scalars of the three keys used rarely. Everything else is derived when asked, through
 * prototype getters that cost nothing per device: the PEM texts (Go's encoding/pem layout, so
 * byte for byte what the state file holds; a file in another layout keeps its text as is), the
 * onboarding hash and base64 used by register, and the onboarding, attestation and ECDH key
 * objects.
 */
class DeviceIdentityRecord implements DeviceIdentityMaterial {
  readonly index: number;
  readonly serial: string;
  readonly softSerial: string;
  /** The device key object, once made (identities loaded from a batch file make it on first use). */
  private deviceKeyObject: KeyObject | undefined;
  /** The device key's scalar and public point (d‖point) until its key object is made. */
  private deviceKeyRaw: Uint8Array | undefined;
  readonly deviceCertHash: Uint8Array;
  /** DER of the onboarding, device, attestation and ECDH certificates, back to back (undefined: on disk). */
  private certs: Uint8Array | undefined;
  /** Where each certificate ends in `certs`. */
  private ends: readonly [number, number, number, number] | undefined;
  /** The batch file and bytes that hold the certificates once memory let them go (2 KiB a device). */
  private certsOnDisk: { path: string; region: CertificatesRegion } | undefined;
  /** PEM texts not in Go's layout, kept verbatim (absent for files evesim wrote). */
  private readonly verbatim: Partial<Record<(typeof CERTS)[number], string>> | undefined;
  /** Private scalars (32 bytes each) of the onboarding, attestation and ECDH keys, as latin1 text
   *  in the heap: as a Uint8Array of its own they cost 200–250 bytes more RSS (20,000 identities). */
  private readonly scalars: string;
  private shared: SharedOnboarding | undefined;

  constructor(p: RecordParts, deviceKey: KeyObject | Uint8Array) {
    this.index = p.index;
    this.serial = p.serial;
    this.softSerial = p.softSerial;
    if (deviceKey instanceof Uint8Array) this.deviceKeyRaw = deviceKey;
    else this.deviceKeyObject = deviceKey;
    const certs = new Uint8Array(p.ders.reduce((n, d) => n + d.length, 0));
    let at = 0;
    const ends: number[] = [];
    p.ders.forEach((d) => {
      certs.set(d, at);
      at += d.length;
      ends.push(at);
    });
    this.certs = certs;
    this.ends = ends as unknown as [number, number, number, number];
    this.verbatim = p.verbatim;
    // In the thread's slab: an array of its own would get a native backing store (memory/small-array-slab.ts).
    this.deviceCertHash = smallArraySlab.copyBytes(senderCertHash(p.ders[1]!));
    const scalars = Buffer.alloc(96);
    p.scalars.forEach((d, i) => scalars.set(d, 32 * i));
    this.scalars = scalars.toString('latin1');
    scalars.fill(0);
  }

  /** Uses an onboarding certificate shared by the whole fleet (a real controller's) instead of the device's own. */
  useSharedOnboarding(shared: SharedOnboarding): void {
    this.shared = shared;
  }

  keepCertificatesOnDisk(path: string, region: CertificatesRegion): void {
    this.certsOnDisk = { path, region };
    this.certs = undefined;
    this.ends = undefined;
  }

  /** Used on every request: made once, on first use, and kept. */
  get deviceKey(): KeyObject {
    if (this.deviceKeyObject) return this.deviceKeyObject;
    const raw = this.deviceKeyRaw!;
    try {
      this.deviceKeyObject = p256KeyFromRaw({ d: raw.subarray(0, 32), point: raw.subarray(32) });
    } catch (e) {
      throw new Error(`device ${this.index}: unusable stored device key: ${(e as Error).message}`);
    }
    this.deviceKeyRaw = undefined;
    return this.deviceKeyObject;
  }

  get onboardCertPem(): string {
    return this.shared?.certPem ?? this.pem(0);
  }
  get deviceCertPem(): string {
    return this.pem(1);
  }
  get attestCertPem(): string {
    return this.pem(2);
  }
  get ecdhCertPem(): string {
    return this.pem(3);
  }
  // A key object holds 3–6 KiB of OpenSSL memory outside the JS heap, so these are made on each
  // use (0.15–0.5 ms: OpenSSL derives the public point) instead of kept. Each is used about once
  // per boot: register signs with the onboarding key, the TPM keeps its own quote key, the vault
  // key is derived once from the ECDH key.
  get onboardKey(): KeyObject {
    return this.shared?.key ?? this.key(0);
  }
  get attestKey(): KeyObject {
    return this.key(1);
  }
  get ecdhKey(): KeyObject {
    return this.key(2);
  }
  get onboardCertDer(): Uint8Array {
    return this.shared?.der ?? this.der(0);
  }
  get deviceCertDer(): Uint8Array {
    return this.der(1);
  }
  get onboardCertHash(): Uint8Array {
    return this.shared?.hash ?? senderCertHash(this.onboardCertDer);
  }
  get onboardCertB64Pem(): Uint8Array {
    return this.shared?.b64Pem ?? pemBase64Bytes(this.onboardCertPem);
  }

  private der(i: number): Uint8Array {
    if (this.certs !== undefined) return this.certs.slice(i === 0 ? 0 : this.ends![i - 1], this.ends![i]);
    const { path, region } = this.certsOnDisk!;
    const where = `device ${this.index}`;
    const ders = readCertificates(path, region, where);
    // The file was checked when read (SHA-256 over all of it); the hash every request carries
    // catches a file replaced since.
    if (!bytesEqual(senderCertHash(ders[1]!), this.deviceCertHash)) {
      throw new Error(`${where}: ${path} no longer holds its certificates (the device certificate changed since it was read)`);
    }
    return new Uint8Array(ders[i]!);
  }
  private pem(i: number): string {
    return this.verbatim?.[CERTS[i]!] ?? derToPem(this.der(i));
  }
  private key(i: number): KeyObject {
    const d = Buffer.from(this.scalars.slice(32 * i, 32 * i + 32), 'latin1');
    try {
      return p256PrivateKeyFromScalar(d);
    } finally {
      d.fill(0);
    }
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
  return { certPem, key, der, hash: senderCertHash(der), b64Pem: pemBase64Bytes(certPem) };
}
