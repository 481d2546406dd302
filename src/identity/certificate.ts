// Issues X.509 v3 certificates synchronously with node:crypto signatures. Extension order and
// encodings follow Go's crypto/x509 CreateCertificate, since EVE makes its certificates with it.

import { createHash, randomBytes, sign, type KeyObject } from 'node:crypto';
import { derToPem } from '../protocol/pem.js';
import {
  bitStringBytes,
  boolean,
  concat,
  directoryString,
  explicit,
  ia5String,
  namedBits,
  nullValue,
  octetString,
  oid,
  seq,
  set,
  smallInteger,
  time,
  tlv,
  unsignedInteger,
  type Der,
} from './der.js';
import { P256_SPKI_PREFIX, publicKeyInfo } from './keys.js';

/** Distinguished name attributes, written in Go's pkix.Name order (C, ST, L, O, OU, CN). */
export interface NameAttributes {
  C?: string;
  ST?: string;
  L?: string;
  O?: string;
  OU?: string;
  CN?: string;
}

export type KeyUsageName =
  | 'digitalSignature'
  | 'contentCommitment'
  | 'keyEncipherment'
  | 'dataEncipherment'
  | 'keyAgreement'
  | 'keyCertSign'
  | 'cRLSign';

export type ExtKeyUsageName = 'serverAuth' | 'clientAuth';

export interface CertificateSpec {
  /** Unsigned big-endian serial; see randomSerial(). */
  serial: Uint8Array;
  subject: NameAttributes;
  /** The issuer's subject; omit for a self-signed certificate. */
  issuer?: NameAttributes;
  notBefore: Date;
  notAfter: Date;
  /** The subject's public key, or the 65-byte uncompressed point of a P-256 key (no key object needed). */
  publicKey: KeyObject | Uint8Array;
  /** BasicConstraints: present as CA (optionally with a path length) or as a non-CA. */
  ca: boolean;
  pathLen?: number;
  keyUsage: KeyUsageName[];
  extKeyUsage?: ExtKeyUsageName[];
  /** Subject key identifier: 'auto' computes it (Go does so for CA certificates), 'none' leaves it out. */
  subjectKeyId?: Uint8Array | 'auto' | 'none';
  /** The issuer's subject key identifier (Go copies it into AuthorityKeyIdentifier when issuer ≠ subject). */
  authorityKeyId?: Uint8Array;
  subjectAltName?: { dns?: string[]; ip?: string[] };
}

export interface IssuedCertificate {
  der: Uint8Array;
  /** PEM file text with a trailing newline, as Go's pem.Encode writes it. */
  pem: string;
  /** The subject key identifier put in the certificate, if any (issuers pass it on as AKI). */
  subjectKeyId?: Uint8Array;
}

const NAME_OIDS: [keyof NameAttributes, string][] = [
  ['C', '2.5.4.6'],
  ['ST', '2.5.4.8'],
  ['L', '2.5.4.7'],
  ['O', '2.5.4.10'],
  ['OU', '2.5.4.11'],
  ['CN', '2.5.4.3'],
];

const KEY_USAGE_BITS: Record<KeyUsageName, number> = {
  digitalSignature: 0,
  contentCommitment: 1,
  keyEncipherment: 2,
  dataEncipherment: 3,
  keyAgreement: 4,
  keyCertSign: 5,
  cRLSign: 6,
};

const EKU_OIDS: Record<ExtKeyUsageName, string> = {
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

// OIDs encoded once: they appear in every certificate.
const OID = {
  keyUsage: oid('2.5.29.15'),
  extKeyUsage: oid('2.5.29.37'),
  basicConstraints: oid('2.5.29.19'),
  subjectKeyId: oid('2.5.29.14'),
  authorityKeyId: oid('2.5.29.35'),
  subjectAltName: oid('2.5.29.17'),
  ecdsaWithSha256: oid('1.2.840.10045.4.3.2'),
  sha256WithRsa: oid('1.2.840.113549.1.1.11'),
};
const NAME_OID_DER = new Map(NAME_OIDS.map(([k, o]) => [k, oid(o)]));
const EKU_OID_DER = new Map(Object.entries(EKU_OIDS).map(([k, o]) => [k, oid(o)]));

// Random bytes drawn 4 KiB at a time: one randomBytes call per serial cost about 3 % of making an
// identity (four serials each).
let randomPool = new Uint8Array(0);
let randomAt = 0;

/** 128-bit random serial, like EVE's rand.Int(rand.Reader, 2^128). */
export function randomSerial(): Uint8Array {
  if (randomAt + 16 > randomPool.length) {
    randomPool = new Uint8Array(randomBytes(4096));
    randomAt = 0;
  }
  randomAt += 16;
  return randomPool.slice(randomAt - 16, randomAt);
}

export function encodeName(name: NameAttributes): Der {
  const rdns: Der[] = [];
  for (const [key] of NAME_OIDS) {
    const value = name[key];
    if (value !== undefined && value !== '') {
      rdns.push(set(seq(NAME_OID_DER.get(key)!, directoryString(value))));
    }
  }
  return seq(...rdns);
}

function extension(id: Der, critical: boolean, value: Der): Der {
  return critical ? seq(id, boolean(true), octetString(value)) : seq(id, octetString(value));
}

function signatureAlgorithm(issuerKey: KeyObject): Der {
  switch (issuerKey.asymmetricKeyType) {
    case 'ec':
      return seq(OID.ecdsaWithSha256);
    case 'rsa':
      return seq(OID.sha256WithRsa, nullValue());
    default:
      throw new Error(`cannot sign certificates with a ${issuerKey.asymmetricKeyType} key`);
  }
}

function ipAddressBytes(ip: string): Uint8Array {
  const v4 = ip.split('.');
  if (v4.length === 4 && v4.every((p) => /^\d{1,3}$/.test(p) && Number(p) < 256)) return Uint8Array.from(v4.map(Number));
  if (ip === '::1') return Uint8Array.from([...new Array(15).fill(0), 1]);
  throw new Error(`unsupported IP address in subjectAltName: ${ip}`);
}

/** Builds, signs (SHA-256) and encodes one certificate. */
export function issueCertificate(spec: CertificateSpec, issuerKey: KeyObject): IssuedCertificate {
  const { spki, keyBits } = spec.publicKey instanceof Uint8Array ? p256PointInfo(spec.publicKey) : publicKeyInfo(spec.publicKey);
  const subject = encodeName(spec.subject);
  const issuer = spec.issuer ? encodeName(spec.issuer) : subject;
  const sigAlg = signatureAlgorithm(issuerKey);

  let subjectKeyId: Uint8Array | undefined;
  if (spec.subjectKeyId instanceof Uint8Array) subjectKeyId = spec.subjectKeyId;
  else if (spec.subjectKeyId === 'auto' || (spec.subjectKeyId === undefined && spec.ca)) {
    subjectKeyId = new Uint8Array(createHash('sha1').update(keyBits).digest());
  }

  const exts: Der[] = [];
  if (spec.keyUsage.length > 0) {
    exts.push(extension(OID.keyUsage, true, namedBits(spec.keyUsage.map((u) => KEY_USAGE_BITS[u]))));
  }
  if (spec.extKeyUsage && spec.extKeyUsage.length > 0) {
    exts.push(extension(OID.extKeyUsage, false, seq(...spec.extKeyUsage.map((u) => EKU_OID_DER.get(u)!))));
  }
  const bc: Der[] = [];
  if (spec.ca) bc.push(boolean(true));
  if (spec.ca && spec.pathLen !== undefined) bc.push(smallInteger(spec.pathLen));
  exts.push(extension(OID.basicConstraints, true, seq(...bc)));
  if (subjectKeyId) exts.push(extension(OID.subjectKeyId, false, octetString(subjectKeyId)));
  if (spec.authorityKeyId && spec.issuer) {
    exts.push(extension(OID.authorityKeyId, false, seq(tlv(0x80, spec.authorityKeyId))));
  }
  if (spec.subjectAltName) {
    const names: Der[] = [];
    for (const dns of spec.subjectAltName.dns ?? []) names.push(tlv(0x82, ia5String(dns).subarray(2)));
    for (const ip of spec.subjectAltName.ip ?? []) names.push(tlv(0x87, ipAddressBytes(ip)));
    exts.push(extension(OID.subjectAltName, false, seq(...names)));
  }

  const tbs = seq(
    explicit(0, smallInteger(2)),
    unsignedInteger(spec.serial),
    sigAlg,
    issuer,
    seq(time(spec.notBefore), time(spec.notAfter)),
    subject,
    spki,
    explicit(3, seq(...exts)),
  );
  const signature = sign('sha256', tbs, issuerKey);
  const der = seq(tbs, sigAlg, bitStringBytes(signature));
  return { der, pem: derToPem(der), ...(subjectKeyId ? { subjectKeyId } : {}) };
}

function p256PointInfo(point: Uint8Array): { spki: Uint8Array; keyBits: Uint8Array } {
  if (point.length !== 65 || point[0] !== 4) throw new Error(`not an uncompressed P-256 point (${point.length} bytes)`);
  return { spki: concat(P256_SPKI_PREFIX, point), keyBits: point };
}

/** notBefore + whole years, keeping month, day and time (Go's AddDate(years, 0, 0)). */
export function addYears(d: Date, years: number): Date {
  const out = new Date(d.getTime());
  out.setUTCFullYear(out.getUTCFullYear() + years);
  return out;
}

/** Truncates to whole seconds, as certificates store validity. */
export function wholeSeconds(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}
