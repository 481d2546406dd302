// Options of the embedded controller. Plain data, so they cross into the controller's thread.

import type { FleetSpec } from './fleet-spec.js';
import { QUOTE_VERIFIER_MODES, type QuoteVerifierMode } from './quote-verifier.js';

export interface ControllerOptions {
  /** Directory for the controller PKI (created on first start, keys 0600). */
  stateDir: string;
  /** Listen address of the device API and the admin API (default 127.0.0.1). */
  host?: string;
  /** Device API port; 0 (default) picks a free port. */
  port?: number;
  /** Admin API port (always loopback host); 0 (default) picks a free port. */
  adminPort?: number;
  /** Serve controller API v1 (mutual TLS) on a port of its own. Default true. */
  apiV1?: boolean;
  /** API v1 port; 0 (default) picks a free port. */
  v1Port?: number;
  /** Trusted onboarding CA certificates (PEM): a register request's onboarding certificate must chain to one. */
  onboardingCaPems?: string[];
  /** Register with a serial the fleet does not list → 403. */
  requirePreRegistration?: boolean;
  /** Initial fleet (the admin API can replace it later). */
  fleet?: FleetSpec;
  /**
   * Reply to a config request whose configHash equals the current one: '304' (what Adam does, and
   * what EVE expects from it: no body) or 'hash-only' (the document's form: 200 with a
   * ConfigResponse carrying only configHash). Default '304'.
   */
  unchangedConfigReply?: '304' | 'hash-only';
  /** Largest request body accepted on the device API (default 8 MiB); larger → 413. */
  maxBodyBytes?: number;
  /**
   * How TPM quotes are verified (quote-verifier.ts): 'strict' (default: certificate chain, event
   * log replay, documented codes) or 'adam' (Adam's checks and codes). The verifier is made in the
   * controller's own thread from this name.
   */
  quoteVerifier?: QuoteVerifierMode;
  /**
   * Keep the registry (devices, UUIDs, attestation state, fleet, config overlays, counters) in
   * <stateDir>/registry so a restart on the same state directory loses nothing (registry-store.ts).
   * Default true; false keeps it in memory only.
   */
  persistRegistry?: boolean;
  /** A counter (one BigInt64 slot) the controller adds every request it answers to, read by the
   *  thread that embeds it (the run's time series) without a round trip through the admin API. */
  requestTally?: SharedArrayBuffer;
  /**
   * Load-test sink (sink-responder.ts), not a conformance controller: answers the steady-state
   * endpoints from precomputed signed responses and verifies the signature of only a sample of
   * requests. Absent: every request is verified and answered in full.
   */
  sink?: SinkOptions;
}

export interface SinkOptions {
  /** Share of requests whose envelope signature is verified, 0..1 (1 = all, 0.01 = every 100th). */
  verifySample: number;
}

export interface ResolvedControllerOptions extends Required<Omit<ControllerOptions, 'fleet' | 'onboardingCaPems' | 'sink' | 'requestTally'>> {
  fleet?: FleetSpec;
  requestTally?: SharedArrayBuffer;
  sink?: SinkOptions;
  onboardingCaPems: string[];
}

export function resolveControllerOptions(o: ControllerOptions): ResolvedControllerOptions {
  if (!o.stateDir) throw new Error('controller: stateDir is required');
  const port = o.port ?? 0;
  const adminPort = o.adminPort ?? 0;
  const v1Port = o.v1Port ?? 0;
  for (const [name, p] of [['port', port], ['adminPort', adminPort], ['v1Port', v1Port]] as const) {
    if (!Number.isInteger(p) || p < 0 || p > 65535) throw new Error(`controller: ${name} must be an integer 0..65535, got ${p}`);
  }
  const reply = o.unchangedConfigReply ?? '304';
  if (reply !== '304' && reply !== 'hash-only') throw new Error(`controller: unchangedConfigReply must be '304' or 'hash-only', got ${String(reply)}`);
  return {
    stateDir: o.stateDir,
    host: o.host ?? '127.0.0.1',
    port,
    adminPort,
    apiV1: o.apiV1 ?? true,
    v1Port,
    onboardingCaPems: o.onboardingCaPems ?? [],
    requirePreRegistration: o.requirePreRegistration ?? false,
    ...(o.fleet ? { fleet: o.fleet } : {}),
    unchangedConfigReply: reply,
    maxBodyBytes: o.maxBodyBytes ?? 8 * 1024 * 1024,
    quoteVerifier: quoteVerifierMode(o.quoteVerifier),
    persistRegistry: o.persistRegistry ?? true,
    ...(o.sink ? { sink: { verifySample: verifySample(o.sink.verifySample) } } : {}),
    ...(o.requestTally ? { requestTally: o.requestTally } : {}),
  };
}

function quoteVerifierMode(m: QuoteVerifierMode | undefined): QuoteVerifierMode {
  if (m === undefined) return 'strict';
  if (!QUOTE_VERIFIER_MODES.includes(m)) throw new Error(`controller: quoteVerifier must be one of ${QUOTE_VERIFIER_MODES.join(', ')}, got ${String(m)}`);
  return m;
}

function verifySample(v: number): number {
  if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw new Error(`controller: sink.verifySample must be a share 0..1, got ${String(v)}`);
  return v;
}
