// Names and qualified names (Part 1 "Names", "Qualified Name"; tpm-facts §4):
//   Name(object) = nameAlg || H(TPMT_PUBLIC)      (no TPM2B size prefix)
//   QN(primary)  = nameAlg || H(u32 hierarchy || Name)
//   QN(child)    = nameAlg || H(QN(parent) || Name(child))
// TPMS_ATTEST.qualifiedSigner carries the signing key's QN.

import { createHash } from 'node:crypto';
import { DIGEST_SIZE, HASH_NAME, TPM_ALG_SHA256 } from './tpm-constants.js';

function hashOf(nameAlg: number, parts: readonly Uint8Array[]): Uint8Array {
  const name = HASH_NAME[nameAlg];
  if (!name) throw new RangeError(`unsupported nameAlg 0x${nameAlg.toString(16).padStart(4, '0')}`);
  const h = createHash(name);
  for (const p of parts) h.update(p);
  const out = new Uint8Array(2 + DIGEST_SIZE[nameAlg]!);
  out[0] = nameAlg >> 8;
  out[1] = nameAlg & 0xff;
  out.set(h.digest(), 2);
  return out;
}

/** Name of an object from its TPMT_PUBLIC bytes. The nameAlg is read from the structure (bytes 2–3). */
export function objectName(tpmtPublic: Uint8Array): Uint8Array {
  if (tpmtPublic.length < 4) throw new RangeError(`objectName: TPMT_PUBLIC of ${tpmtPublic.length} bytes is too short`);
  const nameAlg = (tpmtPublic[2]! << 8) | tpmtPublic[3]!;
  return hashOf(nameAlg, [tpmtPublic]);
}

/** The 4-byte handle, big-endian: the Name of a hierarchy, PCR or session. */
export function handleName(handle: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, handle >>> 0, false);
  return out;
}

/** QN of a primary object in `hierarchy` (TPM_RH_OWNER, TPM_RH_ENDORSEMENT, ...). */
export function primaryQualifiedName(hierarchy: number, name: Uint8Array, nameAlg = TPM_ALG_SHA256): Uint8Array {
  return hashOf(nameAlg, [handleName(hierarchy), name]);
}

/** QN of a child object under a parent with QN `parentQn`. */
export function childQualifiedName(parentQn: Uint8Array, name: Uint8Array, nameAlg = TPM_ALG_SHA256): Uint8Array {
  return hashOf(nameAlg, [parentQn, name]);
}
