// The controller's --sink mode: a load-test sink, NOT a conformance controller. It lets one
// machine host a 100,000-device run by answering the steady-state endpoints from precomputed
// signed responses:
//
// - attest: one sealed answer per request type, shared by every device (a fixed nonce; CERT
//   accepted; every quote SUCCESS with one fixed integrity token; STORE_KEYS accepted). Quotes,
//   nonces and certificates are not checked.
// - config: 304 when the request's configHash is the device's current one, else the device's
//   signed config (built and signed once per config version, sealed-config-replies.ts). The
//   integrity token is not checked.
// - info, metrics, logs, app logs, flow logs: 201 without decoding the body; newlogs: 201 and a
//   fixed ServerMetrics body.
//
// The sender is the device the path names. A configurable sample of requests (verifySample, a
// share: 0.01 = every 100th request, spread evenly) is opened and verified in full: a bad
// signature, an unknown sender or another device's path is refused as in conformance mode
// (401/400/403), so a run whose devices sign wrongly still shows it. Requests are counted per
// endpoint and status as always. Onboarding (register, uuid, certs, ping) and paths without a
// device UUID are answered by the conformance handlers.

import { attest } from '../../gen/eve-types.js';
import { configResponseAround } from '../../protocol/config-response-bytes.js';
import { Msg } from '../../protocol/messages.js';
import { PROTO_MIME, type ControllerContext, type Reply, type RequestState } from './controller-context.js';
import { authenticateDevice } from './device-auth.js';
import type { DeviceRecord } from './device-record.js';
import { badRequest, unprocessable } from './http-error.js';
import type { ResponseSealer } from './envelope-adapter.js';

const Req = attest.ZAttestReqType;
const Resp = attest.ZAttestRespType;

/** The integrity token every device gets from the sink (32 bytes, as the conformance mode's). */
export const SINK_INTEGRITY_TOKEN = new Uint8Array(Buffer.from('evesim-sink-integrity-token-0001', 'latin1'));
const SINK_NONCE = new Uint8Array(Buffer.from('evesim-sink-nonce-fixed-32-bytes', 'latin1'));

const PPM = 1_000_000;
const TELEMETRY = new Set(['info', 'metrics', 'logs', 'applogs', 'appnewlogs', 'flowlog']);

export interface SinkCounts {
  /** Requests answered by the sink, and among them those whose signature was verified. */
  answered: number;
  verified: number;
}

export class SinkResponder {
  readonly counts: SinkCounts = { answered: 0, verified: 0 };
  private readonly attestReplies: Map<number, Uint8Array>;
  private readonly newlogsBody = Buffer.from(JSON.stringify({ cpu_percentage: 0, log_process_delay_msec: 0 }));
  /** Even sampler in integer millionths (no drift): adds the share per request, verifies on reaching 1. */
  private readonly samplePpm: number;
  private sampleCredit: number;

  constructor(
    verifySample: number,
    sealer: ResponseSealer,
  ) {
    this.samplePpm = Math.round(verifySample * PPM);
    // The first request is verified whenever the share is above 0, so a short test run sees one.
    this.sampleCredit = PPM - this.samplePpm;
    const seal = (r: attest.ZAttestResponse) => sealer.seal(Msg.ZAttestResponse.encode(r));
    this.attestReplies = new Map([
      [Req.ATTEST_REQ_NONCE, seal({ respType: Resp.ATTEST_RESP_NONCE, nonce: { nonce: SINK_NONCE } })],
      [Req.ATTEST_REQ_CERT, seal({ respType: Resp.ATTEST_RESP_CERT })],
      [
        Req.ATTEST_REQ_QUOTE,
        seal({
          respType: Resp.ATTEST_RESP_QUOTE_RESP,
          quoteResp: { response: attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_SUCCESS, integrity_token: SINK_INTEGRITY_TOKEN, keys: [] },
        }),
      ],
      [
        Req.Z_ATTEST_REQ_TYPE_STORE_KEYS,
        seal({
          respType: Resp.Z_ATTEST_RESP_TYPE_STORE_KEYS,
          storage_keys_resp: { response: attest.AttestStorageKeysResponseCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_SUCCESS },
        }),
      ],
    ]);
  }

  /** The sink's answer, or undefined when the conformance handlers answer this endpoint. Throws ControllerHttpError. */
  answer(ctx: ControllerContext, req: RequestState): Reply | undefined {
    const { endpoint, deviceUuid } = req.route;
    const sunk = endpoint === 'config' || endpoint === 'attest' || endpoint === 'newlogs' || TELEMETRY.has(endpoint);
    if (!sunk || deviceUuid === undefined) return undefined;
    this.counts.answered++;
    let device: DeviceRecord;
    let payload: Uint8Array | undefined;
    if (this.sampled()) {
      this.counts.verified++;
      ({ device, payload } = authenticateDevice(ctx, req));
    } else {
      const d = ctx.registry.byDeviceUuid(deviceUuid);
      if (!d) throw badRequest(`unknown device ${deviceUuid}`);
      device = d;
      req.device = d;
    }
    if (endpoint === 'newlogs') return { status: 201, body: this.newlogsBody, contentType: 'application/json' };
    if (TELEMETRY.has(endpoint)) return { status: 201 };
    payload ??= unverifiedPayload(req.body);
    return endpoint === 'config' ? this.config(ctx, device, payload) : this.attest(device, payload);
  }

  private sampled(): boolean {
    if (this.samplePpm <= 0) return false;
    this.sampleCredit += this.samplePpm;
    if (this.sampleCredit < PPM) return false;
    this.sampleCredit -= PPM;
    return true;
  }

  private config(ctx: ControllerContext, device: DeviceRecord, payload: Uint8Array): Reply {
    let requested: string;
    try {
      requested = Msg.ConfigRequest.decode(payload).configHash ?? '';
    } catch (e) {
      throw unprocessable(`payload is not a ConfigRequest: ${(e as Error).message}`);
    }
    device.lastRequestedConfigHash = requested || undefined;
    if (requested !== '' && requested === ctx.configs.currentHash(device)) {
      if (ctx.options.unchangedConfigReply === '304') return { status: 304 };
      return { status: 200, body: ctx.sealer.seal(Msg.ConfigResponse.encode({ configHash: requested })), contentType: PROTO_MIME };
    }
    let kept = ctx.configReplies.get(device);
    if (!kept) {
      const built = ctx.configs.build(device);
      kept = { hash: built.hash, body: ctx.sealer.seal(configResponseAround(built.encoded, built.hash)) };
      ctx.configReplies.put(device, kept.hash, kept.body);
    }
    device.lastServedConfigHash = kept.hash;
    return { status: 200, body: kept.body, contentType: PROTO_MIME };
  }

  private attest(device: DeviceRecord, payload: Uint8Array): Reply {
    let reqType: number;
    try {
      reqType = Msg.ZAttestReq.decode(payload).reqType ?? 0;
    } catch (e) {
      throw unprocessable(`payload is not a ZAttestReq: ${(e as Error).message}`);
    }
    const body = this.attestReplies.get(reqType);
    if (!body) throw unprocessable(`reqType ${reqType} is not an attestation request type`);
    if (reqType === Req.ATTEST_REQ_QUOTE) {
      const st = device.attestState();
      st.attested = true;
      st.integrityToken = SINK_INTEGRITY_TOKEN;
    }
    return { status: 201, body, contentType: PROTO_MIME };
  }
}

/** AuthBody.payload of an envelope whose signature is not checked (an undecodable body → 422). */
function unverifiedPayload(body: Uint8Array): Uint8Array {
  if (body.length === 0) throw unprocessable('empty body, expected an AuthContainer');
  try {
    const c = Msg.AuthContainer.decode(body);
    return c.protectedPayload?.payload ?? new Uint8Array(0);
  } catch (e) {
    throw unprocessable(`body is not an AuthContainer: ${(e as Error).message}`);
  }
}
