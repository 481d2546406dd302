// The fleet CA: a self-signed ECDSA P-256 CA that issues each simulated device's onboarding
// certificate (the role of the installer-supplied onboarding cert in EVE, §2.4).

import { createHash, type KeyObject } from 'node:crypto';
import { certificateDer } from '../protocol/pem.js';
import { addYears, issueCertificate, randomSerial, wholeSeconds, type IssuedCertificate, type NameAttributes } from './certificate.js';
import { generateP256 } from './keys.js';

const DAY_MS = 86_400_000;

export interface FleetCa {
  certPem: string;
  certDer: Uint8Array;
  key: KeyObject;
  subject: NameAttributes;
  subjectKeyId: Uint8Array;
}

/** A short tag naming the seed in certificate subjects and directory names (not secret, not the seed). */
export function seedTag(seed: string | number): string {
  return createHash('sha256').update(`evesim-fleet|${String(seed)}`).digest('hex').slice(0, 16);
}

export function createFleetCa(seed: string | number, nowMs: number): FleetCa {
  const { privateKey, publicKey } = generateP256();
  const subject: NameAttributes = { O: 'evesim', CN: `evesim fleet CA ${seedTag(seed)}` };
  const notBefore = wholeSeconds(nowMs - DAY_MS);
  // Onboarding certificates run 20 years from their own creation; the CA outlives them.
  const cert = issueCertificate(
    {
      serial: randomSerial(),
      subject,
      notBefore,
      notAfter: addYears(notBefore, 30),
      publicKey,
      ca: true,
      pathLen: 0,
      keyUsage: ['digitalSignature', 'keyCertSign', 'cRLSign'],
    },
    privateKey,
  );
  return { certPem: cert.pem, certDer: cert.der, key: privateKey, subject, subjectKeyId: cert.subjectKeyId! };
}

/** Rebuilds a FleetCa from its stored parts. */
export function fleetCaFromParts(certPem: string, key: KeyObject, subject: NameAttributes, subjectKeyIdHex: string): FleetCa {
  return {
    certPem,
    certDer: certificateDer(certPem, 'fleet CA certificate'),
    key,
    subject,
    subjectKeyId: new Uint8Array(Buffer.from(subjectKeyIdHex, 'hex')),
  };
}

/** Onboarding certificate for one device: ECDSA P-256 leaf under the fleet CA, CN = the device serial. */
export function issueOnboardingCertificate(ca: FleetCa, publicKey: KeyObject | Uint8Array, serial: string, nowMs: number): IssuedCertificate {
  const notBefore = wholeSeconds(nowMs - DAY_MS);
  return issueCertificate(
    {
      serial: randomSerial(),
      subject: { O: 'evesim', OU: 'onboarding', CN: serial },
      issuer: ca.subject,
      notBefore,
      notAfter: addYears(notBefore, 20),
      publicKey,
      ca: false,
      keyUsage: ['digitalSignature', 'keyEncipherment'],
      extKeyUsage: ['clientAuth', 'serverAuth'],
      subjectKeyId: 'none',
      authorityKeyId: ca.subjectKeyId,
    },
    ca.key,
  );
}
