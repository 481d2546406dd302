// TPML_PCR_SELECTION (Part 2 "TPMS_PCR_SELECTION"): u32 count | {u16 hash | u8 sizeofSelect | bitmap}*,
// where PCR n is bit (n % 8) of byte n/8. Also the quote's pcrDigest: H(selected PCR values, in order).

import { createHash } from 'node:crypto';
import type { ByteReader } from './byte-reader.js';
import type { ByteWriter } from './byte-writer.js';
import { HASH_NAME, PCR_SELECT_SIZE, TPM_ALG_SHA256 } from './tpm-constants.js';

export interface PcrSelection {
  /** Bank hash algorithm (TPM_ALG_ID). */
  hash: number;
  sizeofSelect: number;
  /** The bitmap as carried (sizeofSelect bytes). */
  bitmap: Uint8Array;
  /** Selected PCR indices, ascending. */
  pcrs: number[];
}

export function pcrBitmap(pcrs: readonly number[], sizeofSelect = PCR_SELECT_SIZE): Uint8Array {
  const bitmap = new Uint8Array(sizeofSelect);
  for (const p of pcrs) {
    if (!Number.isInteger(p) || p < 0 || p >= sizeofSelect * 8) {
      throw new RangeError(`PCR ${p} does not fit a ${sizeofSelect}-byte selection bitmap`);
    }
    bitmap[p >> 3]! |= 1 << (p & 7);
  }
  return bitmap;
}

export function pcrsOfBitmap(bitmap: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < bitmap.length * 8; i++) if (bitmap[i >> 3]! & (1 << (i & 7))) out.push(i);
  return out;
}

export function pcrSelection(hash: number, pcrs: readonly number[], sizeofSelect = PCR_SELECT_SIZE): PcrSelection {
  const bitmap = pcrBitmap(pcrs, sizeofSelect);
  return { hash, sizeofSelect, bitmap, pcrs: pcrsOfBitmap(bitmap) };
}

/** The selection EVE quotes: SHA-256 bank, PCR 0–15 (`00000001 000b 03 ffff00`). */
export const EVE_QUOTE_PCRS: readonly number[] = Array.from({ length: 16 }, (_, i) => i);
export const EVE_QUOTE_SELECTION: PcrSelection = pcrSelection(TPM_ALG_SHA256, EVE_QUOTE_PCRS);

export function writePcrSelectionList(w: ByteWriter, list: readonly PcrSelection[]): void {
  w.u32be(list.length);
  for (const s of list) {
    if (s.bitmap.length !== s.sizeofSelect) throw new RangeError(`PCR selection bitmap has ${s.bitmap.length} bytes, sizeofSelect says ${s.sizeofSelect}`);
    w.u16be(s.hash).u8(s.sizeofSelect).bytes(s.bitmap);
  }
}

/** Parses TPML_PCR_SELECTION; at most `maxCount` entries (TPM: HASH_COUNT). */
export function readPcrSelectionList(r: ByteReader, field = 'pcrSelect', maxCount = 16): PcrSelection[] {
  const start = r.offset;
  const count = r.u32be(`${field}.count`);
  if (count > maxCount) r.fail(`${field}.count`, `${count} selections, at most ${maxCount} allowed`, start);
  const out: PcrSelection[] = [];
  for (let i = 0; i < count; i++) {
    const hash = r.u16be(`${field}[${i}].hash`);
    const sizeofSelect = r.u8(`${field}[${i}].sizeofSelect`);
    const bitmap = r.bytesCopy(sizeofSelect, `${field}[${i}].pcrSelect`);
    out.push({ hash, sizeofSelect, bitmap, pcrs: pcrsOfBitmap(bitmap) });
  }
  return out;
}

/**
 * pcrDigest of a quote: H_scheme over the selected PCR values, walking the selections in list order
 * and each one's PCRs ascending. `valueOf(hash, index)` supplies a PCR value.
 */
export function computePcrDigest(
  list: readonly PcrSelection[],
  valueOf: (hash: number, index: number) => Uint8Array,
  schemeHash = TPM_ALG_SHA256,
): Uint8Array {
  const name = HASH_NAME[schemeHash];
  if (!name) throw new RangeError(`pcrDigest: unsupported scheme hash 0x${schemeHash.toString(16)}`);
  const h = createHash(name);
  for (const s of list) for (const p of s.pcrs) h.update(valueOf(s.hash, p));
  return new Uint8Array(h.digest());
}
