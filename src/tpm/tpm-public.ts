// TPMT_PUBLIC / TPM2B_PUBLIC for ECC and RSA keys (Part 2 "TPMT_PUBLIC", "TPMS_ECC_PARMS",
// "TPMS_RSA_PARMS", "TPMU_PUBLIC_ID"; tpm-facts §3): marshalling and a strict parser.

import { ByteReader } from './byte-reader.js';
import { ByteWriter } from './byte-writer.js';
import { TPM_ALG_ECC, TPM_ALG_NULL, TPM_ALG_RSA } from './tpm-constants.js';

const TPM_ALG_ECDAA = 0x001a;

/** TPMT_SYM_DEF_OBJECT; null is TPM_ALG_NULL (no arm follows). */
export interface SymDefObject {
  algorithm: number;
  keyBits: number;
  mode: number;
}

/** TPMT_ECC_SCHEME / TPMT_RSA_SCHEME / TPMT_KDF_SCHEME with a hash; null is TPM_ALG_NULL. */
export interface HashScheme {
  scheme: number;
  hashAlg: number;
  /** Only for ECDAA. */
  count?: number;
}

interface PublicCommon {
  nameAlg: number;
  objectAttributes: number;
  authPolicy: Uint8Array;
  symmetric: SymDefObject | null;
  scheme: HashScheme | null;
}

export interface EccPublic extends PublicCommon {
  type: typeof TPM_ALG_ECC;
  curveId: number;
  kdf: HashScheme | null;
  /** Big-endian coordinates as carried (TPM2B_ECC_PARAMETER). */
  x: Uint8Array;
  y: Uint8Array;
}

export interface RsaPublic extends PublicCommon {
  type: typeof TPM_ALG_RSA;
  keyBits: number;
  /** 0 means the default 65537. */
  exponent: number;
  modulus: Uint8Array;
}

export type TpmPublic = EccPublic | RsaPublic;

function writeSym(w: ByteWriter, s: SymDefObject | null): void {
  if (!s) w.u16be(TPM_ALG_NULL);
  else w.u16be(s.algorithm).u16be(s.keyBits).u16be(s.mode);
}

function writeScheme(w: ByteWriter, s: HashScheme | null): void {
  if (!s) {
    w.u16be(TPM_ALG_NULL);
    return;
  }
  w.u16be(s.scheme).u16be(s.hashAlg);
  if (s.scheme === TPM_ALG_ECDAA) w.u16be(s.count ?? 0);
}

export function writeTpmtPublic(w: ByteWriter, p: TpmPublic): void {
  w.u16be(p.type).u16be(p.nameAlg).u32be(p.objectAttributes).tpm2b(p.authPolicy);
  writeSym(w, p.symmetric);
  writeScheme(w, p.scheme);
  if (p.type === TPM_ALG_ECC) {
    w.u16be(p.curveId);
    writeScheme(w, p.kdf);
    w.tpm2b(p.x).tpm2b(p.y);
  } else {
    w.u16be(p.keyBits).u32be(p.exponent).tpm2b(p.modulus);
  }
}

/** TPMT_PUBLIC bytes: what a Name hashes. */
export function marshalTpmtPublic(p: TpmPublic): Uint8Array {
  const w = new ByteWriter(p.type === TPM_ALG_RSA ? 320 : 96);
  writeTpmtPublic(w, p);
  return w.finish();
}

/** TPM2B_PUBLIC bytes: u16 size | TPMT_PUBLIC (files, EVE meta-data, TPM commands). */
export function marshalTpm2bPublic(p: TpmPublic): Uint8Array {
  const inner = marshalTpmtPublic(p);
  const w = new ByteWriter(inner.length + 2);
  return w.tpm2b(inner).finish();
}

function readSym(r: ByteReader): SymDefObject | null {
  const algorithm = r.u16be('parameters.symmetric.algorithm');
  if (algorithm === TPM_ALG_NULL) return null;
  return { algorithm, keyBits: r.u16be('parameters.symmetric.keyBits'), mode: r.u16be('parameters.symmetric.mode') };
}

function readScheme(r: ByteReader, field: string): HashScheme | null {
  const scheme = r.u16be(`${field}.scheme`);
  if (scheme === TPM_ALG_NULL) return null;
  const out: HashScheme = { scheme, hashAlg: r.u16be(`${field}.details.hashAlg`) };
  if (scheme === TPM_ALG_ECDAA) out.count = r.u16be(`${field}.details.count`);
  return out;
}

/** Parses TPMT_PUBLIC from the reader's position (ECC and RSA keys only). */
export function readTpmtPublic(r: ByteReader): TpmPublic {
  const typeAt = r.offset;
  const type = r.u16be('type');
  const nameAlg = r.u16be('nameAlg');
  const objectAttributes = r.u32be('objectAttributes');
  const authPolicy = r.tpm2b('authPolicy', 64);
  if (type !== TPM_ALG_ECC && type !== TPM_ALG_RSA) {
    r.fail('type', `0x${type.toString(16).padStart(4, '0')} is not ECC (0x0023) or RSA (0x0001)`, typeAt);
  }
  const symmetric = readSym(r);
  const scheme = readScheme(r, 'parameters.scheme');
  if (type === TPM_ALG_ECC) {
    const curveId = r.u16be('parameters.curveID');
    const kdf = readScheme(r, 'parameters.kdf');
    const x = r.tpm2b('unique.x', 128);
    const y = r.tpm2b('unique.y', 128);
    return { type: TPM_ALG_ECC, nameAlg, objectAttributes, authPolicy, symmetric, scheme, curveId, kdf, x, y };
  }
  const keyBits = r.u16be('parameters.keyBits');
  const exponent = r.u32be('parameters.exponent');
  const modulus = r.tpm2b('unique.rsa', 512);
  return { type: TPM_ALG_RSA, nameAlg, objectAttributes, authPolicy, symmetric, scheme, keyBits, exponent, modulus };
}

export function parseTpmtPublic(bytes: Uint8Array, where = 'TPMT_PUBLIC'): TpmPublic {
  const r: ByteReader = new ByteReader(bytes, where);
  const p = readTpmtPublic(r);
  r.end();
  return p;
}

/** Parses TPM2B_PUBLIC; also returns the inner TPMT_PUBLIC bytes (what the Name hashes). */
export function parseTpm2bPublic(bytes: Uint8Array, where = 'TPM2B_PUBLIC'): { public: TpmPublic; tpmtPublic: Uint8Array } {
  const r: ByteReader = new ByteReader(bytes, where);
  const size = r.u16be('size');
  if (size !== r.remaining) r.fail('size', `says ${size} bytes but ${r.remaining} follow`, 0);
  const tpmtPublic = bytes.subarray(2);
  return { public: parseTpmtPublic(tpmtPublic, `${where} (TPMT_PUBLIC at byte 2)`), tpmtPublic: new Uint8Array(tpmtPublic) };
}
