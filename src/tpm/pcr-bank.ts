// The SHA-256 PCR bank, PCR 0–23, as one 768-byte buffer (PCR i at bytes 32i..32i+31): one object
// per device instead of 24, which keeps tens of thousands of software TPMs small.

import { createHash } from 'node:crypto';
import { PCR_COUNT, PCR_SIZE_SHA256 } from './tpm-constants.js';

export const PCR_BANK_BYTES = PCR_COUNT * PCR_SIZE_SHA256;

/** DRTM PCRs 17–22 start at all 0xFF after TPM2_Startup(CLEAR); all others at zero (tpm-facts §5). */
export function isDrtmPcr(index: number): boolean {
  return index >= 17 && index <= 22;
}

/** Writes the power-on values into `bank` (a Reset: TPM2_Startup(CLEAR)). */
export function resetPcrBank(bank: Uint8Array): void {
  bank.fill(0);
  bank.fill(0xff, 17 * PCR_SIZE_SHA256, 23 * PCR_SIZE_SHA256);
}

export function newPcrBank(): Uint8Array {
  const bank = new Uint8Array(PCR_BANK_BYTES);
  resetPcrBank(bank);
  return bank;
}

function checkIndex(index: number, where: string): void {
  if (!Number.isInteger(index) || index < 0 || index >= PCR_COUNT) {
    throw new RangeError(`${where}: PCR index ${index} is outside 0..${PCR_COUNT - 1}`);
  }
}

/** PCR_new = SHA-256(PCR_old || digest); the digest must be 32 bytes (TPM2_PCR_Extend, sha256 bank). */
export function extendPcr(bank: Uint8Array, index: number, digest: Uint8Array): void {
  checkIndex(index, 'extendPcr');
  if (digest.length !== PCR_SIZE_SHA256) {
    throw new RangeError(`extendPcr: PCR ${index}: a SHA-256 digest has 32 bytes, got ${digest.length}`);
  }
  const at = index * PCR_SIZE_SHA256;
  const next = createHash('sha256').update(bank.subarray(at, at + PCR_SIZE_SHA256)).update(digest).digest();
  bank.set(next, at);
}

/** A view of PCR `index` (valid until the bank changes; copy it to keep it). */
export function pcrView(bank: Uint8Array, index: number): Uint8Array {
  checkIndex(index, 'pcrView');
  const at = index * PCR_SIZE_SHA256;
  return bank.subarray(at, at + PCR_SIZE_SHA256);
}

/** A copy of PCR `index`. */
export function readPcr(bank: Uint8Array, index: number): Uint8Array {
  return new Uint8Array(pcrView(bank, index));
}
