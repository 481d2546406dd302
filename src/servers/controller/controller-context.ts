// What request handlers share: the device registry, counters, crypto material and switches.

import type { ConfigService } from './config-service.js';
import type { ResolvedControllerOptions } from './controller-options.js';
import type { ControllerStats } from './controller-stats.js';
import type { DeviceRecord } from './device-record.js';
import type { DeviceRegistry } from './device-registry.js';
import type { ResponseSealer } from './envelope-adapter.js';
import type { OnboardingTrust } from './onboarding-trust.js';
import type { QuoteVerifier } from './quote-verifier.js';
import type { Route } from './route.js';
import type { SealedConfigReplies } from './sealed-config-replies.js';

export interface ControllerSwitches {
  /** Every endpoint answers 503 (controller being upgraded). */
  maintenance: boolean;
  /** /certs answers 404 ("no certificates to send") while false. */
  serveCerts: boolean;
}

export interface ControllerContext {
  readonly options: ResolvedControllerOptions;
  readonly registry: DeviceRegistry;
  readonly stats: ControllerStats;
  readonly sealer: ResponseSealer;
  readonly onboarding: OnboardingTrust;
  readonly configs: ConfigService;
  /** Signed full config answers per device and config version (handle-config.ts). */
  readonly configReplies: SealedConfigReplies;
  readonly quoteVerifier: QuoteVerifier;
  readonly switches: ControllerSwitches;
  /** The enveloped ZControllerCert, built once. */
  readonly certsResponse: Uint8Array;
}

/** One request on its way through a handler. Handlers set `device` as soon as they know it. */
export interface RequestState {
  readonly route: Route;
  readonly body: Uint8Array;
  readonly now: number;
  device?: DeviceRecord;
  /**
   * Set when the transport already authenticated the sender (API v1: its TLS client certificate
   * is this registered device): the body is the bare message, there is no envelope to open.
   */
  authenticated?: DeviceRecord;
  /** Log lines carried by an accepted request (newlogs lines, LogEntry items). */
  logLines: number;
  /**
   * Set by an attest request that changed what the registry saves of the device's attestation
   * (certificates, a quote's outcome and token, escrowed keys); not by NONCE, whose nonce is not saved.
   */
  attestChanged?: boolean;
}

export interface Reply {
  status: number;
  body?: Uint8Array;
  contentType?: string;
}

export const PROTO_MIME = 'application/x-proto-binary';
