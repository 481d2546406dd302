// Controller API v1 without its sockets (docs/interfaces.md): the client certificate of
// the connection says who is asking, bodies and answers are bare protobuf messages. It shares
// everything else with v2 (ControllerCore): the device registry (a device registers through either
// API), the config builder, the attestation state and the counters, which it also counts per API.
//
// The v2 handlers for attest, info, metrics, logs, app logs, newlogs, flowlog and uuid serve v1 as
// they are: the request arrives already authenticated (RequestState.authenticated) and the context
// they see answers without envelopes. Register, ping, certs and config have v1 rules of their own.
//
// Status codes (the document's Errors table and Authentication rules):
//   401  no client certificate, or one that is neither a registered device certificate nor an
//        onboarding certificate of a trusted CA (Adam: 401 for an unknown certificate too)
//   403  a valid certificate without access: an onboarding certificate anywhere but register and
//        ping, a device certificate on register; register when pre-registration is required
//   422  missing (empty) or undecodable body on register, attest, info, metrics, logs, app logs,
//        newlogs and flowlog (an empty ConfigRequest or UuidRequest is a valid message)
//   400  a path naming an unknown device UUID or an unknown app instance
//   404  certs with no certificates to send; unknown paths
//   429  ping with an onboarding certificate more than once a second on one connection (the document:
//        SHOULD rate limit). Per connection, not per certificate: a fleet shares its onboarding
//        certificate, and one limit for all of it would let a fleet onboard one device a second.

import type { ControllerPki } from '../../identity/controller-pki.js';
import { buildControllerCerts } from '../../protocol/controller-certs.js';
import { Msg } from '../../protocol/messages.js';
import { configResponseAround } from '../../protocol/config-response-bytes.js';
import type { config } from '../../gen/eve-types.js';
import type { ControllerContext, Reply, RequestState } from './controller-context.js';
import { PROTO_MIME } from './controller-context.js';
import type { ControllerCore } from './controller-core.js';
import type { ControllerStats } from './controller-stats.js';
import { ResponseSealer } from './envelope-adapter.js';
import { completeRegistration } from './handle-register.js';
import { ControllerHttpError, forbidden, unauthorized, unprocessable } from './http-error.js';
import { identify, type V1Peer } from './v1-client-cert.js';
import { matchV1Route, type V1Route } from './v1-route.js';
import { sharedHandler } from './shared-handlers.js';

/** Endpoints whose request body must not be empty (the document's 422 "missing body"). */
const BODY_REQUIRED = new Set<V1Route['endpoint']>(['register', 'attest', 'info', 'metrics', 'logs', 'applogs', 'newlogs', 'appnewlogs', 'flowlog']);

/** Ping with an onboarding certificate: at most one per this many ms per connection. */
export const ONBOARDING_PING_INTERVAL_MS = 1000;

const TEXT = 'text/plain; charset=utf-8';

/** Seals nothing: v1 answers are the bare messages. */
class BareResponses extends ResponseSealer {
  override seal(payload: Uint8Array): Uint8Array {
    return payload;
  }
}

export class V1Core {
  /** The context the shared handlers see: the core's own state, answering without envelopes. */
  readonly ctx: ControllerContext;
  /** v1 requests only (the core's `stats` counts every API). */
  readonly stats: ControllerStats;
  /** Last onboarding-certificate ping per connection (its peer, made once per TLS socket). */
  private readonly lastOnboardingPing = new WeakMap<V1Peer, number>();

  constructor(private readonly core: ControllerCore) {
    this.stats = core.apiStats.v1;
    // Everything is looked up on the core (also state added to it later); only the answer form differs.
    this.ctx = Object.create(core, {
      sealer: { value: new BareResponses(core.pki.signing.key, new Uint8Array(0)) },
      certsResponse: { value: bareControllerCerts(core.pki) },
    }) as ControllerContext;
  }

  /** Handles one v1 request from the client `peer` and counts it. Never throws for bad input. */
  handle(method: string, path: string, body: Uint8Array, peer: V1Peer, now = Date.now()): Reply {
    const route = matchV1Route(method, path);
    if (!route) {
      const reply = text(404, `no endpoint ${method} ${path.split('?')[0]}`);
      this.count('unknown', 404, body.length, reply);
      return reply;
    }
    const req: RequestState = { route, body, now, logLines: 0 };
    let reply: Reply;
    if (this.core.switches.maintenance) {
      reply = text(503, 'controller in maintenance, retry later');
    } else {
      try {
        reply = this.dispatch(route, req, peer);
      } catch (e) {
        if (e instanceof ControllerHttpError) {
          reply = text(e.status, e.message);
          if (e.undecodable) {
            this.core.stats.of(route.endpoint).undecodable++;
            this.stats.of(route.endpoint).undecodable++;
            if (req.device) req.device.counters.undecodable++;
          }
        } else {
          console.error(`evesim controller (v1): ${route.endpoint} ${path.split('?')[0]}: ${(e as Error).stack ?? String(e)}`);
          reply = text(500, `internal error: ${(e as Error).message}`);
        }
      }
    }
    this.count(route.endpoint, reply.status, body.length, reply);
    const dev = req.device;
    if (dev) {
      dev.counters.record(route.endpoint, reply.status, body.length, now);
      dev.counters.logLines += req.logLines;
      dev.apiMask |= 1;
      const store = this.core.store;
      if (store) {
        store.touched(dev);
        if (req.attestChanged) store.attestChanged(dev);
      }
    }
    if (req.logLines > 0) {
      this.core.stats.of(route.endpoint).logLines += req.logLines;
      this.stats.of(route.endpoint).logLines += req.logLines;
    }
    return reply;
  }

  private dispatch(route: V1Route, req: RequestState, peer: V1Peer): Reply {
    const who = identify(this.ctx, peer, req.now);
    if (who.kind === 'none') throw unauthorized(`no client certificate: ${route.endpoint} needs mutual TLS with ${route.endpoint === 'register' ? 'the onboarding' : 'the device'} certificate`);
    if (who.kind === 'invalid') throw unauthorized(`client certificate refused: ${who.reason}`);
    if (BODY_REQUIRED.has(route.endpoint) && req.body.length === 0) throw unprocessable(`${route.endpoint}: the request has no body`);

    if (route.endpoint === 'register') {
      if (who.kind === 'device') {
        req.device = who.device;
        throw forbidden('register takes the onboarding certificate; this is the certificate of a registered device');
      }
      return completeRegistration(this.ctx, req, who.fingerprint, req.body);
    }
    if (route.endpoint === 'ping') {
      if (who.kind === 'onboarding') return this.onboardingPing(peer, req.now);
      req.device = who.device;
      return { status: 200 };
    }
    if (who.kind === 'onboarding') {
      throw forbidden(`${route.endpoint}: an onboarding certificate may only register (and ping before registration); use the device certificate`);
    }
    req.device = who.device;
    req.authenticated = who.device;
    if (route.endpoint === 'certs') {
      return this.core.switches.serveCerts
        ? { status: 200, body: this.ctx.certsResponse, contentType: PROTO_MIME }
        : text(404, 'no controller certificates to send');
    }
    if (route.endpoint === 'config') return route.getConfig ? this.getConfig(req) : this.postConfig(req);
    const handler = sharedHandler(route.endpoint);
    if (!handler) throw new Error(`no v1 handler for ${route.endpoint}`);
    return handler(this.ctx, req);
  }

  /**
   * POST /config: as v2 without the integrity token (v1 has none). The unchanged answer follows
   * unchangedConfigReply: 304 (Adam) or the document's 200 with only configHash.
   */
  private postConfig(req: RequestState): Reply {
    const device = req.authenticated!;
    let creq: config.ConfigRequest;
    try {
      creq = Msg.ConfigRequest.decode(req.body);
    } catch (e) {
      throw unprocessable(`body is not a ConfigRequest: ${(e as Error).message}`);
    }
    const requested = creq.configHash ?? '';
    device.lastRequestedConfigHash = requested || undefined;
    const configs = this.ctx.configs;
    if (requested !== '' && requested === configs.currentHash(device)) {
      if (this.ctx.options.unchangedConfigReply === '304') return { status: 304 };
      return { status: 200, body: Msg.ConfigResponse.encode({ configHash: requested }), contentType: PROTO_MIME };
    }
    const built = configs.build(device);
    device.lastServedConfigHash = built.hash;
    return { status: 200, body: configResponseAround(built.encoded, built.hash), contentType: PROTO_MIME };
  }

  /** GET /config (deprecated): the whole EdgeDevConfig, UUID included, on every request. */
  private getConfig(req: RequestState): Reply {
    const device = req.authenticated!;
    const built = this.ctx.configs.build(device);
    device.lastServedConfigHash = built.hash;
    return { status: 200, body: built.encoded, contentType: PROTO_MIME };
  }

  private onboardingPing(peer: V1Peer, now: number): Reply {
    const last = this.lastOnboardingPing.get(peer);
    if (last !== undefined && now - last < ONBOARDING_PING_INTERVAL_MS) {
      return text(429, `ping with the onboarding certificate is limited to one per ${ONBOARDING_PING_INTERVAL_MS} ms on a connection; back off`);
    }
    this.lastOnboardingPing.set(peer, now);
    return { status: 200 };
  }

  private count(key: V1Route['endpoint'] | 'unknown', status: number, bytesIn: number, reply: Reply): void {
    const out = reply.body?.length ?? 0;
    this.core.stats.record(key, status, bytesIn, out);
    this.stats.record(key, status, bytesIn, out);
  }
}

/** The ZControllerCert v1 serves on GET /certs: the same certificates as v2, without the envelope. */
function bareControllerCerts(pki: ControllerPki): Uint8Array {
  const built = buildControllerCerts({ signingPem: pki.signing.certPem + pki.intermediate.certPem, ecdhPem: pki.ecdh.certPem });
  return Msg.ZControllerCert.encode(built.msg);
}

function text(status: number, message: string): Reply {
  return { status, body: Buffer.from(message + '\n', 'utf8'), contentType: TEXT };
}
