// AuthContainer envelopes (eve-wire-facts §1): how EVE seals requests and verifies responses, and
// how a strict controller (Adam, §1.4, §2.3) opens requests and seals responses. Pure: no I/O,
// keys come in as KeyObjects made once per device.

import { X509Certificate, sign, verify, type KeyObject } from 'node:crypto';
import { common, type auth } from '../gen/eve-types.js';
import { Msg } from './messages.js';
import { bytesEqual } from './cert-hash.js';
import { bytesOf } from './decoded-bytes.js';
import { pemBlocks } from './pem.js';
import { ecdsaDerToRs, ecdsaRsToDer } from './ecdsa-signature-forms.js';
import { ecCurveBytes } from './ec-curve-bytes.js';
import { knownGood, rememberGood } from './verified-signatures.js';

export type EnvelopeErrorKind =
  /** Body is empty or not an AuthContainer (Adam: 500; register: 400). */
  | 'bad-envelope'
  /** senderCertHash empty (Adam: 401). */
  | 'empty-hash'
  /** senderCertHash neither 16 nor 32 bytes (EVE: "hash size error"). */
  | 'hash-size'
  /** algo is not SHA256_16BYTES or SHA256_32BYTES (EVE: "algo fail"). */
  | 'algo'
  /** senderCertHash does not name the trusted signing cert (EVE: "cert miss" → refetch /certs). */
  | 'cert-miss'
  /** No registered device has this certificate hash (Adam: 401). */
  | 'unknown-signer'
  /** Register: senderCert is not base64 of a PEM certificate (Adam: 400). */
  | 'bad-sender-cert'
  /** Signature does not verify (EVE: "sign verify fail"; Adam: 401). */
  | 'bad-signature';

export class EnvelopeError extends Error {
  constructor(
    readonly kind: EnvelopeErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'EnvelopeError';
  }
}

const SHA256_16 = common.HashAlgorithm.HASH_ALGORITHM_SHA256_16BYTES;
const SHA256_32 = common.HashAlgorithm.HASH_ALGORITHM_SHA256_32BYTES;
const EMPTY = new Uint8Array(0);

// ---------------------------------------------------------------------------------------------
// Signatures

// ECDSA signatures are made and checked as DER and converted to and from r‖s here. Node's
// 'ieee-p1363' encoding, like asymmetricKeyDetails, makes OpenSSL 3 build a legacy EC_KEY copy
// beside the provider's key and keep it for the key's life: about 2 KiB more per device key
// (measured: 10,000 P-256 keys, 2.4 KiB of RSS each signing DER, 4.4 KiB signing r‖s).

function signEcdsaRs(payload: Uint8Array, key: KeyObject, size: number): Uint8Array {
  return ecdsaDerToRs(sign('sha256', payload, key), size);
}

/**
 * EVE's request signature: ECDSA over SHA-256(payload) as raw r‖s, each half left-padded to the
 * curve size. EVE refuses RSA device keys and curves whose size is not a multiple of 8 bytes.
 */
export function signRequestPayload(payload: Uint8Array, key: KeyObject): Uint8Array {
  const size = ecCurveBytes(key);
  if (size === undefined) throw new Error(`EVE signs requests only with ECDSA keys, not ${key.asymmetricKeyType}`);
  if (size % 8 !== 0) throw new Error(`EVE cannot sign with a ${size * 8}-bit-coordinate EC key (size not a multiple of 8 bytes)`);
  return signEcdsaRs(payload, key, size);
}

/** A controller's response signature: ECDSA r‖s, or RSA PKCS#1 v1.5, over SHA-256(payload). */
export function signResponsePayload(payload: Uint8Array, key: KeyObject): Uint8Array {
  if (key.asymmetricKeyType === 'ec') {
    const size = ecCurveBytes(key);
    if (size === undefined) throw new Error('cannot sign responses with an EC key whose curve size is unknown');
    return signEcdsaRs(payload, key, size);
  }
  if (key.asymmetricKeyType === 'rsa') return new Uint8Array(sign('sha256', payload, key));
  throw new Error(`cannot sign responses with a ${key.asymmetricKeyType} key`);
}

/** r‖s only for ECDSA (a DER signature fails, as in EVE); PKCS#1 v1.5 for RSA. */
function verifyRaw(payload: Uint8Array, signature: Uint8Array, key: KeyObject): boolean {
  try {
    if (key.asymmetricKeyType === 'ec') {
      const size = ecCurveBytes(key);
      if (size === undefined || signature.length !== 2 * size) return false;
      // DER built here, not dsaEncoding 'ieee-p1363': Node's r‖s path gives each key a legacy
      // EC_KEY copy (2.0 KiB more a key) and verifies slower (73-86 µs against 64-70, here).
      return verify('sha256', payload, key, ecdsaRsToDer(signature));
    }
    if (key.asymmetricKeyType === 'rsa') return verify('sha256', payload, key, signature);
    return false;
  } catch {
    return false;
  }
}

/** Does the signature parse as ASN.1 SEQUENCE { INTEGER r, INTEGER s } (what Adam tries first)? */
function isDerEcdsaSignature(sig: Uint8Array): boolean {
  if (sig.length < 8 || sig[0] !== 0x30) return false;
  let at = 1;
  const readLen = (): number => {
    const first = sig[at++]!;
    if (first < 0x80) return first;
    const n = first & 0x7f;
    if (n === 0 || n > 2) return -1;
    let len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + sig[at++]!;
    return len;
  };
  const seqLen = readLen();
  if (seqLen < 0 || at + seqLen > sig.length) return false;
  for (let i = 0; i < 2; i++) {
    if (sig[at++] !== 0x02) return false;
    const len = readLen();
    if (len <= 0 || at + len > sig.length) return false;
    at += len;
  }
  return true;
}

/** Adam's check: RSA PKCS#1 v1.5; ECDSA as ASN.1 DER if it parses as such, else as r‖s. */
function verifyLikeAdam(payload: Uint8Array, signature: Uint8Array, key: KeyObject, acceptDer: boolean): boolean {
  if (acceptDer && key.asymmetricKeyType === 'ec' && isDerEcdsaSignature(signature)) {
    try {
      return verify('sha256', payload, { key, dsaEncoding: 'der' }, signature);
    } catch {
      return false;
    }
  }
  return verifyRaw(payload, signature, key);
}

// ---------------------------------------------------------------------------------------------
// Device side (EVE)

export interface RequestSigner {
  /** Device key (or onboarding key for /register). */
  key: KeyObject;
  /** SHA-256 over the DER of the sender certificate, 32 bytes. */
  certDerHash: Uint8Array;
  /** Only for /register: the bytes of base64(onboarding PEM file). */
  senderCertB64Pem?: Uint8Array;
}

/** AuthContainer bytes for a request, exactly as EVE builds them (§1.2). */
export function sealRequest(payload: Uint8Array, signer: RequestSigner): Uint8Array {
  if (signer.certDerHash.length !== 32) throw new Error(`senderCertHash must be the 32-byte SHA-256 of the DER, got ${signer.certDerHash.length} bytes`);
  const container: auth.AuthContainer = {
    protectedPayload: { payload },
    algo: SHA256_32,
    senderCertHash: signer.certDerHash,
    signatureHash: signRequestPayload(payload, signer.key),
  };
  if (signer.senderCertB64Pem && signer.senderCertB64Pem.length > 0) container.senderCert = signer.senderCertB64Pem;
  return Msg.AuthContainer.encode(container);
}

export interface ResponseTrust {
  /** SHA-256 over the signing certificate PEM exactly as served in ZCert.cert (32 bytes). */
  signingCertPemHash: Uint8Array;
  /** Public (or private) key of the controller signing certificate. */
  signingKey: KeyObject;
}

export interface OpenedEnvelope {
  payload: Uint8Array;
  container: auth.AuthContainer;
}

function decodeContainer(bytes: Uint8Array): auth.AuthContainer {
  if (bytes.length === 0) throw new EnvelopeError('bad-envelope', 'empty body, expected an AuthContainer');
  try {
    return Msg.AuthContainer.decode(bytes);
  } catch (e) {
    throw new EnvelopeError('bad-envelope', `body is not an AuthContainer: ${(e as Error).message}`);
  }
}

const payloadOf = (c: auth.AuthContainer): Uint8Array => bytesOf(c.protectedPayload?.payload);

/**
 * Verifies a controller response as EVE does (§1.3): hash size 16 or 32, algo 1 compares the first
 * 16 bytes and algo 2 all 32 against SHA-256(signing PEM), then the signature (r‖s only for ECDSA).
 */
export function openResponse(bytes: Uint8Array, trust: ResponseTrust): OpenedEnvelope {
  const c = decodeContainer(bytes);
  const hash = bytesOf(c.senderCertHash);
  if (hash.length !== 16 && hash.length !== 32) {
    throw new EnvelopeError('hash-size', `senderCertHash is ${hash.length} bytes, expected 16 or 32`);
  }
  const algo = c.algo ?? 0;
  let expected: Uint8Array;
  if (algo === SHA256_16) expected = trust.signingCertPemHash.subarray(0, 16);
  else if (algo === SHA256_32) expected = trust.signingCertPemHash;
  else throw new EnvelopeError('algo', `hash algorithm ${algo} is neither SHA256_16BYTES (1) nor SHA256_32BYTES (2)`);
  if (!bytesEqual(hash, expected)) {
    throw new EnvelopeError('cert-miss', `senderCertHash ${Buffer.from(hash).toString('hex')} is not the controller signing certificate`);
  }
  const payload = payloadOf(c);
  const signature = bytesOf(c.signatureHash);
  if (!knownGood(payload, signature, trust.signingKey)) {
    if (!verifyRaw(payload, signature, trust.signingKey)) {
      throw new EnvelopeError('bad-signature', `signature (${signature.length} bytes) does not verify with the controller signing key`);
    }
    rememberGood(payload, signature, trust.signingKey);
  }
  return { payload, container: c };
}

/**
 * Opens an envelope without verifying header or signature, as EVE does for the /certs response
 * (§1.3 step 6: the certificate chain inside is checked instead).
 */
export function openUnverified(bytes: Uint8Array): OpenedEnvelope {
  const c = decodeContainer(bytes);
  return { payload: payloadOf(c), container: c };
}

// ---------------------------------------------------------------------------------------------
// Controller side (a strict controller, as Adam)

export interface RequestVerifyOptions {
  /** Accept ASN.1 DER ECDSA signatures besides r‖s, as Adam does (default true). */
  acceptDer?: boolean;
}

/**
 * Opens a device request like Adam (§1.4): senderCertHash must be non-empty and match a registered
 * device's SHA-256(DER) via `lookup` (the algo field is ignored; a 16-byte hash never matches),
 * and the signature must verify with that device's key.
 */
export function openRequest<S extends { publicKey: KeyObject }>(
  bytes: Uint8Array,
  lookup: (certDerHash: Uint8Array) => S | undefined,
  opts: RequestVerifyOptions = {},
): OpenedEnvelope & { signer: S } {
  const c = decodeContainer(bytes);
  const hash = bytesOf(c.senderCertHash);
  if (hash.length === 0) throw new EnvelopeError('empty-hash', 'senderCertHash is empty');
  const signer = hash.length === 32 ? lookup(hash) : undefined;
  if (!signer) throw new EnvelopeError('unknown-signer', `no registered device certificate has SHA-256 ${Buffer.from(hash).toString('hex')}`);
  const payload = payloadOf(c);
  if (!verifyLikeAdam(payload, bytesOf(c.signatureHash), signer.publicKey, opts.acceptDer ?? true)) {
    throw new EnvelopeError('bad-signature', 'request signature does not verify with the registered device certificate');
  }
  return { payload, container: c, signer };
}

export interface RegisterEnvelope extends OpenedEnvelope {
  /** The onboarding certificate that verified the signature: PEM text, DER, parsed. */
  onboardCertPem: string;
  onboardCertDer: Uint8Array;
  onboardCert: X509Certificate;
}

/**
 * Opens a /register request like Adam (§2.3): non-empty payload, non-empty senderCertHash (value
 * not checked), senderCert = base64 of PEM holding ≥1 certificate, signature verifying with one of them.
 */
export function openRegisterRequest(bytes: Uint8Array, opts: RequestVerifyOptions = {}): RegisterEnvelope {
  const c = decodeContainer(bytes);
  const payload = payloadOf(c);
  if (payload.length === 0) throw new EnvelopeError('bad-envelope', 'register payload is empty');
  if (bytesOf(c.senderCertHash).length === 0) throw new EnvelopeError('empty-hash', 'senderCertHash is empty');
  const b64 = Buffer.from(bytesOf(c.senderCert)).toString('latin1').replace(/[\r\n]/g, '');
  if (b64.length === 0 || b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) {
    throw new EnvelopeError('bad-sender-cert', 'senderCert is not standard base64');
  }
  const pem = Buffer.from(b64, 'base64').toString('latin1');
  let certs: { pem: string; der: Uint8Array; cert: X509Certificate }[];
  try {
    certs = pemBlocks(pem)
      .filter((b) => b.type === 'CERTIFICATE')
      .map((b) => ({ pem: b.text, der: b.der, cert: new X509Certificate(b.der) }));
  } catch (e) {
    throw new EnvelopeError('bad-sender-cert', `senderCert PEM does not parse: ${(e as Error).message}`);
  }
  if (certs.length === 0) throw new EnvelopeError('bad-sender-cert', 'senderCert holds no PEM certificate');
  const acceptDer = opts.acceptDer ?? true;
  const signature = bytesOf(c.signatureHash);
  const match = certs.find((x) => verifyLikeAdam(payload, signature, x.cert.publicKey, acceptDer));
  if (!match) throw new EnvelopeError('bad-signature', 'register signature does not verify with the onboarding certificate in senderCert');
  return { payload, container: c, onboardCertPem: pem, onboardCertDer: match.der, onboardCert: match.cert };
}

/** A controller response envelope as Adam builds it (§1.4): algo 2, SHA-256 of the served signing PEM. */
export function sealResponse(payload: Uint8Array, signingKey: KeyObject, signingCertPemHash: Uint8Array): Uint8Array {
  if (signingCertPemHash.length !== 32) throw new Error(`signing certificate hash must be 32 bytes, got ${signingCertPemHash.length}`);
  return Msg.AuthContainer.encode({
    protectedPayload: { payload },
    algo: SHA256_32,
    senderCertHash: signingCertPemHash,
    signatureHash: signResponsePayload(payload, signingKey),
  });
}
