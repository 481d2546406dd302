// EVE's "EK certificate" (ek.cert.pem, ZCertType 12, tpm-facts §11): EVE issues it itself with
// the device key for the TPM's RSA endorsement key — it is not a manufacturer EK certificate. Like
// the attestation and ECDH certificates it copies the device certificate's validity, has KeyUsage
// digitalSignature|keyEncipherment and EKU serverAuth.

import { createHash, X509Certificate, type KeyObject } from 'node:crypto';
import { issueCertificate, randomSerial, type IssuedCertificate } from './certificate.js';
import { ATTEST_SUBJECT, DEVICE_SUBJECT } from './eve-certificates.js';
import { publicKeyInfo } from './keys.js';

export const EK_SUBJECT = { ...ATTEST_SUBJECT, CN: 'Device Endorsement Key certificate' };

/**
 * Issues the EK certificate for `ekPublicKey` (RSA-2048) with the device key. `deviceCertPem` gives
 * the validity period and the authority key identifier (the device certificate's SKI, which Go
 * computes as SHA-1 over the public key bits for a CA certificate).
 */
export function createEkCertificate(ekPublicKey: KeyObject, device: { privateKey: KeyObject; certPem: string }): IssuedCertificate {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(device.certPem);
  } catch (e) {
    throw new Error(`EK certificate: the device certificate is not a PEM certificate (${(e as Error).message})`);
  }
  const authorityKeyId = new Uint8Array(createHash('sha1').update(publicKeyInfo(cert.publicKey).keyBits).digest());
  return issueCertificate(
    {
      serial: randomSerial(),
      subject: EK_SUBJECT,
      issuer: DEVICE_SUBJECT,
      notBefore: new Date(cert.validFrom),
      notAfter: new Date(cert.validTo),
      publicKey: ekPublicKey,
      ca: false,
      keyUsage: ['digitalSignature', 'keyEncipherment'],
      extKeyUsage: ['serverAuth'],
      subjectKeyId: 'none',
      authorityKeyId,
    },
    device.privateKey,
  );
}
