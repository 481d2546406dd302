// Verifies a TPM quote the way a controller does (Adam's quoteValidate order, tpm-facts §11), without
// I/O and without protocol types: the caller maps outcomes to ZAttestResponseCode and supplies the key
// from the device's attestation certificate.
//   signature over SHA-256(attestData), DER or r||s (RSA: PKCS#1 v1.5)   → 'bad-signature'
//   TPMS_ATTEST with magic, quote type, exactly one PCR selection         → 'not-a-quote'
//   extraData equals the nonce issued                                     → 'nonce-mismatch'
//   selection on the SHA-256 bank, every selected PCR reported (32 bytes) → 'pcr-missing' / 'bad-selection'
//   SHA-256 over the selected reported values equals pcrDigest           → 'pcr-digest-mismatch'
//   the event log, when given, parses and replays to the reported PCRs   → 'event-log-mismatch'

import { timingSafeEqual, verify, type KeyObject } from 'node:crypto';
import { TpmParseError } from './byte-reader.js';
import { parseEventLog } from './event-log.js';
import { replayEventLog } from './event-log-replay.js';
import { computePcrDigest } from './pcr-selection.js';
import { parseQuoteAttest, type QuoteAttest } from './tpms-attest.js';
import { PCR_SIZE_SHA256, TPM_ALG_SHA256 } from './tpm-constants.js';

export type QuoteCheckOutcome =
  | 'ok'
  | 'bad-signature'
  | 'not-a-quote'
  | 'nonce-mismatch'
  | 'bad-selection'
  | 'pcr-missing'
  | 'pcr-digest-mismatch'
  | 'event-log-mismatch';

export interface QuoteCheckInput {
  attest: Uint8Array;
  /** ECDSA as DER or r||s; RSA as the raw PKCS#1 v1.5 signature. */
  signature: Uint8Array;
  /** Public key of the attestation (restricted signing) certificate. */
  publicKey: KeyObject;
  /** The nonce the controller issued to this device. */
  nonce: Uint8Array;
  /** Reported SHA-256 PCR values by index (EVE sends 0–23). */
  pcrValues: ReadonlyMap<number, Uint8Array>;
  /** The raw (gunzipped) binary event log, when the device sent one. */
  eventLog?: Uint8Array;
}

export interface QuoteCheckResult {
  outcome: QuoteCheckOutcome;
  /** Human-readable reason naming the field that failed. */
  reason: string;
  /** The parsed attest structure, once it parsed. */
  attest?: QuoteAttest;
}

function signatureValid(data: Uint8Array, sig: Uint8Array, key: KeyObject): boolean {
  const attempt = (dsaEncoding?: 'der' | 'ieee-p1363'): boolean => {
    try {
      return verify('sha256', data, dsaEncoding ? { key, dsaEncoding } : key, sig);
    } catch {
      return false;
    }
  };
  if (key.asymmetricKeyType === 'ec') return (sig[0] === 0x30 && attempt('der')) || attempt('ieee-p1363');
  return attempt();
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

export function checkQuote(input: QuoteCheckInput): QuoteCheckResult {
  if (!signatureValid(input.attest, input.signature, input.publicKey)) {
    return { outcome: 'bad-signature', reason: `quote signature (${input.signature.length} bytes) does not verify over SHA-256(attestData) with the attestation key` };
  }
  let attest: QuoteAttest;
  try {
    attest = parseQuoteAttest(input.attest, 'attestData');
  } catch (e) {
    if (e instanceof TpmParseError) return { outcome: 'not-a-quote', reason: e.message };
    throw e;
  }
  if (attest.pcrSelect.length !== 1) {
    return { outcome: 'not-a-quote', reason: `attestData: ${attest.pcrSelect.length} PCR selections, exactly one expected`, attest };
  }
  if (!Buffer.from(attest.extraData).equals(Buffer.from(input.nonce))) {
    return { outcome: 'nonce-mismatch', reason: `attestData extraData ${hex(attest.extraData)} is not the nonce ${hex(input.nonce)} issued`, attest };
  }
  const sel = attest.pcrSelect[0]!;
  if (sel.hash !== TPM_ALG_SHA256) {
    return { outcome: 'bad-selection', reason: `PCR selection uses bank 0x${sel.hash.toString(16).padStart(4, '0')}, not SHA-256`, attest };
  }
  for (const p of sel.pcrs) {
    const v = input.pcrValues.get(p);
    if (!v) return { outcome: 'pcr-missing', reason: `PCR ${p} is selected in the quote but not reported`, attest };
    if (v.length !== PCR_SIZE_SHA256) return { outcome: 'pcr-missing', reason: `reported PCR ${p} has ${v.length} bytes, not 32`, attest };
  }
  const digest = computePcrDigest(attest.pcrSelect, (_h, i) => input.pcrValues.get(i)!);
  if (digest.length !== attest.pcrDigest.length || !timingSafeEqual(digest, attest.pcrDigest)) {
    return { outcome: 'pcr-digest-mismatch', reason: `SHA-256 over reported PCRs ${sel.pcrs.join(',')} is ${hex(digest)}, quote says ${hex(attest.pcrDigest)}`, attest };
  }
  if (input.eventLog) {
    let replay;
    try {
      replay = replayEventLog(parseEventLog(input.eventLog, 'tpm_binary_event_log'), TPM_ALG_SHA256);
    } catch (e) {
      return { outcome: 'event-log-mismatch', reason: (e as Error).message, attest };
    }
    // PCRs measured outside the BIOS log (EVE's PCR 13 rootfs) are not compared.
    for (const p of [...replay.extended].sort((a, b) => a - b)) {
      const reported = input.pcrValues.get(p);
      const replayed = replay.bank.subarray(p * PCR_SIZE_SHA256, (p + 1) * PCR_SIZE_SHA256);
      if (!reported || !Buffer.from(reported).equals(Buffer.from(replayed))) {
        return {
          outcome: 'event-log-mismatch',
          reason: `event log replays PCR ${p} to ${hex(replayed)}, reported ${reported ? hex(reported) : 'nothing'}`,
          attest,
        };
      }
    }
  }
  return { outcome: 'ok', reason: 'quote verified', attest };
}
