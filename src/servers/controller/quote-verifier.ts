// TPM quote verification in the controller (its own thread: the verifier is made there from the
// plain ControllerOptions.quoteVerifier mode, never passed across threads). The controller answers
// the empty "TPM disabled" quote itself (as Adam does); a quote with PCR values comes here.
//
// 'strict' (default), in this order — the first failure decides:
//   no restricted-signing (type 11) certificate, or not a certificate   → NO_CERT_FOUND
//   the type-11 certificate is not signed by the registered device key  → QUOTE_FAILED cert-not-from-device
//   a pcr_value not SHA-256, or its index outside 0..23                 → QUOTE_FAILED pcr-not-sha256 / bad-pcr-index
//   tpm_binary_event_log present but not a (bounded) gzip                → QUOTE_FAILED event-log-unreadable
//   signature over SHA-256(attestData), DER or r||s                     → QUOTE_FAILED bad-signature
//   magic, type 0x8018, exactly one PCR selection                        → QUOTE_FAILED not-a-quote
//   extraData equals the nonce issued to this device                     → NONCE_MISMATCH
//   SHA-256 bank, every selected PCR reported, their digest = pcrDigest  → QUOTE_FAILED bad-selection / pcr-missing / pcr-digest-mismatch
//   the event log, when sent, replays to the reported PCRs               → QUOTE_FAILED event-log-mismatch
//   PCR templates, when the fleet sets any (pcr-templates.ts)           → QUOTE_FAILED no-template / template-mismatch
// 'adam' checks what Adam's quoteValidate does (tpm-facts §11): no certificate chain, no event log,
// and a bad signature or a structure that is not a quote answers INVALID (0) as Adam does.
// Every failure uses a code controller-api-v2 documents, except Adam's INVALID in 'adam' mode.

import { createHash, X509Certificate, type KeyObject } from 'node:crypto';
import { attest } from '../../gen/eve-types.js';
import { parseEventLog } from '../../tpm/event-log.js';
import { gunzipEventLog } from '../../tpm/event-log-gzip.js';
import { replayEventLog } from '../../tpm/event-log-replay.js';
import { checkQuote, type QuoteCheckOutcome } from '../../tpm/quote-check.js';
import type { StoredDeviceCert } from './attest-state.js';
import { checkPcrTemplates, type PcrTemplate } from './pcr-templates.js';

const Code = attest.ZAttestResponseCode;
const RESTRICTED_SIGNING = 11;
const PCR_COUNT = 24;

export type QuoteVerifierMode = 'strict' | 'adam';
export const QUOTE_VERIFIER_MODES: readonly QuoteVerifierMode[] = ['strict', 'adam'];

export interface QuoteVerificationInput {
  deviceUuid: string;
  quote: attest.ZAttestQuote;
  /** The nonce this device was given (single use; consumed by this quote). */
  nonce: Uint8Array;
  /** Certificates the device posted with ATTEST_REQ_CERT, by ZCertType number. */
  certs: ReadonlyMap<number, StoredDeviceCert>;
  /** Public key of the device certificate it registered with. */
  devicePublicKey: KeyObject;
  /** The fleet's PCR templates (empty: none enforced). */
  templates: readonly PcrTemplate[];
}

export interface QuoteVerdict {
  code: attest.ZAttestResponseCode;
  /** Why, for the admin view and logs. */
  reason: string;
  /** Short stable name of the reason ('ok', 'bad-signature', 'template-mismatch', ...), for counts. */
  key: string;
  /** TPMS_ATTEST clockInfo.resetCount of a verified quote (grows when the TPM resets: a reboot). */
  resetCount?: number;
}

export interface QuoteVerifier {
  readonly mode: string;
  verify(input: QuoteVerificationInput): QuoteVerdict;
}

/** A replayed event log: PCR values by index, or why it could not be replayed. */
type Replay = { pcrs: Map<number, Buffer> } | { error: string; key: string };
/** Devices of one build send the same log: its replay is kept (keyed by SHA-256 of the gzip). */
const REPLAY_CACHE_MAX = 256;

function replayOf(gz: Uint8Array, cache: Map<string, Replay>): Replay {
  const id = createHash('sha256').update(gz).digest('base64');
  let r = cache.get(id);
  if (r) return r;
  try {
    const replay = replayEventLog(parseEventLog(gunzipEventLog(gz), 'tpm_binary_event_log'));
    const pcrs = new Map<number, Buffer>();
    for (const p of [...replay.extended].sort((a, b) => a - b)) pcrs.set(p, Buffer.from(replay.bank.subarray(p * 32, p * 32 + 32)));
    r = { pcrs };
  } catch (e) {
    const message = (e as Error).message;
    r = { error: message, key: /not a gzip|inflates to more/.test(message) ? 'event-log-unreadable' : 'event-log-mismatch' };
  }
  if (cache.size >= REPLAY_CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(id, r);
  return r;
}

/** PCRs measured outside the BIOS log (EVE's PCR 13) are not in it and not compared. */
function logMismatch(replay: { pcrs: Map<number, Buffer> }, reported: ReadonlyMap<number, Uint8Array>): string | undefined {
  for (const [p, value] of replay.pcrs) {
    const r = reported.get(p);
    if (!r || !value.equals(r)) return `event log replays PCR ${p} to ${value.toString('hex')}, reported ${r ? Buffer.from(r).toString('hex') : 'nothing'}`;
  }
  return undefined;
}

const fail = (code: attest.ZAttestResponseCode, key: string, reason: string): QuoteVerdict => ({ code, key, reason });

/** The type-11 certificate's key and whether the device key signed it; cached on the stored cert. */
function checkedCert(cert: StoredDeviceCert, deviceKey: KeyObject): NonNullable<StoredDeviceCert['checked']> {
  if (cert.checked) return cert.checked;
  try {
    const x = new X509Certificate(Buffer.from(cert.pem!));
    cert.checked = { publicKey: x.publicKey, signedByDevice: x.verify(deviceKey) };
  } catch (e) {
    cert.checked = { error: (e as Error).message.split('\n')[0]! };
  }
  return cert.checked;
}

function versionOf(quote: attest.ZAttestQuote, type: attest.AttestVersionType): string {
  return quote.versions?.find((v) => v.version_type === type)?.version ?? '';
}

const OUTCOME_KEYS: Record<Exclude<QuoteCheckOutcome, 'ok'>, attest.ZAttestResponseCode> = {
  'bad-signature': Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED,
  'not-a-quote': Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED,
  'nonce-mismatch': Code.Z_ATTEST_RESPONSE_CODE_NONCE_MISMATCH,
  'bad-selection': Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED,
  'pcr-missing': Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED,
  'pcr-digest-mismatch': Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED,
  'event-log-mismatch': Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED,
};

export function createQuoteVerifier(mode: QuoteVerifierMode = 'strict'): QuoteVerifier {
  if (!QUOTE_VERIFIER_MODES.includes(mode)) throw new Error(`quote verifier: mode must be one of ${QUOTE_VERIFIER_MODES.join(', ')}, got ${String(mode)}`);
  const adam = mode === 'adam';
  const replays = new Map<string, Replay>();
  return {
    mode,
    verify(input: QuoteVerificationInput): QuoteVerdict {
      const { quote } = input;
      const cert = input.certs.get(RESTRICTED_SIGNING);
      if (!cert?.pem) return fail(Code.Z_ATTEST_RESPONSE_CODE_NO_CERT_FOUND, 'no-attest-cert', 'no restricted-signing (attestation, type 11) certificate posted');
      const checked = checkedCert(cert, input.devicePublicKey);
      if ('error' in checked) return fail(Code.Z_ATTEST_RESPONSE_CODE_NO_CERT_FOUND, 'attest-cert-unreadable', `attestation certificate: ${checked.error}`);
      if (!adam && !checked.signedByDevice) {
        return fail(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED, 'cert-not-from-device', 'the attestation certificate is not signed by the registered device certificate\'s key');
      }

      const pcrValues = new Map<number, Uint8Array>();
      for (const [i, v] of (quote.pcr_values ?? []).entries()) {
        if (v.hash_algo !== attest.TpmHashAlgo.TPM_HASH_ALGO_SHA256) {
          return fail(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED, 'pcr-not-sha256', `pcr_values[${i}] (PCR ${v.index ?? 0}) has hash_algo ${v.hash_algo ?? 0}, not SHA256`);
        }
        const index = v.index ?? 0;
        if (index >= PCR_COUNT) return fail(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED, 'bad-pcr-index', `pcr_values[${i}] has index ${index}, outside 0..23`);
        pcrValues.set(index, v.value ?? new Uint8Array(0));
      }

      const gz = quote.tpm_binary_event_log;
      const replay = !adam && gz && gz.length > 0 ? replayOf(gz, replays) : undefined;
      if (replay && 'error' in replay && replay.key === 'event-log-unreadable') {
        return fail(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED, replay.key, replay.error);
      }

      // The quote itself (checkQuote); the log is compared below with its cached replay.
      const r = checkQuote({
        attest: quote.attestData ?? new Uint8Array(0),
        signature: quote.signature ?? new Uint8Array(0),
        publicKey: checked.publicKey,
        nonce: input.nonce,
        pcrValues,
      });
      if (r.outcome !== 'ok') {
        const code = adam && (r.outcome === 'bad-signature' || r.outcome === 'not-a-quote') ? Code.Z_ATTEST_RESPONSE_CODE_INVALID : OUTCOME_KEYS[r.outcome];
        return fail(code, r.outcome, r.reason);
      }
      if (replay) {
        const mismatch = 'error' in replay ? replay.error : logMismatch(replay, pcrValues);
        if (mismatch) return fail(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED, 'event-log-mismatch', mismatch);
      }

      const t = checkPcrTemplates(
        input.templates,
        { eve: versionOf(quote, attest.AttestVersionType.ATTEST_VERSION_TYPE_EVE), firmware: versionOf(quote, attest.AttestVersionType.ATTEST_VERSION_TYPE_FIRMWARE) },
        pcrValues,
      );
      if (!t.ok) return fail(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED, t.key, t.reason);
      return { code: Code.Z_ATTEST_RESPONSE_CODE_SUCCESS, key: 'ok', reason: 'quote verified', resetCount: r.attest!.clockInfo.resetCount };
    },
  };
}
