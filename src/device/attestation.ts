// Attestation without a TPM, as EVE runs it (§5.3, §5.4, §14): the device certificates (ECDH 13,
// attestation 11) go out once through the deferred queue (discard on failure, re-trigger after
// 10 s); the state machine asks for a nonce, answers with an empty quote that carries only the
// EVE version, and on SUCCESS keeps the integrity token for config requests. No TPM means no
// escrow step. Every state change is reported in ZInfoDevice.attestation_info.

import { attest, certs, common, info } from '../gen/eve-types.js';
import { zcertHash16 } from '../protocol/cert-hash.js';
import { v2Path, type EndpointKey } from '../protocol/endpoints.js';
import { Msg } from '../protocol/messages.js';
import type { DeviceFinding, DeviceOptions } from './device-options.js';
import { isSuccess, type DeviceSender } from './device-sender.js';
import { DeviceTimer } from './device-timer.js';
import { ATTEST_CERT_RETRY_MS, ATTEST_RETRY_MS } from './eve-timers.js';
import type { Millis } from './ports.js';
import { isDocumentedStatus } from './status-expectations.js';

const A = info.AttestationState;
const R = attest.ZAttestResponseCode;

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
  state: info.AttestationState = A.ATTESTATION_STATE_UNSPECIFIED;
  /** Integrity token from the last SUCCESS; lives in tmpfs, so a reboot loses it (§5.4). */
  token: Uint8Array | undefined;
  /** Quotes sent since boot (EVE attestationTryCount): a config 403 restarts attestation only if > 0. */
  quotesSent = 0;
  /** The ATTEST_REQ_CERT post has been accepted once. */
  certsPublished = false;
  /** Why the last step failed, for attestation_info.error. */
  lastError: string | undefined;
  private nonce: Uint8Array | undefined;
  private readonly timer: DeviceTimer;
  private readonly certTimer: DeviceTimer;

  constructor(private readonly host: AttestationHost) {
    this.timer = new DeviceTimer(host.opts.scheduler, (dueAt) => host.guard(() => this.onTimer(dueAt)));
    this.certTimer = new DeviceTimer(host.opts.scheduler, (dueAt) => host.guard(() => this.publishCerts(dueAt)));
  }

  get complete(): boolean {
    return this.state === A.ATTESTATION_STATE_COMPLETE;
  }

  /** Starts after onboarding (or boot): certificates and the nonce request go out at once. */
  start(now: Millis): void {
    this.publishCerts(now);
    this.setState(A.ATTESTATION_STATE_NONCE_WAIT, now);
    this.timer.at(now);
  }

  /** Config answered 403: restart attestation if a quote was already sent (§5.4); true if it did. */
  restartAfterForbidden(now: Millis): boolean {
    if (this.quotesSent === 0) return false;
    if (this.state === A.ATTESTATION_STATE_RESTART_WAIT || this.state === A.ATTESTATION_STATE_NONCE_WAIT) return true;
    this.restart(now, 'controller refused the integrity token (config 403)');
    return true;
  }

  /** The device reboots or stops: the token and all progress are gone. */
  reset(): void {
    this.timer.cancel();
    this.certTimer.cancel();
    this.state = A.ATTESTATION_STATE_UNSPECIFIED;
    this.token = undefined;
    this.nonce = undefined;
    this.quotesSent = 0;
    this.certsPublished = false;
    this.lastError = undefined;
  }

  /** Outcome of the certificate post (from the deferred queue). */
  onCertsOutcome(delivered: boolean, now: Millis): void {
    if (delivered) this.certsPublished = true;
    else this.certTimer.at(now + ATTEST_CERT_RETRY_MS);
  }

  /** ATTEST_REQ_CERT with the ECDH (13) and attestation (11) certificates, hashes over the PEM file bytes (§5.3). */
  encodeCertRequest(): Uint8Array {
    const id = this.host.opts.identity;
    const zcert = (pem: string, type: certs.ZCertType): certs.ZCert => {
      const bytes = new Uint8Array(Buffer.from(pem, 'utf8'));
      return { hashAlgo: common.HashAlgorithm.HASH_ALGORITHM_SHA256_16BYTES, certHash: zcertHash16(bytes), type, cert: bytes };
    };
    return Msg.ZAttestReq.encode({
      reqType: attest.ZAttestReqType.ATTEST_REQ_CERT,
      certs: [
        zcert(id.ecdhCertPem, certs.ZCertType.CERT_TYPE_DEVICE_ECDH_EXCHANGE),
        zcert(id.attestCertPem, certs.ZCertType.CERT_TYPE_DEVICE_RESTRICTED_SIGNING),
      ],
    });
  }

  private publishCerts(now: Millis): void {
    this.host.enqueueAttestCerts(this.encodeCertRequest(), now);
  }

  private restart(now: Millis, why: string): void {
    this.lastError = why;
    this.nonce = undefined;
    this.setState(A.ATTESTATION_STATE_RESTART_WAIT, now);
    this.timer.at(now + ATTEST_RETRY_MS);
  }

  private async onTimer(dueAt: Millis): Promise<void> {
    switch (this.state) {
      case A.ATTESTATION_STATE_RESTART_WAIT:
        this.setState(A.ATTESTATION_STATE_NONCE_WAIT, this.host.opts.clock.now());
        return this.requestNonce(dueAt);
      case A.ATTESTATION_STATE_NONCE_WAIT:
        return this.requestNonce(dueAt);
      case A.ATTESTATION_STATE_ATTEST_WAIT:
        return this.sendQuote(dueAt);
      default:
        return;
    }
  }

  /** Posts a ZAttestReq and returns the verified ZAttestResponse, or undefined (counted). */
  private async exchange(req: attest.ZAttestReq, dueAt: Millis, what: string): Promise<attest.ZAttestResponse | undefined> {
    const { sender, opts } = this.host;
    const gen = this.host.generation;
    const answer = await sender.post('attest', v2Path('attest', this.host.uuid), Msg.ZAttestReq.encode(req), dueAt);
    if (gen !== this.host.generation) return undefined;
    if (answer === undefined) {
      this.lastError = `${what}: no answer from the controller`;
      return undefined;
    }
    if (!isSuccess(answer.status)) {
      if (!isDocumentedStatus('attest', answer.status)) this.host.finding('attest', 'unexpected-status', `${what} answered ${answer.status}`);
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
    const resp = await this.exchange({ reqType: attest.ZAttestReqType.ATTEST_REQ_NONCE }, dueAt, 'ATTEST_REQ_NONCE');
    if (gen !== this.host.generation) return;
    const now = this.host.opts.clock.now();
    const nonce = resp?.nonce?.nonce;
    if (resp === undefined || resp.respType !== attest.ZAttestRespType.ATTEST_RESP_NONCE || !nonce || nonce.length === 0) {
      if (resp !== undefined) {
        this.host.sender.reject('attest', 'conformance', `ATTEST_REQ_NONCE answered respType ${resp.respType ?? 0} without a nonce`);
        this.lastError = 'nonce response without a nonce';
      }
      this.timer.at(now + ATTEST_RETRY_MS); // stay in NONCE_WAIT, retry in 15 s
      return;
    }
    this.nonce = nonce;
    // No TPM: the (empty) quote is ready at once, TPM_QUOTE_WAIT passes without a wake-up.
    this.setState(A.ATTESTATION_STATE_ATTEST_WAIT, now);
    await this.sendQuote(now);
  }

  private async sendQuote(dueAt: Millis): Promise<void> {
    const gen = this.host.generation;
    const quote: attest.ZAttestQuote = {
      versions: [{ version_type: attest.AttestVersionType.ATTEST_VERSION_TYPE_EVE, version: this.host.opts.behaviour.eveVersion }],
    };
    this.quotesSent++;
    const resp = await this.exchange({ reqType: attest.ZAttestReqType.ATTEST_REQ_QUOTE, quote }, dueAt, 'ATTEST_REQ_QUOTE');
    if (gen !== this.host.generation) return;
    const now = this.host.opts.clock.now();
    const quoteResp = resp?.quoteResp;
    if (resp === undefined || resp.respType !== attest.ZAttestRespType.ATTEST_RESP_QUOTE_RESP || !quoteResp) {
      if (resp !== undefined) {
        this.host.sender.reject('attest', 'conformance', `ATTEST_REQ_QUOTE answered respType ${resp.respType ?? 0} without quoteResp`);
        this.lastError = 'quote response without quoteResp';
      }
      this.timer.at(now + ATTEST_RETRY_MS); // resend the quote with the same nonce
      return;
    }
    switch (quoteResp.response ?? R.Z_ATTEST_RESPONSE_CODE_INVALID) {
      case R.Z_ATTEST_RESPONSE_CODE_SUCCESS:
        // EVE keeps the token even if empty (with a warning); no TPM → escrow skipped → COMPLETE.
        this.token = quoteResp.integrity_token ?? new Uint8Array(0);
        if (this.token.length === 0) this.host.finding('attest', 'conformance', 'quote SUCCESS without an integrity_token');
        this.lastError = undefined;
        this.setState(A.ATTESTATION_STATE_COMPLETE, now);
        return;
      case R.Z_ATTEST_RESPONSE_CODE_NONCE_MISMATCH:
        return this.restart(now, 'quote refused: nonce mismatch');
      case R.Z_ATTEST_RESPONSE_CODE_NO_CERT_FOUND:
        return this.restart(now, 'quote refused: no attestation certificate found');
      case R.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED:
        return this.restart(now, 'quote refused: quote failed verification');
      default:
        this.lastError = `quote answered with response code ${quoteResp.response ?? 0}`;
        this.timer.at(now + ATTEST_RETRY_MS); // INVALID/unknown: same nonce again in 15 s
    }
  }

  private setState(state: info.AttestationState, now: Millis): void {
    if (state === this.state) return;
    this.state = state;
    this.host.onAttestationChange(now);
  }
}
