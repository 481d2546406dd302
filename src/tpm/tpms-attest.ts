// TPMS_ATTEST for TPM2_Quote (Part 2 "TPMS_CLOCK_INFO", "TPMS_QUOTE_INFO", "TPMS_ATTEST"; tpm-facts §6):
//   u32 magic | u16 type | TPM2B_NAME qualifiedSigner | TPM2B_DATA extraData
//   | TPMS_CLOCK_INFO {u64 clock | u32 resetCount | u32 restartCount | u8 safe} | u64 firmwareVersion
//   | TPMS_QUOTE_INFO {TPML_PCR_SELECTION pcrSelect | TPM2B_DIGEST pcrDigest}
// Raw TPMS_ATTEST (no TPM2B_ATTEST size) is what tpm2_quote -m writes and EVE sends as attestData.

import { ByteReader } from './byte-reader.js';
import { readPcrSelectionList, type PcrSelection } from './pcr-selection.js';
import { MAX_TPM2B_DATA, TPM_GENERATED_VALUE, TPM_ST_ATTEST_QUOTE } from './tpm-constants.js';

export interface ClockInfo {
  /** Milliseconds the TPM has been powered (u64 on the wire; a JS number is exact to 2^53). */
  clock: number;
  resetCount: number;
  restartCount: number;
  safe: boolean;
}

export interface QuoteAttest {
  magic: number;
  type: number;
  qualifiedSigner: Uint8Array;
  extraData: Uint8Array;
  clockInfo: ClockInfo;
  firmwareVersion: bigint;
  pcrSelect: PcrSelection[];
  pcrDigest: Uint8Array;
}

/** Fields a quote is made of; magic and type are fixed. */
export type QuoteAttestFields = Omit<QuoteAttest, 'magic' | 'type'>;

/** Marshals a quote's TPMS_ATTEST in one allocation (the software TPM's hot path). */
export function marshalQuoteAttest(a: QuoteAttestFields): Uint8Array {
  if (a.extraData.length > MAX_TPM2B_DATA) {
    throw new RangeError(`TPMS_ATTEST extraData of ${a.extraData.length} bytes exceeds TPM2B_DATA's ${MAX_TPM2B_DATA}`);
  }
  let selBytes = 4;
  for (const s of a.pcrSelect) selBytes += 3 + s.bitmap.length;
  const size = 6 + 2 + a.qualifiedSigner.length + 2 + a.extraData.length + 17 + 8 + selBytes + 2 + a.pcrDigest.length;
  const b = Buffer.allocUnsafe(size);
  let at = b.writeUInt32BE(TPM_GENERATED_VALUE, 0);
  at = b.writeUInt16BE(TPM_ST_ATTEST_QUOTE, at);
  at = b.writeUInt16BE(a.qualifiedSigner.length, at);
  b.set(a.qualifiedSigner, at);
  at += a.qualifiedSigner.length;
  at = b.writeUInt16BE(a.extraData.length, at);
  b.set(a.extraData, at);
  at += a.extraData.length;
  // u64 clock as two u32 halves: exact for any safe integer, no BigInt on the hot path.
  at = b.writeUInt32BE(Math.floor(a.clockInfo.clock / 0x1_0000_0000), at);
  at = b.writeUInt32BE(a.clockInfo.clock >>> 0, at);
  at = b.writeUInt32BE(a.clockInfo.resetCount >>> 0, at);
  at = b.writeUInt32BE(a.clockInfo.restartCount >>> 0, at);
  at = b.writeUInt8(a.clockInfo.safe ? 1 : 0, at);
  at = b.writeBigUInt64BE(a.firmwareVersion, at);
  at = b.writeUInt32BE(a.pcrSelect.length, at);
  for (const s of a.pcrSelect) {
    at = b.writeUInt16BE(s.hash, at);
    at = b.writeUInt8(s.bitmap.length, at);
    b.set(s.bitmap, at);
    at += s.bitmap.length;
  }
  at = b.writeUInt16BE(a.pcrDigest.length, at);
  b.set(a.pcrDigest, at);
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

/**
 * Parses a raw TPMS_ATTEST that must be a quote: magic 0xFF544347 and type 0x8018 (anything else is
 * an error naming the field), a qualifiedSigner that is empty, a 4-byte handle or alg||digest.
 */
export function parseQuoteAttest(bytes: Uint8Array, where = 'TPMS_ATTEST'): QuoteAttest {
  const r: ByteReader = new ByteReader(bytes, where);
  const magic = r.u32be('magic');
  if (magic !== TPM_GENERATED_VALUE) r.fail('magic', `0x${magic.toString(16).padStart(8, '0')} is not TPM_GENERATED_VALUE 0xff544347`, 0);
  const type = r.u16be('type');
  if (type !== TPM_ST_ATTEST_QUOTE) r.fail('type', `0x${type.toString(16).padStart(4, '0')} is not TPM_ST_ATTEST_QUOTE 0x8018`, 4);
  const qsAt = r.offset;
  const qualifiedSigner = r.tpm2b('qualifiedSigner', 2 + 64);
  if (qualifiedSigner.length !== 0 && qualifiedSigner.length !== 4) {
    const alg = qualifiedSigner.length >= 2 ? (qualifiedSigner[0]! << 8) | qualifiedSigner[1]! : -1;
    const want = alg === 0x000b ? 34 : alg === 0x0004 ? 22 : alg === 0x000c ? 50 : alg === 0x000d ? 66 : -1;
    if (want !== qualifiedSigner.length) {
      r.fail('qualifiedSigner', `${qualifiedSigner.length} bytes is neither empty, a handle, nor alg||digest of that alg's size`, qsAt);
    }
  }
  const extraData = r.tpm2b('extraData', MAX_TPM2B_DATA);
  const clockHi = r.u32be('clockInfo.clock');
  const clockLo = r.u32be('clockInfo.clock');
  const clock = clockHi * 0x1_0000_0000 + clockLo;
  if (!Number.isSafeInteger(clock)) r.fail('clockInfo.clock', 'exceeds 2^53 ms', r.offset - 8);
  const resetCount = r.u32be('clockInfo.resetCount');
  const restartCount = r.u32be('clockInfo.restartCount');
  const safeAt = r.offset;
  const safeByte = r.u8('clockInfo.safe');
  if (safeByte > 1) r.fail('clockInfo.safe', `TPMI_YES_NO must be 0 or 1, got ${safeByte}`, safeAt);
  const firmwareVersion = r.u64be('firmwareVersion');
  const pcrSelect = readPcrSelectionList(r, 'attested.quote.pcrSelect');
  const pcrDigest = r.tpm2b('attested.quote.pcrDigest', 64);
  r.end();
  return {
    magic,
    type,
    qualifiedSigner,
    extraData,
    clockInfo: { clock, resetCount, restartCount, safe: safeByte === 1 },
    firmwareVersion,
    pcrSelect,
    pcrDigest,
  };
}
