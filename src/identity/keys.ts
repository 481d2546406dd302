// Key pairs as node:crypto KeyObjects, created once per device. Keys are stored as JWK in the fleet
// state because importing a JWK costs about 0.15 ms, against 0.7 ms for a PEM on this machine.

import { rememberEcCurveBytes } from '../protocol/ec-curve-bytes.js';
import { createECDH, createPrivateKey, createPublicKey, generateKeyPair, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';

export interface KeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

// Node 20 can deadlock on a key object that generateKeyPair(Sync) handed out: exporting it (JWK or
// DER) holds the key's lock while allocating, a garbage collection then finalises the generation
// job, and the job's destructor waits for the same lock. Seen as a thread hanging at 0 % CPU while
// creating identities (and likely the unexplained test hang of an earlier CI run). So keys are
// generated as PKCS#8 DER and imported: those key objects share nothing with a job. The import
// costs 0.2–0.6 ms, paid only when an identity or EK is first created.
const SPKI_DER = { type: 'spki', format: 'der' } as const;
const PKCS8_DER = { type: 'pkcs8', format: 'der' } as const;

export function generateP256(): KeyPair {
  return keyPairFromPkcs8(generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding: SPKI_DER, privateKeyEncoding: PKCS8_DER }).privateKey);
}

export function generateRsa(bits: number, publicExponent = 65537): KeyPair {
  return keyPairFromPkcs8(generateKeyPairSync('rsa', { modulusLength: bits, publicExponent, publicKeyEncoding: SPKI_DER, privateKeyEncoding: PKCS8_DER }).privateKey);
}

let keyMaker: ReturnType<typeof createECDH> | undefined;

/** A P-256 key pair as raw bytes: the 32-byte private scalar and the 65-byte uncompressed public point. */
export interface RawP256 {
  d: Uint8Array;
  point: Uint8Array;
}

/**
 * A P-256 key pair as raw bytes, the cheapest way node:crypto makes one: an ECDH object generates
 * it in about 30 µs, against about 0.3 ms for generateKeyPairSync plus 0.4 ms to import its DER
 * (OpenSSL 3's encoders and decoders). No KeyObject and no keygen job is involved, so the Node 20
 * deadlock above cannot happen; key objects are made from the bytes by p256KeyFromRaw when needed.
 */
export function generateP256Raw(): RawP256 {
  // One ECDH object per thread: each generateKeys() draws a new private key (OpenSSL's
  // EC_KEY_generate_key), and making the object costs as much as a third of the key.
  const ecdh = (keyMaker ??= createECDH('prime256v1'));
  const point = ecdh.generateKeys();
  const d = ecdh.getPrivateKey();
  // OpenSSL drops leading zero bytes of the scalar; a stored scalar is always 32 bytes.
  const padded = d.length === 32 ? d : Buffer.concat([Buffer.alloc(32 - d.length), d]);
  return { d: new Uint8Array(padded), point: new Uint8Array(point) };
}

/** The private JWK of a raw P-256 key pair. */
export function p256Jwk(raw: RawP256): PrivateJwk {
  const p = Buffer.from(raw.point.buffer, raw.point.byteOffset, raw.point.byteLength);
  return {
    kty: 'EC',
    crv: 'P-256',
    x: p.subarray(1, 33).toString('base64url'),
    y: p.subarray(33, 65).toString('base64url'),
    d: Buffer.from(raw.d.buffer, raw.d.byteOffset, raw.d.byteLength).toString('base64url'),
  };
}

/**
 * Private key object of a raw P-256 key pair, imported as SEC 1 DER with its public point: about
 * 0.11 ms. The point must be on the curve, but is not checked against the scalar (that would cost
 * a key generation): it comes from generateP256Raw or from a checksummed batch file.
 *
 * A JWK import costs about 0.07 ms but makes a legacy EC_KEY that OpenSSL 3 converts to a provider
 * key at the first signature, and then keeps both: 5.4 KiB of RSS per key against 3.7 KiB, held
 * for the life of every device (bench/device-key-memory). The first signature of the SEC 1 key is
 * about 20 µs cheaper, so the import costs about 40 µs more all told, once per device and run.
 */
export function p256KeyFromRaw(raw: RawP256): KeyObject {
  if (raw.d.length !== 32 || raw.point.length !== 65) throw new Error(`a raw P-256 key has a 32-byte scalar and a 65-byte point, got ${raw.d.length} and ${raw.point.length}`);
  const der = Buffer.concat([SEC1_P256_WITH_POINT_HEAD, raw.d, SEC1_P256_WITH_POINT_MIDDLE, raw.point]);
  return rememberEcCurveBytes(createPrivateKey({ key: der, format: 'der', type: 'sec1' }), 32);
}

/** generateRsa on libuv's thread pool, so the event loop stays free (RSA-2048 takes ~100 ms). */
export function generateRsaAsync(bits: number, publicExponent = 65537): Promise<KeyPair> {
  return new Promise((resolve, reject) => {
    generateKeyPair('rsa', { modulusLength: bits, publicExponent, publicKeyEncoding: SPKI_DER, privateKeyEncoding: PKCS8_DER }, (err, _pub, der) => {
      if (err) reject(err);
      else resolve(keyPairFromPkcs8(der));
    });
  });
}

/** Key objects of a PKCS#8 DER private key and its public half. */
export function keyPairFromPkcs8(der: Buffer): KeyPair {
  const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

export interface PrivateJwk {
  kty: string;
  crv?: string;
  x?: string;
  y?: string;
  d?: string;
  [k: string]: unknown;
}

export function privateKeyToJwk(key: KeyObject): PrivateJwk {
  return key.export({ format: 'jwk' }) as PrivateJwk;
}

/** Private key from a stored JWK; `where` names the file or field for the error. */
export function privateKeyFromJwk(jwk: unknown, where: string): KeyObject {
  if (!jwk || typeof jwk !== 'object' || typeof (jwk as PrivateJwk).kty !== 'string' || !('d' in jwk)) {
    throw new Error(`${where}: not a private JWK`);
  }
  try {
    return createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch (e) {
    throw new Error(`${where}: unusable private JWK: ${(e as Error).message}`);
  }
}

/** The 32-byte private scalar of a stored P-256 JWK (what a device keeps of a key it uses rarely). */
export function p256PrivateScalar(jwk: unknown, where: string): Uint8Array {
  const j = jwk as PrivateJwk | null;
  if (!j || typeof j !== 'object' || j.kty !== 'EC' || j.crv !== 'P-256' || typeof j.d !== 'string') {
    throw new Error(`${where}: not a P-256 private JWK`);
  }
  const d = Buffer.from(j.d, 'base64url');
  if (d.length !== 32) throw new Error(`${where}: d holds ${d.length} bytes, a P-256 private scalar has 32`);
  return d;
}

// SEC 1 ECPrivateKey { version 1, privateKey OCTET STRING (32), [0] namedCurve prime256v1 }; the
// public key is left out: OpenSSL computes it from the scalar.
const SEC1_P256_HEAD = Buffer.from('30310201010420', 'hex');
const SEC1_P256_TAIL = Buffer.from('a00a06082a8648ce3d030107', 'hex');
// The same with the public key: ... [1] BIT STRING (0 unused bits, 04 ‖ x ‖ y).
const SEC1_P256_WITH_POINT_HEAD = Buffer.from('30770201010420', 'hex');
const SEC1_P256_WITH_POINT_MIDDLE = Buffer.from('a00a06082a8648ce3d030107a144034200', 'hex');

/** P-256 private key object from its 32-byte scalar. */
export function p256PrivateKeyFromScalar(d: Uint8Array): KeyObject {
  return rememberEcCurveBytes(createPrivateKey({ key: Buffer.concat([SEC1_P256_HEAD, d, SEC1_P256_TAIL]), format: 'der', type: 'sec1' }), 32);
}

/** Private key PEM (PKCS#8) for files an operator may hand to other tools. */
export function privateKeyPem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }) as string;
}

// SubjectPublicKeyInfo prefix for an uncompressed P-256 point: algorithm id-ecPublicKey + prime256v1.
export const P256_SPKI_PREFIX = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex');

/**
 * DER SubjectPublicKeyInfo and the raw public key bits. For P-256 it is built from the JWK point,
 * which is cheaper than OpenSSL's SPKI encoder; other keys go through node:crypto.
 */
export function publicKeyInfo(publicKey: KeyObject): { spki: Uint8Array; keyBits: Uint8Array } {
  if (publicKey.asymmetricKeyType === 'ec') {
    const jwk = publicKey.export({ format: 'jwk' });
    if (jwk.crv === 'P-256' && jwk.x && jwk.y) {
      const point = Buffer.concat([Buffer.of(4), Buffer.from(jwk.x, 'base64url'), Buffer.from(jwk.y, 'base64url')]);
      return { spki: Buffer.concat([P256_SPKI_PREFIX, point]), keyBits: point };
    }
  }
  const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
  return { spki, keyBits: spkiKeyBits(spki) };
}

/** The BIT STRING contents (minus the unused-bits byte) at the end of a SubjectPublicKeyInfo. */
function spkiKeyBits(spki: Uint8Array): Uint8Array {
  // SEQUENCE { AlgorithmIdentifier, BIT STRING }: skip the outer header and the algorithm element.
  let at = headerLength(spki, 0);
  at += elementLength(spki, at);
  const bitsHeader = headerLength(spki, at);
  return spki.subarray(at + bitsHeader + 1);
}

function headerLength(der: Uint8Array, at: number): number {
  const first = der[at + 1]!;
  return first < 0x80 ? 2 : 2 + (first & 0x7f);
}

function elementLength(der: Uint8Array, at: number): number {
  const first = der[at + 1]!;
  if (first < 0x80) return 2 + first;
  let len = 0;
  for (let i = 0; i < (first & 0x7f); i++) len = len * 256 + der[at + 2 + i]!;
  return 2 + (first & 0x7f) + len;
}
