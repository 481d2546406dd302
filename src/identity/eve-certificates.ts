// The certificates an EVE device makes for itself (eve-wire-facts §2.4): the self-signed device
// certificate, and the attestation (type 11) and ECDH (type 13) certificates it issues with it.

import type { KeyObject } from 'node:crypto';
import { addYears, issueCertificate, randomSerial, wholeSeconds, type IssuedCertificate, type NameAttributes } from './certificate.js';

const DAY_MS = 86_400_000;

export const DEVICE_SUBJECT: NameAttributes = { O: 'The Linux Foundation', CN: 'EVE' };

const ISSUED_SUBJECT_BASE: NameAttributes = { C: 'US', ST: 'CA', L: 'San Francisco', O: 'The Linux Foundation' };
export const ATTEST_SUBJECT: NameAttributes = { ...ISSUED_SUBJECT_BASE, CN: 'Device Attestation certificate' };
export const ECDH_SUBJECT: NameAttributes = { ...ISSUED_SUBJECT_BASE, CN: 'Device ECDH certificate' };

export interface DeviceCertificate extends IssuedCertificate {
  notBefore: Date;
  notAfter: Date;
}

/**
 * Self-signed device certificate: ECDSA P-256, CN=EVE, O=The Linux Foundation, CA, KeyUsage
 * digitalSignature+keyCertSign, EKU clientAuth+serverAuth, valid from now−1 day for 20 years.
 */
export function createDeviceCertificate(privateKey: KeyObject, publicKey: KeyObject | Uint8Array, nowMs: number): DeviceCertificate {
  const notBefore = wholeSeconds(nowMs - DAY_MS);
  const notAfter = addYears(notBefore, 20);
  const cert = issueCertificate(
    {
      serial: randomSerial(),
      subject: DEVICE_SUBJECT,
      notBefore,
      notAfter,
      publicKey,
      ca: true,
      keyUsage: ['digitalSignature', 'keyCertSign'],
      extKeyUsage: ['clientAuth', 'serverAuth'],
    },
    privateKey,
  );
  return { ...cert, notBefore, notAfter };
}

/**
 * A certificate the device issues with its own key (attestation or ECDH): KeyUsage
 * keyEncipherment+digitalSignature, EKU serverAuth, validity copied from the device certificate.
 */
export function createDeviceIssuedCertificate(
  kind: 'attest' | 'ecdh',
  subjectPublicKey: KeyObject | Uint8Array,
  device: { privateKey: KeyObject; cert: DeviceCertificate },
): IssuedCertificate {
  return issueCertificate(
    {
      serial: randomSerial(),
      subject: kind === 'attest' ? ATTEST_SUBJECT : ECDH_SUBJECT,
      issuer: DEVICE_SUBJECT,
      notBefore: device.cert.notBefore,
      notAfter: device.cert.notAfter,
      publicKey: subjectPublicKey,
      ca: false,
      keyUsage: ['digitalSignature', 'keyEncipherment'],
      extKeyUsage: ['serverAuth'],
      subjectKeyId: 'none',
      ...(device.cert.subjectKeyId ? { authorityKeyId: device.cert.subjectKeyId } : {}),
    },
    device.privateKey,
  );
}
