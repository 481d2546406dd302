// Public areas of the software TPM's keys, built from node:crypto keys, and the way back from a
// public area to a KeyObject (for verifying quotes):
//   - the quote key: ECC P-256, restricted ECDSA-SHA256 signer, EVE's attributes 0x00050472;
//   - the endorsement key: RSA-2048 in the TCG default template L-1 (EK Credential Profile 2.0).

import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { P256_SPKI_PREFIX } from '../identity/keys.js';
import type { EccPublic, RsaPublic, TpmPublic } from './tpm-public.js';
import {
  EVE_QUOTE_KEY_ATTRIBUTES,
  TCG_EK_ATTRIBUTES,
  TCG_EK_AUTH_POLICY,
  TPM_ALG_AES,
  TPM_ALG_CFB,
  TPM_ALG_ECC,
  TPM_ALG_ECDSA,
  TPM_ALG_RSA,
  TPM_ALG_SHA256,
  TPM_ECC_NIST_P256,
} from './tpm-constants.js';

const P256_COORD = 32;

function leftPad(b: Uint8Array, size: number, what: string): Uint8Array {
  if (b.length > size) throw new RangeError(`${what}: ${b.length} bytes, more than ${size}`);
  if (b.length === size) return b;
  const out = new Uint8Array(size);
  out.set(b, size - b.length);
  return out;
}

// SubjectPublicKeyInfo of a P-256 key: P256_SPKI_PREFIX (26 bytes), then 04 || x || y (65 bytes).

/**
 * P-256 point of a public (or private) KeyObject, 32 bytes each. Read from the SPKI DER, not a
 * JWK: a JWK export of a freshly generated key can deadlock Node 20 (identity/keys.ts).
 */
export function p256Point(key: KeyObject): { x: Uint8Array; y: Uint8Array } {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const der = pub.export({ format: 'der', type: 'spki' });
  if (der.length !== P256_SPKI_PREFIX.length + 65 || !der.subarray(0, P256_SPKI_PREFIX.length).equals(P256_SPKI_PREFIX) || der[P256_SPKI_PREFIX.length] !== 4) {
    const d = pub.asymmetricKeyDetails;
    throw new TypeError(`expected a P-256 key, got ${pub.asymmetricKeyType}${d?.namedCurve ? ' ' + d.namedCurve : ''}`);
  }
  const at = P256_SPKI_PREFIX.length + 1;
  return {
    x: new Uint8Array(der.subarray(at, at + P256_COORD)),
    y: new Uint8Array(der.subarray(at + P256_COORD, at + 2 * P256_COORD)),
  };
}

/** EVE's quote key public area: ECC P-256, restricted signer, ECDSA-SHA256, no symmetric, no KDF. */
export function quoteKeyPublic(key: KeyObject, objectAttributes = EVE_QUOTE_KEY_ATTRIBUTES): EccPublic {
  const { x, y } = p256Point(key);
  return {
    type: TPM_ALG_ECC,
    nameAlg: TPM_ALG_SHA256,
    objectAttributes,
    authPolicy: new Uint8Array(0),
    symmetric: null,
    scheme: { scheme: TPM_ALG_ECDSA, hashAlg: TPM_ALG_SHA256 },
    curveId: TPM_ECC_NIST_P256,
    kdf: null,
    x,
    y,
  };
}

/** TCG template L-1 with the TPM's modulus in unique: exactly what tpm2_createek -G rsa returns. */
export function ekPublicFromModulus(modulus: Uint8Array): RsaPublic {
  if (modulus.length !== 256) throw new RangeError(`RSA-2048 EK modulus must be 256 bytes, got ${modulus.length}`);
  return {
    type: TPM_ALG_RSA,
    nameAlg: TPM_ALG_SHA256,
    objectAttributes: TCG_EK_ATTRIBUTES,
    authPolicy: new Uint8Array(TCG_EK_AUTH_POLICY),
    symmetric: { algorithm: TPM_ALG_AES, keyBits: 128, mode: TPM_ALG_CFB },
    scheme: null,
    keyBits: 2048,
    exponent: 0,
    modulus,
  };
}

function bytesToB64url(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64url');
}

/** A public KeyObject from a TPM public area (P-256 ECC or RSA), for verifying signatures. */
export function publicKeyOf(p: TpmPublic, where = 'TPM public area'): KeyObject {
  let jwk: JsonWebKey;
  if (p.type === TPM_ALG_ECC) {
    if (p.curveId !== TPM_ECC_NIST_P256) throw new RangeError(`${where}: curve 0x${p.curveId.toString(16)} is not NIST P-256`);
    jwk = { kty: 'EC', crv: 'P-256', x: bytesToB64url(leftPad(p.x, 32, `${where} x`)), y: bytesToB64url(leftPad(p.y, 32, `${where} y`)) };
  } else {
    const e = p.exponent === 0 ? 65537 : p.exponent;
    const eBytes = Buffer.from(e.toString(16).padStart(e.toString(16).length + (e.toString(16).length % 2), '0'), 'hex');
    jwk = { kty: 'RSA', n: bytesToB64url(p.modulus), e: bytesToB64url(eBytes) };
  }
  try {
    return createPublicKey({ key: jwk, format: 'jwk' });
  } catch (e) {
    throw new Error(`${where}: not a usable public key: ${(e as Error).message}`);
  }
}
