// The controller without its sockets: state, handlers and the dispatch that maps a request
// (method, path, body) to a reply, counting every request per endpoint, status and device.
// The HTTPS and admin servers are thin layers over this.

import type { ControllerPki } from '../../identity/controller-pki.js';
import { Msg } from '../../protocol/messages.js';
import { buildControllerCerts, controllerCertConfigHash } from '../../protocol/controller-certs.js';
import { ConfigService } from './config-service.js';
import type { ControllerContext, ControllerSwitches, Reply, RequestState } from './controller-context.js';
import { PROTO_MIME } from './controller-context.js';
import type { ResolvedControllerOptions } from './controller-options.js';
import { ControllerStats } from './controller-stats.js';
import { ConnectionGauge } from './connection-gauge.js';
import { DeviceRegistry } from './device-registry.js';
import { ResponseSealer } from './envelope-adapter.js';
import { handleConfig } from './handle-config.js';
import { handleRegister } from './handle-register.js';
import { ControllerHttpError } from './http-error.js';
import { OnboardingTrust } from './onboarding-trust.js';
import { createQuoteVerifier, type QuoteVerifier } from './quote-verifier.js';
import type { RegistryStore } from './registry-store.js';
import { matchRoute, type Route } from './route.js';
import { SealedConfigReplies } from './sealed-config-replies.js';
import { SinkResponder } from './sink-responder.js';
import { SHARED_HANDLERS, type Handler } from './shared-handlers.js';

const HANDLERS: Record<Route['endpoint'], Handler> = {
  ping: () => ({ status: 200 }),
  certs: (ctx) =>
    ctx.switches.serveCerts
      ? { status: 200, body: ctx.certsResponse, contentType: PROTO_MIME }
      : { status: 404, body: Buffer.from('no controller certificates to send\n'), contentType: 'text/plain; charset=utf-8' },
  register: handleRegister,
  config: handleConfig,
  ...SHARED_HANDLERS,
};

const TEXT = 'text/plain; charset=utf-8';

export class ControllerCore implements ControllerContext {
  readonly registry: DeviceRegistry;
  readonly stats = new ControllerStats();
  /** The same counts per API; v1 requests are counted by v1-core.ts, v2 ones here. */
  readonly apiStats = { v1: new ControllerStats(), v2: new ControllerStats() };
  /** TCP connections of the v2 and v1 listeners (the servers register them). */
  readonly connections = { v1: new ConnectionGauge(), v2: new ConnectionGauge() };
  readonly sealer: ResponseSealer;
  readonly onboarding: OnboardingTrust;
  readonly configs: ConfigService;
  readonly configReplies = new SealedConfigReplies();
  /** Present in --sink mode (a load-test sink, not a conformance controller). */
  readonly sink: SinkResponder | undefined;
  readonly switches: ControllerSwitches = { maintenance: false, serveCerts: true };
  readonly certsResponse: Uint8Array;
  /** Signing certificate PEM as served in /certs. */
  readonly signingCertPem: string;

  constructor(
    readonly options: ResolvedControllerOptions,
    readonly pki: ControllerPki,
    readonly quoteVerifier: QuoteVerifier = createQuoteVerifier(options.quoteVerifier),
    /** Where the registry is kept across restarts (registry-store.ts); none: in memory only. */
    readonly store?: RegistryStore,
  ) {
    if (options.requestTally) this.stats.tally = new BigInt64Array(options.requestTally);
    this.registry = new DeviceRegistry(options.requirePreRegistration);
    if (store) {
      this.registry.restore(store.load());
      this.registry.listener = store;
    }
    // A fleet given at start replaces the saved one, as PUT /admin/fleet would (devices stay registered).
    if (options.fleet) this.registry.setFleet(options.fleet);
    this.onboarding = new OnboardingTrust(options.onboardingCaPems);
    // The signing "file" holds the signing leaf and its intermediate, as Adam's signing file may:
    // the CA among them is served as INTERMEDIATE.
    const signingFile = pki.signing.certPem + pki.intermediate.certPem;
    const built = buildControllerCerts({ signingPem: signingFile, ecdhPem: pki.ecdh.certPem });
    this.signingCertPem = built.signingCertPem;
    this.sealer = new ResponseSealer(pki.signing.key, built.signingCertPemHash);
    this.certsResponse = this.sealer.seal(Msg.ZControllerCert.encode(built.msg));
    this.sink = options.sink ? new SinkResponder(options.sink.verifySample, this.sealer) : undefined;
    this.configs = new ConfigService({ controllerCertConfigHash: controllerCertConfigHash(signingFile, pki.ecdh.certPem) });
  }

  /** Handles one device-API request and counts it. Never throws for bad input. */
  handle(method: string, path: string, body: Uint8Array, now = Date.now()): Reply {
    const route = matchRoute(method, path);
    if (!route) {
      const reply = text(404, `no endpoint ${method} ${path.split('?')[0]}`);
      this.stats.record('unknown', 404, body.length, reply.body!.length);
      this.apiStats.v2.record('unknown', 404, body.length, reply.body!.length);
      return reply;
    }
    const req: RequestState = { route, body, now, logLines: 0 };
    let reply: Reply;
    if (this.switches.maintenance) {
      reply = text(503, 'controller in maintenance, retry later');
    } else {
      try {
        reply = this.sink?.answer(this, req) ?? HANDLERS[route.endpoint](this, req);
      } catch (e) {
        if (e instanceof ControllerHttpError) {
          reply = text(e.status, e.message);
          if (e.undecodable) {
            this.stats.of(route.endpoint).undecodable++;
            this.apiStats.v2.of(route.endpoint).undecodable++;
            if (req.device) req.device.counters.undecodable++;
          }
        } else {
          // A bug in the controller, not the device's fault: say where, keep serving.
          console.error(`evesim controller: ${route.endpoint} ${path.split('?')[0]}: ${(e as Error).stack ?? String(e)}`);
          reply = text(500, `internal error: ${(e as Error).message}`);
        }
      }
    }
    this.account(req, reply);
    return reply;
  }

  private account(req: RequestState, reply: Reply): void {
    const key = req.route.endpoint;
    this.stats.record(key, reply.status, req.body.length, reply.body?.length ?? 0);
    this.apiStats.v2.record(key, reply.status, req.body.length, reply.body?.length ?? 0);
    if (req.logLines > 0) {
      this.stats.of(key).logLines += req.logLines;
      this.apiStats.v2.of(key).logLines += req.logLines;
    }
    const dev = req.device;
    if (dev) {
      dev.counters.record(key, reply.status, req.body.length, req.now);
      dev.counters.logLines += req.logLines;
      dev.apiMask |= 2;
      if (this.store) {
        this.store.touched(dev);
        if (req.attestChanged) this.store.attestChanged(dev);
      }
    }
  }
}

function text(status: number, message: string): Reply {
  return { status, body: Buffer.from(message + '\n', 'utf8'), contentType: TEXT };
}
