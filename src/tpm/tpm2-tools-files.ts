// Files in the formats tpm2-tools 5.4 reads (tpm-facts §8, §10), so an independent tool can check
// the software TPM's quotes: tpm2_checkquote -u ak.pem -m quote.msg -s quote.sig -f pcrs.bin -g sha256 -q NONCE.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import type { PcrSelection } from './pcr-selection.js';
import { marshalTpmtSignature, ecdsaTpmtFromRs } from './tpmt-signature.js';
import type { TpmQuote } from './soft-tpm.js';

const SEL_ENTRIES = 16; // TPML_PCR_SELECTION.pcrSelections[HASH_COUNT]
const SEL_ENTRY_BYTES = 8; // {u16 hash; u8 sizeofSelect; u8 pcrSelect[4]; pad}
const DIGESTS_PER_LIST = 8; // TPML_DIGEST.digests[8]
const TPM2B_DIGEST_BYTES = 66; // {u16 size; u8 buffer[64]}
const LIST_BYTES = 4 + DIGESTS_PER_LIST * TPM2B_DIGEST_BYTES;

/**
 * tpm2_quote -o pcrs.bin (-F serialized): the C structs TPML_PCR_SELECTION, a u32 list count and
 * TPML_DIGEST lists of at most 8 digests, little-endian with x86-64 padding. Values in selection order.
 */
export function pcrsSerialized(selection: readonly PcrSelection[], valueOf: (hash: number, index: number) => Uint8Array): Uint8Array {
  if (selection.length > SEL_ENTRIES) throw new RangeError(`pcrs file: ${selection.length} selections, at most ${SEL_ENTRIES}`);
  const values: Uint8Array[] = [];
  for (const s of selection) for (const p of s.pcrs) values.push(valueOf(s.hash, p));
  const lists = Math.ceil(values.length / DIGESTS_PER_LIST);
  const b = Buffer.alloc(4 + SEL_ENTRIES * SEL_ENTRY_BYTES + 4 + lists * LIST_BYTES);
  b.writeUInt32LE(selection.length, 0);
  selection.forEach((s, i) => {
    if (s.bitmap.length > 4) throw new RangeError(`pcrs file: a ${s.bitmap.length}-byte bitmap does not fit pcrSelect[4]`);
    const at = 4 + i * SEL_ENTRY_BYTES;
    b.writeUInt16LE(s.hash, at);
    b.writeUInt8(s.sizeofSelect, at + 2);
    b.set(s.bitmap, at + 3);
  });
  let at = 4 + SEL_ENTRIES * SEL_ENTRY_BYTES;
  b.writeUInt32LE(lists, at);
  at += 4;
  for (let l = 0; l < lists; l++) {
    const chunk = values.slice(l * DIGESTS_PER_LIST, (l + 1) * DIGESTS_PER_LIST);
    b.writeUInt32LE(chunk.length, at);
    chunk.forEach((v, i) => {
      if (v.length > 64) throw new RangeError(`pcrs file: a ${v.length}-byte PCR value does not fit TPM2B_DIGEST`);
      const d = at + 4 + i * TPM2B_DIGEST_BYTES;
      b.writeUInt16LE(v.length, d);
      b.set(v, d + 2);
    });
    at += LIST_BYTES;
  }
  return new Uint8Array(b);
}

/** SubjectPublicKeyInfo PEM, what tpm2_createak -f pem writes. */
export function akPem(publicKey: KeyObject): string {
  return publicKey.export({ type: 'spki', format: 'pem' }) as string;
}

export interface CheckquoteFiles {
  akPem: string;
  quoteMsg: string;
  /** TPMT_SIGNATURE (tpm2_quote -s, default -f tss). */
  quoteSig: string;
  /** The same signature as DER (tpm2_quote -f plain; what EVE sends). */
  quoteSigDer: string;
  pcrsBin: string;
  /** Present when an event log was given. */
  eventLog?: string;
}

/** Writes a quote as tpm2_checkquote's input files into `dir` (which must exist). No private keys. */
export function writeCheckquoteFiles(
  dir: string,
  q: { quote: TpmQuote; publicKey: KeyObject; selection: readonly PcrSelection[]; pcrValue: (index: number) => Uint8Array; eventLog?: Uint8Array },
): CheckquoteFiles {
  const files: CheckquoteFiles = {
    akPem: join(dir, 'ak.pem'),
    quoteMsg: join(dir, 'quote.msg'),
    quoteSig: join(dir, 'quote.sig'),
    quoteSigDer: join(dir, 'quote.sig.der'),
    pcrsBin: join(dir, 'pcrs.bin'),
  };
  writeFileSync(files.akPem, akPem(q.publicKey));
  writeFileSync(files.quoteMsg, q.quote.attest);
  writeFileSync(files.quoteSig, marshalTpmtSignature(ecdsaTpmtFromRs(q.quote.signatureRs)));
  writeFileSync(files.quoteSigDer, q.quote.signatureDer);
  writeFileSync(files.pcrsBin, pcrsSerialized(q.selection, (_h, i) => q.pcrValue(i)));
  if (q.eventLog) {
    files.eventLog = join(dir, 'eventlog.bin');
    writeFileSync(files.eventLog, q.eventLog);
  }
  return files;
}
