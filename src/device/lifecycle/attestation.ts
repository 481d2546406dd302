// EVE's attestation as its zedagent and tpmmgr run it (eve-wire-facts §5.3, §5.4; tpm-facts §11).
//
// Certificates: ATTEST_REQ_CERT with the ECDH (13), attestation (11) and, with a TPM, EK (12)
// certificates — each hashed as the first 16 bytes of SHA-256 over the PEM file bytes; the EK one
// carries the EK's TPM2B_PUBLIC as TPM2_PUBLIC meta data — goes out through the deferred queue
// (discard on failure, re-triggered after 10 s).
//
// State machine (retry timer 15 s): NONCE_WAIT asks for a nonce; TPM_QUOTE_WAIT lasts as long as
// EVE's tpmmgr takes to answer (TPM_QUOTE_MS with a TPM, NO_TPM_QUOTE_MS without); the quote is then
// sent in ATTEST_WAIT. With a TPM the quote is a real
// TPM2_Quote of the SoftTpm over PCR 0–15 with the nonce as qualifying data (a nonce outside 12–32
// bytes gets an empty quote, as tpmmgr does), DER signature, PCR 0–23, versions EVE and FIRMWARE,
// and the gzip'd event log unless EVE's size limits drop it. Answers: SUCCESS keeps the integrity
// token (checks any volume key handed back) and, with a TPM, escrows the volume key in
// ATTEST_ESCROW_WAIT (STORE_KEYS with the token; ITOKEN_MISMATCH restarts, anything else retries
// in 15 s) before COMPLETE; NONCE_MISMATCH, NO_CERT_FOUND and QUOTE_FAILED restart (RESTART_WAIT,
// 15 s, new nonce); INVALID or unknown resends the same quote in 15 s. A config 403 after a quote
// restarts too. Every state change is reported in ZInfoDevice.attestation_info.
//
// The SoftTpm lives as long as the device: powerOn() at every boot resets it (resetCount + 1,
// PCRs back to the build's boot values), while the token and all progress go with reset().

import { attest, certs, common, info } from '../../gen/eve-types.js';
import { zcertHash16 } from '../../protocol/cert-hash.js';
import { v2Path, type EndpointKey } from '../../protocol/endpoints.js';
import { Msg } from '../../protocol/messages.js';
import { EVE_MAX_RAW_EVENT_LOG } from '../../tpm/event-log-gzip.js';
import { SoftTpm } from '../../tpm/soft-tpm.js';
import type { DeviceFinding, DeviceOptions } from '../device-options.js';
import { isSuccess, type DeviceSender } from '../sender/device-sender.js';
import { armed, disarmed, type DeviceTimer } from '../core/device-timer.js';
import { smallArraySlab } from '../../memory/small-array-slab.js';
import { ATTEST_CERT_RETRY_MS, ATTEST_RETRY_MS } from '../core/eve-timers.js';
import type { Millis } from '../ports.js';
import { VaultKey } from './vault-key.js';

const A = info.AttestationState;
const R = attest.ZAttestResponseCode;
const KeysCode = attest.AttestStorageKeysResponseCode;
const EMPTY_TOKEN = new Uint8Array(0);

/** tpmmgr refuses nonces outside this range (then the quote is empty). */
export const TPM_NONCE_MIN = 12;
export const TPM_NONCE_MAX = 32;
/** EVE drops the event log when the whole ZAttestReq would exceed this many bytes. */
export const EVE_MAX_ATTEST_REQ = 63488;
/**
 * Simulated time from nonce to quote (zedagent → tpmmgr → TPM2_Quote → zedagent). Modelling choices,
 * not measurements: a hardware TPM signs with ECC P-256 in tens to a few hundred ms, and the agents'
 * pubsub hops add a little. They matter because EVE polls config in parallel: a config 403 that
 * comes back after the first quote was sent restarts attestation (§5.4), and in EVE the quote is
 * rarely out that fast.
 */
export const TPM_QUOTE_MS = 100;
export const NO_TPM_QUOTE_MS = 20;

export interface AttestationHost {
  readonly opts: DeviceOptions;
  readonly sender: DeviceSender;
  readonly uuid: string;
  readonly generation: number;
  finding(endpoint: EndpointKey, kind: DeviceFinding['kind'], detail: string): void;
  /** Queue the ATTEST_REQ_CERT bytes (key attest:<uuid>, discard on failure). */
  enqueueAttestCerts(bytes: Uint8Array, now: Millis): void;
  /** State or token changed (ZInfoDevice must be re-published; onboarding may be complete). */
  onAttestationChange(now: Millis): void;
  guard(fn: () => Promise<void> | void): void;
}

export class Attestation {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onTimerFired = (a: Attestation, dueAt: Millis): void => {
    a.timer = undefined;
    a.host.guard(() => a.onTimer(dueAt));
  };
  private static readonly onCertTimer = (a: Attestation, dueAt: Millis): void => {
    a.certTimer = undefined;
    a.host.guard(() => a.publishCerts(dueAt));
  };

  state: info.AttestationState = A.ATTESTATION_STATE_UNSPECIFIED;
  /** Integrity token from the last SUCCESS; lives in tmpfs, so a reboot loses it (§5.4). */
  token: Uint8Array | undefined;
  /** Quotes sent since boot (EVE attestationTryCount): a config 403 restarts attestation only if > 0. */
  quotesSent = 0;
  /** The ATTEST_REQ_CERT post has been accepted once. */
  certsPublished = false;
  /** Why the last step failed, for attestation_info.error. */
  lastError: string | undefined;
  /** The event log was left out of the last quote because of EVE's size limits. */
  eventLogDropped = false;
  private nonce: Uint8Array | undefined;
  /** ZAttestReq bytes of the quote for `nonce` (resent as is after INVALID). */
  private quoteReq: Uint8Array | undefined;
  private readonly tpm: SoftTpm | undefined;
  private poweredOn = false;
  private readonly vault: VaultKey | undefined;
  /** The state machine's retry and quote timer, and the certificate post's retry: only while armed (core/device-timer.ts). */
  private timer: DeviceTimer | undefined;
  private certTimer: DeviceTimer | undefined;
  /** The exchange with the controller in flight (its sequence number), 0 when none. */
  private exchanging = 0;
  private exchangeSeq = 0;
  /**
   * Why a restart was asked for (config 403) while a quote or escrow exchange was in flight. EVE's
   * attestation FSM handles one event at a time and makes its controller calls inside the
   * handler, so such a restart takes effect once that exchange's answer has been handled: a quote
   * answered SUCCESS still gives the device its token (and COMPLETE) before RESTART_WAIT.
   */
  private restartAfterExchange: string | undefined;

  constructor(private readonly host: AttestationHost) {
    const { tpm, identity, behaviour } = host.opts;
    if (tpm) {
      const quoteKey = identity.attestKey;
      if (!quoteKey) throw new Error(`device ${host.opts.index}: a TPM needs the identity's attestKey (the key attest.cert.pem certifies)`);
      const firmwareVersion = behaviour.firmwareVersion;
      if (!firmwareVersion) throw new Error(`device ${host.opts.index}: a TPM needs behaviour.firmwareVersion (it is measured into PCR 0)`);
      this.tpm = new SoftTpm({
        quoteKey,
        boot: { eveVersion: behaviour.eveVersion, firmwareVersion, tampered: tpm.tampered },
        powerOnAt: host.opts.clock.now(),
      });
      this.vault = new VaultKey(identity.deviceCertPem, () => (identity as { ecdhKey?: import('node:crypto').KeyObject }).ecdhKey ?? quoteKey);
    }
  }

  get complete(): boolean {
    return this.state === A.ATTESTATION_STATE_COMPLETE;
  }

  get hasTpm(): boolean {
    return this.tpm !== undefined;
  }

  /** The device's software TPM (tests and diagnostics). */
  get softTpm(): SoftTpm | undefined {
    return this.tpm;
  }

  /** The device boots: its TPM is reset (the first power-on is the one the TPM was made with). */
  powerOn(now: Millis): void {
    if (this.poweredOn) this.tpm?.reboot(now);
    this.poweredOn = true;
  }

  /** Starts after onboarding (or boot): certificates and the nonce request go out at once. */
  start(now: Millis): void {
    this.publishCerts(now);
    this.setState(A.ATTESTATION_STATE_NONCE_WAIT, now);
    this.arm(now);
  }

  /** The TPM was reset under the running device (tpm-reset fault): attest again with what it now quotes. */
  onTpmReset(now: Millis): void {
    if (!this.tpm) return;
    this.tpm.clear(now);
    if (this.state === A.ATTESTATION_STATE_UNSPECIFIED) return; // not attesting yet: the first round quotes the reset TPM
    this.restart(now, 'TPM reset');
  }

  /** Config answered 403: restart attestation if a quote was already sent (§5.4); true if it did. */
  restartAfterForbidden(now: Millis): boolean {
    if (this.quotesSent === 0) return false;
    if (this.state === A.ATTESTATION_STATE_RESTART_WAIT || this.state === A.ATTESTATION_STATE_NONCE_WAIT) return true;
    const why = 'controller refused the integrity token (config 403)';
    const inExchange = this.state === A.ATTESTATION_STATE_ATTEST_WAIT || this.state === A.ATTESTATION_STATE_ATTEST_ESCROW_WAIT;
    if (this.exchanging !== 0 && inExchange) {
      this.restartAfterExchange ??= why;
      return true;
    }
    this.restart(now, why);
    return true;
  }

  /** Gives the token's bytes back for reuse (read synchronously where it is used, never kept). */
  private dropToken(): void {
    if (this.token !== undefined) smallArraySlab.give(this.token);
    this.token = undefined;
  }

  /** The device reboots or stops: the token and all progress are gone. */
  reset(): void {
    this.timer = disarmed(this.timer);
    this.certTimer = disarmed(this.certTimer);
    this.state = A.ATTESTATION_STATE_UNSPECIFIED;
    this.dropToken();
    this.nonce = undefined;
    this.quoteReq = undefined;
    this.quotesSent = 0;
    this.certsPublished = false;
    this.lastError = undefined;
    this.exchanging = 0;
    this.restartAfterExchange = undefined;
  }

  private arm(at: Millis): void {
    this.timer = armed(this.timer, at, this.host.opts.scheduler, this, Attestation.onTimerFired);
  }

  /** Outcome of the certificate post (from the deferred queue). */
  onCertsOutcome(delivered: boolean, now: Millis): void {
    if (delivered) this.certsPublished = true;
    else this.certTimer = armed(this.certTimer, now + ATTEST_CERT_RETRY_MS, this.host.opts.scheduler, this, Attestation.onCertTimer);
  }

  /** ATTEST_REQ_CERT: ECDH (13), attestation (11) and with a TPM the EK (12) certificate (§5.3). */
  encodeCertRequest(): Uint8Array {
    const id = this.host.opts.identity;
    const zcert = (pem: string, type: certs.ZCertType, metaData?: certs.ZCertMetaData[]): certs.ZCert => {
      const bytes = new Uint8Array(Buffer.from(pem, 'utf8'));
      const c: certs.ZCert = { hashAlgo: common.HashAlgorithm.HASH_ALGORITHM_SHA256_16BYTES, certHash: zcertHash16(bytes), type, cert: bytes };
      if (metaData) c.meta_data_items = metaData;
      return c;
    };
    const list = [
      zcert(id.ecdhCertPem, certs.ZCertType.CERT_TYPE_DEVICE_ECDH_EXCHANGE),
      zcert(id.attestCertPem, certs.ZCertType.CERT_TYPE_DEVICE_RESTRICTED_SIGNING),
    ];
    const tpm = this.host.opts.tpm;
    if (tpm) {
      list.push(
        zcert(tpm.ekCertPem, certs.ZCertType.CERT_TYPE_DEVICE_ENDORSEMENT_RSA, [
          { type: certs.ZCertMetaDataType.Z_CERT_META_DATA_TYPE_TPM2_PUBLIC, meta_data: tpm.ekPublicArea },
        ]),
      );
    }
    return Msg.ZAttestReq.encode({ reqType: attest.ZAttestReqType.ATTEST_REQ_CERT, certs: list });
  }

  /**
   * ATTEST_REQ_QUOTE for `nonce` at `now`, as EVE's tpmmgr makes it. Without a TPM (or with a
   * nonce outside 12–32 bytes) the quote only carries the versions.
   */
  encodeQuoteRequest(nonce: Uint8Array, now: Millis): Uint8Array {
    const { behaviour } = this.host.opts;
    const versions: attest.AttestVersionInfo[] = [{ version_type: attest.AttestVersionType.ATTEST_VERSION_TYPE_EVE, version: behaviour.eveVersion }];
    if (behaviour.firmwareVersion) versions.push({ version_type: attest.AttestVersionType.ATTEST_VERSION_TYPE_FIRMWARE, version: behaviour.firmwareVersion });
    const quote: attest.ZAttestQuote = { versions };
    const reqType = attest.ZAttestReqType.ATTEST_REQ_QUOTE;
    this.eventLogDropped = false;
    const tpm = this.tpm;
    if (!tpm) return Msg.ZAttestReq.encode({ reqType, quote });
    if (nonce.length < TPM_NONCE_MIN || nonce.length > TPM_NONCE_MAX) {
      this.host.finding('attest', 'conformance', `nonce of ${nonce.length} bytes is outside the ${TPM_NONCE_MIN}–${TPM_NONCE_MAX} EVE's TPM accepts: empty quote sent`);
      return Msg.ZAttestReq.encode({ reqType, quote });
    }
    const q = tpm.quote(nonce, now);
    quote.attestData = q.attest;
    quote.signature = q.signatureDer;
    quote.pcr_values = tpm.readAllPcrs().map((value, index) => ({ index, hash_algo: attest.TpmHashAlgo.TPM_HASH_ALGO_SHA256, value }));
    // EVE's limits: the raw log at most 2 × 63488 bytes, the whole request at most 63488.
    if (tpm.eventLog().length <= EVE_MAX_RAW_EVENT_LOG) {
      const withLog = Msg.ZAttestReq.encode({ reqType, quote: { ...quote, tpm_binary_event_log: tpm.eventLogGzip() } });
      if (withLog.length <= EVE_MAX_ATTEST_REQ) return withLog;
    }
    this.eventLogDropped = true;
    return Msg.ZAttestReq.encode({ reqType, quote });
  }

  private publishCerts(now: Millis): void {
    this.host.enqueueAttestCerts(this.encodeCertRequest(), now);
  }

  private restart(now: Millis, why: string): void {
    this.restartAfterExchange = undefined;
    this.lastError = why;
    this.nonce = undefined;
    this.quoteReq = undefined;
    this.setState(A.ATTESTATION_STATE_RESTART_WAIT, now);
    this.arm(now + ATTEST_RETRY_MS);
  }

  private async onTimer(dueAt: Millis): Promise<void> {
    switch (this.state) {
      case A.ATTESTATION_STATE_RESTART_WAIT:
        this.setState(A.ATTESTATION_STATE_NONCE_WAIT, this.host.opts.clock.now());
        return this.requestNonce(dueAt);
      case A.ATTESTATION_STATE_NONCE_WAIT:
        return this.requestNonce(dueAt);
      case A.ATTESTATION_STATE_TPM_QUOTE_WAIT:
        return this.quoteReady(dueAt);
      case A.ATTESTATION_STATE_ATTEST_WAIT:
        return this.sendQuote(dueAt);
      case A.ATTESTATION_STATE_ATTEST_ESCROW_WAIT:
        return this.sendEscrow(dueAt);
      default:
        return;
    }
  }

  /** Posts a ZAttestReq and returns the verified ZAttestResponse, or undefined (counted). */
  private async exchange(reqBytes: Uint8Array, dueAt: Millis, what: string): Promise<attest.ZAttestResponse | undefined> {
    const { sender, opts } = this.host;
    const gen = this.host.generation;
    const seq = ++this.exchangeSeq;
    this.exchanging = seq;
    let answer;
    try {
      answer = await sender.post('attest', v2Path('attest', this.host.uuid), reqBytes, dueAt);
    } finally {
      if (this.exchanging === seq) this.exchanging = 0;
    }
    if (gen !== this.host.generation) return undefined;
    if (answer === undefined) {
      this.lastError = `${what}: no answer from the controller`;
      return undefined;
    }
    if (!isSuccess(answer.status)) {
      this.lastError = `${what}: HTTP ${answer.status}`;
      return undefined;
    }
    const payload = sender.open('attest', answer, opts.clock.now());
    if (payload === undefined) {
      this.lastError = `${what}: response failed verification`;
      return undefined;
    }
    try {
      return Msg.ZAttestResponse.decode(payload);
    } catch (e) {
      sender.reject('attest', 'undecodable-body', `${what}: ${(e as Error).message}`);
      this.lastError = `${what}: undecodable response`;
      return undefined;
    }
  }

  private async requestNonce(dueAt: Millis): Promise<void> {
    const gen = this.host.generation;
    const resp = await this.exchange(Msg.ZAttestReq.encode({ reqType: attest.ZAttestReqType.ATTEST_REQ_NONCE }), dueAt, 'ATTEST_REQ_NONCE');
    if (gen !== this.host.generation) return;
    const now = this.host.opts.clock.now();
    const nonce = resp?.nonce?.nonce;
    if (resp === undefined || resp.respType !== attest.ZAttestRespType.ATTEST_RESP_NONCE || !nonce || nonce.length === 0) {
      if (resp !== undefined) {
        this.host.sender.reject('attest', 'conformance', `ATTEST_REQ_NONCE answered respType ${resp.respType ?? 0} without a nonce`);
        this.lastError = 'nonce response without a nonce';
      }
      this.arm(now + ATTEST_RETRY_MS); // stay in NONCE_WAIT, retry in 15 s
      return;
    }
    this.nonce = nonce;
    // TPM_QUOTE_WAIT while tpmmgr works; not published (EVE's info would rarely catch it).
    this.state = A.ATTESTATION_STATE_TPM_QUOTE_WAIT;
    this.arm(now + (this.tpm ? TPM_QUOTE_MS : NO_TPM_QUOTE_MS));
  }

  /** tpmmgr's answer: the quote for the current nonce, sent at once. */
  private quoteReady(dueAt: Millis): Promise<void> {
    this.quoteReq = this.encodeQuoteRequest(this.nonce!, dueAt);
    this.setState(A.ATTESTATION_STATE_ATTEST_WAIT, this.host.opts.clock.now());
    return this.sendQuote(dueAt);
  }

  private async sendQuote(dueAt: Millis): Promise<void> {
    const gen = this.host.generation;
    const reqBytes = this.quoteReq;
    if (!reqBytes) return this.restart(this.host.opts.clock.now(), 'no quote to send');
    this.quotesSent++;
    const resp = await this.exchange(reqBytes, dueAt, 'ATTEST_REQ_QUOTE');
    if (gen !== this.host.generation) return;
    if (this.state !== A.ATTESTATION_STATE_ATTEST_WAIT) {
      this.restartAfterExchange = undefined; // restarted meanwhile (TPM reset)
      return;
    }
    const now = this.host.opts.clock.now();
    // A TPM device escrows its key first (the restart, if one was asked for, follows that answer).
    if (this.onQuoteAnswer(resp, now)) return this.sendEscrow(now);
    this.applyRestartAfterExchange(now);
  }

  /** The answer to a quote (undefined: none usable); true when the escrow step follows. */
  private onQuoteAnswer(resp: attest.ZAttestResponse | undefined, now: Millis): boolean {
    const quoteResp = resp?.quoteResp;
    if (resp === undefined || resp.respType !== attest.ZAttestRespType.ATTEST_RESP_QUOTE_RESP || !quoteResp) {
      if (resp !== undefined) {
        this.host.sender.reject('attest', 'conformance', `ATTEST_REQ_QUOTE answered respType ${resp.respType ?? 0} without quoteResp`);
        this.lastError = 'quote response without quoteResp';
      }
      this.arm(now + ATTEST_RETRY_MS); // resend the quote with the same nonce
      return false;
    }
    switch (quoteResp.response ?? R.Z_ATTEST_RESPONSE_CODE_INVALID) {
      case R.Z_ATTEST_RESPONSE_CODE_SUCCESS:
        // EVE keeps the token even if empty (with a warning).
        // A copy (in the thread's slab, memory/small-array-slab.ts): the decoded field is a view of the
        // whole answer, which the token would keep alive.
        this.dropToken();
        this.token = smallArraySlab.copyBytes(quoteResp.integrity_token ?? EMPTY_TOKEN);
        if (this.token.length === 0) this.host.finding('attest', 'conformance', 'quote SUCCESS without an integrity_token');
        this.checkReturnedKeys(quoteResp.keys ?? []);
        this.lastError = undefined;
        this.nonce = undefined;
        this.quoteReq = undefined;
        if (!this.vault) {
          this.setState(A.ATTESTATION_STATE_COMPLETE, now); // no TPM: escrow skipped
          return false;
        }
        this.setState(A.ATTESTATION_STATE_ATTEST_ESCROW_WAIT, now);
        return true;
      case R.Z_ATTEST_RESPONSE_CODE_NONCE_MISMATCH:
        this.restart(now, 'quote refused: nonce mismatch');
        return false;
      case R.Z_ATTEST_RESPONSE_CODE_NO_CERT_FOUND:
        this.restart(now, 'quote refused: no attestation certificate found');
        return false;
      case R.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED:
        this.restart(now, 'quote refused: quote failed verification');
        return false;
      default:
        this.lastError = `quote answered with response code ${quoteResp.response ?? 0}`;
        this.arm(now + ATTEST_RETRY_MS); // INVALID/unknown: same nonce again in 15 s
        return false;
    }
  }

  /** A restart asked for during the exchange just handled (restartAfterExchange): now. */
  private applyRestartAfterExchange(now: Millis): void {
    const why = this.restartAfterExchange;
    if (why !== undefined) this.restart(now, why);
  }

  /** EVE hands VSK keys from a SUCCESS answer to its vault: they must be the key this device escrowed. */
  private checkReturnedKeys(keys: attest.AttestVolumeKey[]): void {
    for (const k of keys) {
      if (k.key_type !== attest.AttestVolumeKeyType.ATTEST_VOLUME_KEY_TYPE_VSK || !k.key || k.key.length === 0) continue;
      const problem = this.vault ? this.vault.checkReturned(k) : 'a volume key was returned to a device that never escrowed one';
      if (problem) this.host.finding('attest', 'conformance', problem);
    }
  }

  /** Step 4 (TPM only): STORE_KEYS with the integrity token and the wrapped volume key. */
  private async sendEscrow(dueAt: Millis): Promise<void> {
    const gen = this.host.generation;
    const storage_keys: attest.AttestStorageKeys = { integrity_token: this.token ?? EMPTY_TOKEN, keys: this.vault!.escrowKeys() };
    const req = Msg.ZAttestReq.encode({ reqType: attest.ZAttestReqType.Z_ATTEST_REQ_TYPE_STORE_KEYS, storage_keys });
    const resp = await this.exchange(req, dueAt, 'STORE_KEYS');
    if (gen !== this.host.generation) return;
    if (this.state !== A.ATTESTATION_STATE_ATTEST_ESCROW_WAIT) {
      this.restartAfterExchange = undefined;
      return;
    }
    const now = this.host.opts.clock.now();
    this.onEscrowAnswer(resp, now);
    this.applyRestartAfterExchange(now);
  }

  private onEscrowAnswer(resp: attest.ZAttestResponse | undefined, now: Millis): void {
    const code = resp?.respType === attest.ZAttestRespType.Z_ATTEST_RESP_TYPE_STORE_KEYS ? resp.storage_keys_resp?.response : undefined;
    if (code === KeysCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_SUCCESS) {
      this.lastError = undefined;
      this.setState(A.ATTESTATION_STATE_COMPLETE, now);
      return;
    }
    if (code === KeysCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_ITOKEN_MISMATCH) return this.restart(now, 'escrow refused: integrity token mismatch');
    if (resp !== undefined) {
      if (code === undefined) this.host.sender.reject('attest', 'conformance', `STORE_KEYS answered respType ${resp.respType ?? 0} without storage_keys_resp`);
      this.lastError = `STORE_KEYS answered response code ${code ?? 'none'}`;
    }
    this.arm(now + ATTEST_RETRY_MS); // retry step 4
  }

  private setState(state: info.AttestationState, now: Millis): void {
    if (state === this.state) return;
    this.state = state;
    this.host.onAttestationChange(now);
  }
}
