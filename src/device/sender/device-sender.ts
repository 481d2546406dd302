// Every request a virtual device makes goes through here: EVE's headers (§13.1), the AuthContainer
// signed with the device key (or the onboarding key for /register, §1.2), per-endpoint counts, the
// zedcloud request statistics EVE reports in its metrics, and verification of enveloped answers
// (§1.3). Failures come back as values, never as exceptions: one bad answer costs one finding.

import { ONBOARDING_MIMES, protoContentTypeProblem } from './proto-content-type.js';
import { senderCertHash } from '../../protocol/cert-hash.js';
import { EnvelopeError, openResponse, sealRequest, type RequestSigner } from '../../protocol/envelope.js';
import { keepSeal, sealedAgain } from '../../protocol/repeated-seal.js';
import type { TrustedControllerCerts } from '../../protocol/controller-certs.js';
import type { EndpointKey } from '../../protocol/endpoints.js';
import { certificateDer, pemBase64Bytes } from '../../protocol/pem.js';
import type { DeviceIdentity } from '../../identity/device-identity.js';
import type { DeviceFinding, DeviceOptions } from '../device-options.js';
import type { DeviceStats } from './device-stats.js';
import type { DeviceCounters } from '../telemetry/metrics-builder.js';
import type { ExpectedAnswer, Millis, TransportRequest, TransportResponse } from '../ports.js';
import { ApiV1Dialect } from './api-v1-dialect.js';
import { isDocumentedStatus, undocumentedStatusDetail } from '../../protocol/documented-statuses.js';
import type { ApiVersion } from '../../protocol/api-version.js';
import { appUuidOfV2Path } from '../../protocol/v1-endpoints.js';

const PROTO_MIME = 'application/x-proto-binary';

/** What the sender needs from its device. */
export interface SenderHost {
  readonly opts: DeviceOptions;
  readonly tally: DeviceStats;
  readonly counters: DeviceCounters;
  readonly trust: SenderTrust;
  /** Device UUID, '' until /uuid answered. */
  readonly uuid: string;
  /** EVE's timer.send.timeout, seconds: the whole-request deadline (absent or 0: the transport's). */
  readonly sendTimeoutS?: number;
  finding(endpoint: EndpointKey, kind: DeviceFinding['kind'], detail: string, about?: FindingAbout): void;
}

/** The answer a finding is about: its HTTP status and the request's X-Request-Id. */
export type FindingAbout = Pick<DeviceFinding, 'status' | 'requestId'>;

/**
 * What the sender needs of the controller signing certificates the device trusts
 * (lifecycle/controller-trust.ts keeps them).
 */
export interface SenderTrust {
  /** The trusted certificates; undefined while none are (no valid /certs answer yet). */
  readonly current: TrustedControllerCerts | undefined;
  /** An answer was signed by a certificate the device does not know (EVE fetches /certs again). */
  onCertMiss(now: Millis): void;
}

/** A request's answer, or undefined when no HTTP answer came (already counted). */
export type Answer = TransportResponse | undefined;

/** Identity fields the identity layer may have computed already (DeviceIdentityMaterial). */
interface PrecomputedIdentity extends DeviceIdentity {
  deviceCertHash?: Uint8Array;
  onboardCertHash?: Uint8Array;
  onboardCertB64Pem?: Uint8Array;
}

export class DeviceSender {
  private deviceSigner: RequestSigner | undefined;
  /** The last config poll's AuthContainer (protocol/repeated-seal.ts): an unchanged poll goes out in it again. */
  private lastConfigSeal: string | undefined;
  /** Set for an API v1 device: paths, raw bodies and client certificates as v1 wants them. */
  readonly v1: ApiV1Dialect | undefined;

  constructor(private readonly host: SenderHost) {
    const b = host.opts.behaviour;
    this.v1 = b.api === 'v1' ? new ApiV1Dialect(b.v1ConfigMethod, b.preRegistered) : undefined;
  }

  get api(): ApiVersion {
    return this.v1 ? 'v1' : 'v2';
  }

  /** GET with no body and no envelope (certs, ping, §1.2). */
  get(endpoint: EndpointKey, path: string, dueAt: Millis): Promise<Answer> {
    return this.send(endpoint, 'GET', path, undefined, dueAt);
  }

  /** POST of `payload` sealed in an AuthContainer signed with the device key; `expect` names
   *  non-success answers that are normal at this point (counted apart from errors). */
  post(endpoint: EndpointKey, path: string, payload: Uint8Array, dueAt: Millis, expect?: ExpectedAnswer): Promise<Answer> {
    if (this.v1) return this.send(endpoint, 'POST', path, payload, dueAt, expect);
    // Sealed as it leaves (TransportRequest.build) where the transport can: EVE signs a request
    // as it sends it, and a request waiting for an in-flight slot then holds no sealed copy.
    if (this.host.opts.transport.buildsBodiesLate === true) return this.send(endpoint, 'POST', path, undefined, dueAt, expect, () => this.seal(endpoint, payload));
    return this.send(endpoint, 'POST', path, this.seal(endpoint, payload), dueAt, expect);
  }

  /** The request's AuthContainer; a config poll identical to the last one reuses its envelope. */
  private seal(endpoint: EndpointKey, payload: Uint8Array): Uint8Array {
    if (endpoint !== 'config') return sealRequest(payload, this.signer());
    const again = this.lastConfigSeal === undefined ? undefined : sealedAgain(this.lastConfigSeal, payload);
    if (again !== undefined) return again;
    const sealed = sealRequest(payload, this.signer());
    this.lastConfigSeal = keepSeal(sealed, payload);
    return sealed;
  }

  /** POST /register: signed with the onboarding key, senderCert = base64(onboarding PEM) (§2.2). */
  postWithOnboardingKey(endpoint: EndpointKey, path: string, payload: Uint8Array, dueAt: Millis): Promise<Answer> {
    // v1: the raw message; the onboarding certificate goes in the TLS handshake instead.
    if (this.v1) return this.send(endpoint, 'POST', path, payload, dueAt);
    const id = this.host.opts.identity as PrecomputedIdentity;
    const signer: RequestSigner = {
      key: id.onboardKey,
      certDerHash: id.onboardCertHash ?? senderCertHash(certificateDer(id.onboardCertPem, 'onboarding certificate')),
      senderCertB64Pem: id.onboardCertB64Pem ?? pemBase64Bytes(id.onboardCertPem),
    };
    return this.send(endpoint, 'POST', path, sealRequest(payload, signer), dueAt);
  }

  /**
   * Verifies an enveloped answer against the controller signing certificate learnt from /certs
   * and returns its payload; reports a finding and returns undefined when it does not verify. A
   * "cert miss" (signed by a certificate the device does not know) also makes the device fetch
   * /certs again, as EVE does.
   */
  open(endpoint: EndpointKey, answer: TransportResponse, now: Millis): Uint8Array | undefined {
    if (!this.contentTypeOk(endpoint, answer)) return undefined;
    // v1 answers carry no envelope: mutual TLS authenticated the controller.
    if (this.v1) return this.v1.payload(endpoint, answer.body);
    const trust = this.host.trust.current;
    if (!trust) {
      this.reject(endpoint, 'unknown-signer', 'answer arrived before any controller certificate was trusted');
      return undefined;
    }
    try {
      return openResponse(answer.body, trust).payload;
    } catch (e) {
      // EVE counts envelope failures apart from transport failures (zedcloud authVerifyFailure).
      this.host.counters.recordRequest({ endpoint, reqBytes: 0, respBytes: 0, success: false, authFailure: true, latencyMs: 0, at: now });
      if (e instanceof EnvelopeError) {
        if (e.kind === 'cert-miss') {
          this.reject(endpoint, 'unknown-signer', e.message);
          this.host.trust.onCertMiss(now);
        } else if (e.kind === 'bad-signature') this.reject(endpoint, 'bad-signature', e.message);
        else this.reject(endpoint, 'bad-envelope', `${e.kind}: ${e.message}`);
      } else this.reject(endpoint, 'bad-envelope', (e as Error).message);
      return undefined;
    }
  }

  /** EVE reads a protobuf answer only with its Content-Type (proto-content-type.ts); else a finding. */
  contentTypeOk(endpoint: EndpointKey, answer: TransportResponse): boolean {
    const problem = protoContentTypeProblem(answer.headers, answer.body, endpoint === 'uuid' || endpoint === 'certs' ? ONBOARDING_MIMES : undefined);
    if (problem === undefined) return true;
    this.reject(endpoint, 'wrong-content-type', `${problem} (${answer.body.length} bytes)`);
    return false;
  }

  /** Counts an answer whose status was success but whose body could not be used, and reports it. */
  reject(endpoint: EndpointKey, kind: DeviceFinding['kind'], detail: string): void {
    this.host.tally.bump(endpoint, 'rejected');
    this.host.finding(endpoint, kind, detail);
  }

  private signer(): RequestSigner {
    if (!this.deviceSigner) {
      const id = this.host.opts.identity as PrecomputedIdentity;
      this.deviceSigner = {
        key: id.deviceKey,
        certDerHash: id.deviceCertHash ?? senderCertHash(certificateDer(id.deviceCertPem, 'device certificate')),
      };
    }
    return this.deviceSigner;
  }

  private send(
    endpoint: EndpointKey,
    method: 'GET' | 'POST',
    path: string,
    body: Uint8Array | undefined,
    dueAt: Millis,
    expect?: ExpectedAnswer,
    build?: () => Uint8Array,
  ): Promise<Answer> {
    const { opts, tally: stats } = this.host;
    // The counters of this boot: a reboot while the request is out replaces (and retires) them.
    const counters = this.host.counters;
    // EVE counts app logs per app instance URL (zedcloud urlMetrics).
    const appUuid = endpoint === 'appnewlogs' || endpoint === 'applogs' ? appUuidOfV2Path(path) : undefined;
    const wire = this.v1?.request(endpoint, method, path, body);
    if (wire) ({ method, path, body } = wire);
    const headers: Record<string, string> = { 'X-Request-Id': opts.rng.uuid() };
    if (method === 'POST') headers['Content-Type'] = PROTO_MIME;
    if (this.host.uuid === '') {
      // Serial headers only while the device UUID is unknown (§13.1).
      if (opts.identity.serial) headers['X-Serial-Number'] = opts.identity.serial;
      if (opts.identity.softSerial) headers['X-Soft-Serial'] = opts.identity.softSerial;
    }
    stats.bump(endpoint, 'sent');
    const req: TransportRequest = { endpoint, method, path, headers, body, build, dueAt, deviceIndex: opts.index };
    if (expect) req.expect = expect;
    const sendTimeoutS = this.host.sendTimeoutS;
    if (sendTimeoutS !== undefined && sendTimeoutS > 0) req.timeoutMs = sendTimeoutS * 1000;
    if (wire) req.clientCert = wire.clientCert;
    let sent: Promise<TransportResponse>;
    try {
      sent = opts.transport.request(req);
    } catch (err) {
      sent = Promise.reject(err);
    }
    // then() with two handlers rather than an async function: a request that waits seconds for an
    // in-flight slot keeps what its caller holds, and a suspended async frame held every local.
    return sent.then(
      (answer) => this.answered(endpoint, req, appUuid, counters, answer),
      // Any rejection is "no HTTP answer" (TransportError by contract; anything else is treated alike).
      () => this.unanswered(endpoint, req, appUuid, counters),
    );
  }

  /** No HTTP answer (already failed in the transport): counted, and recorded in its boot's counters. */
  private unanswered(endpoint: EndpointKey, req: TransportRequest, appUuid: string | undefined, counters: DeviceCounters): undefined {
    const now = this.host.opts.clock.now();
    this.host.tally.bump(endpoint, 'transportError');
    if (counters === this.host.counters) {
      counters.recordRequest({ endpoint, appUuid, reqBytes: req.body?.length ?? 0, respBytes: 0, success: false, latencyMs: now - req.dueAt, at: now });
    }
    return undefined;
  }

  /** An HTTP answer: counted, judged against the interface document, recorded in its boot's counters. */
  private answered(endpoint: EndpointKey, req: TransportRequest, appUuid: string | undefined, counters: DeviceCounters, answer: TransportResponse): Answer {
    const now = this.host.opts.clock.now();
    this.host.tally.answer(endpoint, answer.status);
    // Every answer is judged here, once: a status the interface document does not list for the
    // endpoint is a finding (documented-statuses.ts); the caller still reacts to it as EVE would.
    if (!isDocumentedStatus(this.api, endpoint, answer.status)) {
      this.host.finding(endpoint, 'undocumented-status', undocumentedStatusDetail(this.api, endpoint, answer.status, req.method, req.path), {
        status: answer.status,
        requestId: req.headers['X-Request-Id']!,
      });
    }
    this.v1?.onAnswer(endpoint, answer.status);
    if (counters === this.host.counters) {
      counters.recordRequest({
        endpoint,
        appUuid,
        reqBytes: req.body?.length ?? 0,
        respBytes: answer.body.length,
        success: isSuccess(answer.status),
        latencyMs: now - req.dueAt,
        at: now,
      });
    }
    return answer;
  }
}

/** 200, 201, 204 and 304 are success at EVE's transport layer (§0). */
export function isSuccess(status: number): boolean {
  return status === 200 || status === 201 || status === 204 || status === 304;
}
