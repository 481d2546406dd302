// The three certificate hashes on the wire (eve-wire-facts §1.2, §1.3, §4.2). They differ in what
// is hashed (DER vs PEM text) and how much is kept; mixing them up makes every signature "cert miss".

import { createHash } from 'node:crypto';

const sha256 = (bytes: Uint8Array | string): Uint8Array => new Uint8Array(createHash('sha256').update(bytes).digest());

/** AuthContainer.senderCertHash of a device request: SHA-256 over the certificate DER, all 32 bytes. */
export function senderCertHash(certDer: Uint8Array): Uint8Array {
  return sha256(certDer);
}

/**
 * ZCert.certHash with HASH_ALGORITHM_SHA256_16BYTES: first 16 bytes of SHA-256 over the PEM bytes
 * exactly as carried in ZCert.cert (device certs in attestation: the PEM file bytes; Adam's
 * controller certs: the trimmed PEM block).
 */
export function zcertHash16(pemBytes: Uint8Array | string): Uint8Array {
  return sha256(pemBytes).subarray(0, 16);
}

/**
 * Controller signing-certificate hash that responses carry in senderCertHash: SHA-256 over the
 * signing certificate's PEM bytes exactly as served in ZCert.cert (no re-encoding, no trimming).
 */
export function pemSha256(pemBytes: Uint8Array | string): Uint8Array {
  return sha256(pemBytes);
}

/** Adam trims whitespace around each PEM block before serving and hashing it (§4.2). */
export function trimPem(pem: string): string {
  return pem.trim();
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
