// POST /id/{uuid}/attest: the attestation cycle (controller-api-v2 Attest; eve-wire-facts §5).
// NONCE hands out a fresh single-use nonce; CERT stores the device's certificates (a certificate
// without is_mutable may not be replaced by a different one: 403, nothing stored); QUOTE answers
// SUCCESS + integrity token for the empty "TPM disabled" quote and asks the QuoteVerifier
// (quote-verifier.ts) otherwise; STORE_KEYS escrows volume keys when the integrity token matches,
// else ITOKEN_MISMATCH. Always 201 with an enveloped response. On SUCCESS the answer carries the
// device's token (one per device, kept across cycles as Adam does) and the keys it escrowed; a
// refused quote withdraws the token, so /config answers 403 until the device attests again.

import { createHash, randomBytes } from 'node:crypto';
import { attest } from '../../gen/eve-types.js';
import { bytesEqual } from '../../protocol/cert-hash.js';
import { Msg } from '../../protocol/messages.js';
import type { AttestState, StoredDeviceCert } from './attest-state.js';
import type { QuoteVerdict } from './quote-verifier.js';
import { PROTO_MIME, type ControllerContext, type Reply, type RequestState } from './controller-context.js';
import { authenticateDevice } from './device-auth.js';
import type { DeviceRecord } from './device-record.js';
import { forbidden, unprocessable } from './http-error.js';
import { NoncePool } from './nonce-pool.js';

const Req = attest.ZAttestReqType;
const Resp = attest.ZAttestRespType;
const Code = attest.ZAttestResponseCode;
const KeysCode = attest.AttestStorageKeysResponseCode;

/** Nonce size: EVE's TPM path needs 12–32 bytes (§5.4). */
const NONCE_BYTES = 32;
const TOKEN_BYTES = 32;
/** Device certificate types a device may post; quote verification needs the PEM of 11 and 12. */
const DEVICE_CERT_TYPES = new Set([10, 11, 12, 13]);
const KEEP_PEM_TYPES = new Set([11, 12]);
/** Per thread: the controller runs in one thread, and each thread has its own pool. */
const NONCES = new NoncePool();

export function handleAttest(ctx: ControllerContext, req: RequestState): Reply {
  const { device, payload } = authenticateDevice(ctx, req);
  let areq: attest.ZAttestReq;
  try {
    areq = Msg.ZAttestReq.decode(payload);
  } catch (e) {
    throw unprocessable(`payload is not a ZAttestReq: ${(e as Error).message}`);
  }
  const state = device.attestState();
  let resp: attest.ZAttestResponse;
  switch (areq.reqType) {
    case Req.ATTEST_REQ_NONCE:
      state.nonce = NONCES.take(NONCE_BYTES);
      ctx.stats.attestation.nonceIssued();
      resp = { respType: Resp.ATTEST_RESP_NONCE, nonce: { nonce: state.nonce } };
      break;
    case Req.ATTEST_REQ_CERT:
      storeCerts(state, areq.certs ?? []);
      resp = { respType: Resp.ATTEST_RESP_CERT };
      break;
    case Req.ATTEST_REQ_QUOTE:
      resp = { respType: Resp.ATTEST_RESP_QUOTE_RESP, quoteResp: answerQuote(ctx, device, state, areq.quote ?? undefined) };
      break;
    case Req.Z_ATTEST_REQ_TYPE_STORE_KEYS: {
      const sk = areq.storage_keys;
      if (!sk) throw unprocessable('Z_ATTEST_REQ_TYPE_STORE_KEYS without storage_keys');
      const ok = !!state.integrityToken && !!sk.integrity_token && bytesEqual(sk.integrity_token, state.integrityToken);
      if (ok) state.storageKeys = sk.keys ?? [];
      ctx.stats.attestation.storeKeysAnswered(ok);
      resp = {
        respType: Resp.Z_ATTEST_RESP_TYPE_STORE_KEYS,
        storage_keys_resp: { response: ok ? KeysCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_SUCCESS : KeysCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_ITOKEN_MISMATCH },
      };
      break;
    }
    default:
      throw unprocessable(`reqType ${areq.reqType ?? 0} is not an attestation request type`);
  }
  // A nonce lives for one round trip and is not saved (persisted-device.ts): NONCE writes nothing.
  if (areq.reqType !== Req.ATTEST_REQ_NONCE) req.attestChanged = true;
  return { status: 201, body: ctx.sealer.seal(Msg.ZAttestResponse.encode(resp)), contentType: PROTO_MIME };
}

/** All-or-nothing: a refused certificate leaves the stored set unchanged. */
function storeCerts(state: AttestState, certs: NonNullable<attest.ZAttestReq['certs']>): void {
  if (certs.length === 0) throw unprocessable('ATTEST_REQ_CERT without certs');
  const next = new Map(state.certs ?? []);
  certs.forEach((c, i) => {
    const type = c.type ?? 0;
    if (!DEVICE_CERT_TYPES.has(type)) throw unprocessable(`certs[${i}].type ${type} is not a device certificate type`);
    if (!c.cert || c.cert.length === 0) throw unprocessable(`certs[${i}] (type ${type}) has no cert`);
    const pemSha256 = createHash('sha256').update(c.cert).digest('hex');
    const old = next.get(type);
    if (old && old.pemSha256 !== pemSha256 && !old.isMutable) {
      throw forbidden(`certs[${i}]: the stored certificate of type ${type} is not mutable and may not be replaced`);
    }
    const stored: StoredDeviceCert = { pemSha256, isMutable: c.attributes?.is_mutable ?? false };
    if (KEEP_PEM_TYPES.has(type)) {
      stored.pem = c.cert;
      const md = (c.meta_data_items ?? []).map((m) => ({ type: m.type ?? 0, data: m.meta_data ?? new Uint8Array(0) }));
      if (md.length > 0) stored.metaData = md;
    }
    next.set(type, stored);
  });
  state.certs = next;
}

function answerQuote(ctx: ControllerContext, device: DeviceRecord, state: AttestState, quote: attest.ZAttestQuote | undefined): attest.ZAttestQuoteResp {
  state.quotes++;
  const nonce = state.nonce;
  state.nonce = undefined; // single use, whatever the outcome
  const empty = !quote || (quote.pcr_values ?? []).length === 0;
  let verdict: QuoteVerdict;
  if (!nonce) {
    verdict = { code: Code.Z_ATTEST_RESPONSE_CODE_NONCE_MISMATCH, key: 'no-nonce', reason: 'no outstanding nonce (never issued, or already used): request ATTEST_REQ_NONCE first' };
  } else if (empty) {
    // Adam's "TPM disabled": a quote without PCR values is accepted as is.
    verdict = { code: Code.Z_ATTEST_RESPONSE_CODE_SUCCESS, key: 'tpm-disabled', reason: 'empty quote (no TPM)' };
  } else {
    verdict = ctx.quoteVerifier.verify({
      deviceUuid: device.uuid,
      quote: quote!,
      nonce,
      certs: state.certs ?? new Map(),
      devicePublicKey: device.publicKey,
      templates: ctx.registry.pcrTemplates,
    });
  }
  const code = verdict.code;
  state.lastQuoteResult = code;
  state.lastQuoteReason = verdict.reason;
  state.lastQuoteReasonKey = verdict.key;
  state.lastQuoteEmpty = empty;
  ctx.stats.attestation.quoteAnswered(code, verdict.key, empty);
  if (verdict.resetCount !== undefined) {
    // A verified quote with another reset count than the last one: the TPM was reset (a reboot).
    if (state.lastResetCount !== undefined && state.lastResetCount !== verdict.resetCount) state.tpmResets++;
    state.lastResetCount = verdict.resetCount;
  }
  if (code !== Code.Z_ATTEST_RESPONSE_CODE_SUCCESS) {
    state.attested = false;
    state.integrityToken = undefined;
    return { response: code };
  }
  state.attested = true;
  // One token per device, reused across cycles as Adam does, until a quote fails.
  state.integrityToken ??= new Uint8Array(randomBytes(TOKEN_BYTES));
  return { response: code, integrity_token: state.integrityToken, keys: state.storageKeys ?? [] };
}
