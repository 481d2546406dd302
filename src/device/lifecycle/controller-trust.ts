// The controller signing certificate a device trusts, learnt from GET /certs (§4.3): fetched at
// onboarding and boot, every timer.cert.interval (120 s while the last fetch failed), one second
// after a "cert miss" and whenever controllercert_confighash changes (§1.3, §3.3).
//
// Chain verification costs milliseconds; every device of a worker usually receives the same bytes,
// so verified results are shared per worker, keyed by the exact response bytes and root.

import { createHash, type X509Certificate } from 'node:crypto';
import {
  ControllerCertsError,
  parseTrustedRoots,
  UNCHECKED_CHAIN,
  verifyControllerCerts,
  type TrustedControllerCerts,
} from '../../protocol/controller-certs.js';
import { openUnverified } from '../../protocol/envelope.js';
import { v2Path, type EndpointKey } from '../../protocol/endpoints.js';
import { Msg } from '../../protocol/messages.js';
import type { DeviceFinding, DeviceOptions } from '../device-options.js';
import type { DeviceSender } from '../sender/device-sender.js';
import { DeviceTimer } from '../core/device-timer.js';
import { certRefreshDelayMs } from '../core/eve-timers.js';
import type { Millis } from '../ports.js';

/** EVE re-fetches /certs one second after a cert miss (§10). */
const CERT_MISS_REFETCH_MS = 1000;

export interface TrustHost {
  readonly opts: DeviceOptions;
  readonly sender: DeviceSender;
  /** Bumped on reboot and stop: a fetch of an older generation does not re-arm the refresh. */
  readonly generation: number;
  /** Current timer.cert.interval, seconds. */
  readonly certIntervalS: number;
  finding(endpoint: EndpointKey, kind: DeviceFinding['kind'], detail: string): void;
  /** The trusted signing certificate changed (not on the first fetch). */
  onTrustChanged(now: Millis): void;
  guard(fn: () => Promise<void> | void): void;
}

interface VerifiedCerts {
  trusted: TrustedControllerCerts;
  /** Served as a bare ZControllerCert instead of inside an AuthContainer. */
  bare: boolean;
}

// Worker-wide caches (bounded): roots by PEM text, verified answers by root + body digest.
const rootsCache = new Map<string, X509Certificate[]>();
const verifiedCache = new Map<string, VerifiedCerts>();
const CACHE_LIMIT = 32;

function remember<K, V>(map: Map<K, V>, key: K, value: V): V {
  if (map.size >= CACHE_LIMIT) map.delete(map.keys().next().value as K);
  map.set(key, value);
  return value;
}

function trustedRoots(rootPem: string): X509Certificate[] {
  return rootsCache.get(rootPem) ?? remember(rootsCache, rootPem, parseTrustedRoots(rootPem));
}

/** Verifies a /certs body: an AuthContainer (as EVE requires) or, failing that, a bare ZControllerCert. */
function verifyCertsBody(body: Uint8Array, rootPem: string, now: Millis): VerifiedCerts {
  const key = `${rootPem.length}:${createHash('sha256').update(rootPem).update(body).digest('base64')}`;
  const cached = verifiedCache.get(key);
  if (cached) return cached;
  // No root CA given (--insecure-skip-verify without --root-ca): the chain cannot be checked.
  const roots = rootPem === '' ? UNCHECKED_CHAIN : trustedRoots(rootPem);
  let enveloped: unknown;
  try {
    const payload = openUnverified(body).payload;
    return remember(verifiedCache, key, { trusted: verifyControllerCerts(Msg.ZControllerCert.decode(payload), roots, now), bare: false });
  } catch (e) {
    enveloped = e;
  }
  try {
    return remember(verifiedCache, key, { trusted: verifyControllerCerts(Msg.ZControllerCert.decode(body), roots, now), bare: true });
  } catch {
    throw enveloped;
  }
}

export class ControllerTrust {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onTimer = (t: ControllerTrust, dueAt: Millis): void => t.host.guard(() => t.fetchAndReschedule(dueAt));

  current: TrustedControllerCerts | undefined;
  private lastFailed = false;
  private inFlight: Promise<boolean> | undefined;
  private readonly timer: DeviceTimer;

  constructor(private readonly host: TrustHost) {
    this.timer = new DeviceTimer(host.opts.scheduler, this, ControllerTrust.onTimer);
  }

  /** Whether the last GET /certs failed (EVE then retries after 120 s). */
  get lastFetchFailed(): boolean {
    return this.lastFailed;
  }

  /**
   * One GET /certs; resolves true when a valid certificate set is now trusted. Concurrent callers
   * share the fetch in flight.
   */
  fetch(dueAt: Millis): Promise<boolean> {
    this.inFlight ??= this.doFetch(dueAt).finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** GET /certs, then the next periodic refresh (unless the device rebooted or stopped meanwhile). */
  async fetchAndReschedule(dueAt: Millis): Promise<void> {
    const gen = this.host.generation;
    await this.fetch(dueAt);
    if (gen === this.host.generation) this.scheduleRefresh(this.host.opts.clock.now());
  }

  /** Arms the periodic refresh (timer.cert.interval, or 120 s after a failure). */
  scheduleRefresh(now: Millis): void {
    this.timer.at(now + certRefreshDelayMs(this.host.opts.rng, this.host.certIntervalS, this.lastFailed));
  }

  /** A response named a signing certificate the device does not know: fetch /certs again soon. */
  onCertMiss(now: Millis): void {
    this.timer.atOrSooner(now + CERT_MISS_REFETCH_MS);
  }

  /** controllercert_confighash changed: fetch /certs now. */
  refetchNow(now: Millis): void {
    this.timer.atOrSooner(now);
  }

  stop(): void {
    this.timer.cancel();
  }

  private async doFetch(dueAt: Millis): Promise<boolean> {
    const { opts } = this.host;
    const answer = await this.host.sender.get('certs', v2Path('certs'), dueAt);
    const now = opts.clock.now();
    if (answer === undefined) return this.fail();
    if (answer.status !== 200 && answer.status !== 201) {
      return this.fail();
    }
    if (!this.host.sender.contentTypeOk('certs', answer)) return this.fail();
    let verified: VerifiedCerts;
    try {
      verified = verifyCertsBody(answer.body, opts.rootCertPem, now);
    } catch (e) {
      const detail = e instanceof ControllerCertsError ? `${e.problem}: ${e.message}` : (e as Error).message;
      this.host.sender.reject('certs', 'bad-certs', detail);
      return this.fail();
    }
    // API v1 serves the bare message by design (no envelopes at all).
    if (verified.bare && !this.host.sender.v1) {
      this.host.finding('certs', 'conformance', 'GET /certs served a bare ZControllerCert; EVE only accepts it inside an AuthContainer');
    }
    const previous = this.current;
    this.current = verified.trusted;
    this.lastFailed = false;
    if (previous && previous.certHashesHex.join() !== verified.trusted.certHashesHex.join()) this.host.onTrustChanged(now);
    return true;
  }

  private fail(): boolean {
    this.lastFailed = true;
    return false;
  }
}
