// Onboarding as EVE's client does it (§2.2, §14): GET /certs (verify the chain), GET /ping, POST
// /register signed with the onboarding key (unless pre-registered), POST /uuid with the device key.
// Any HTTP answer to /register moves on to /uuid; onboarding is done when /uuid answers with a
// verified UUID. A failed round is retried on EVE's exponential ticker 1 s, 2 s, 4 s … 600 s.

import { v2Path, type EndpointKey } from '../../protocol/endpoints.js';
import type { config } from '../../gen/eve-types.js';
import { Msg } from '../../protocol/messages.js';
import type { DeviceFinding, DeviceLifecycle, DeviceOptions } from '../device-options.js';
import type { DeviceSender } from '../sender/device-sender.js';
import { armed, disarmed, type DeviceTimer } from '../core/device-timer.js';
import type { ControllerTrust } from './controller-trust.js';
import { onboardingRetryDelayMs } from '../core/eve-timers.js';
import type { Millis } from '../ports.js';
import { v1UuidFromConfig } from './v1-uuid-lookup.js';
import { pemBase64Bytes } from '../../protocol/pem.js';

/** RFC 4122 textual form, any version (EVE parses with uuid.FromString after trimming). */
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface OnboardingHost {
  readonly opts: DeviceOptions;
  readonly sender: DeviceSender;
  readonly trust: ControllerTrust;
  /** Bumped on reboot and stop: answers to requests of an older generation are ignored. */
  readonly generation: number;
  setLifecycle(to: DeviceLifecycle): void;
  finding(endpoint: EndpointKey, kind: DeviceFinding['kind'], detail: string): void;
  onOnboarded(uuid: string, now: Millis): void;
  /** API v1: the configuration that named the device (v1-uuid-lookup.ts). */
  onConfigFromUuidLookup(resp: config.ConfigResponse, now: Millis): void;
  /** Callbacks must never throw out of the scheduler: the host counts and survives. */
  guard(fn: () => Promise<void> | void): void;
}

export class Onboarding {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onTimer = (o: Onboarding, dueAt: Millis): void => {
    o.timer = undefined;
    o.host.guard(() => o.round(dueAt));
  };

  /** Failed rounds so far (drives the 1, 2, 4 … 600 s ticker). */
  failures = 0;
  /** Only while a round is due (core/device-timer.ts, armed). */
  private timer: DeviceTimer | undefined;

  constructor(private readonly host: OnboardingHost) {}

  start(at: Millis): void {
    this.failures = 0;
    this.arm(at);
  }

  stop(): void {
    this.timer = disarmed(this.timer);
  }

  private arm(at: Millis): void {
    this.timer = armed(this.timer, at, this.host.opts.scheduler, this, Onboarding.onTimer);
  }

  /**
   * POST /uuid with the device key and an empty UuidRequest; the verified, trimmed UUID, or
   * undefined (already counted and reported). Also used to re-check the UUID after config 400/404.
   */
  async fetchUuid(dueAt: Millis): Promise<string | undefined> {
    const { sender, opts } = this.host;
    // API v1 has no /uuid: the first configuration names the device.
    if (sender.v1) return v1UuidFromConfig(this.host, dueAt);
    const answer = await sender.post('uuid', v2Path('uuid'), Msg.UuidRequest.encode({}), dueAt);
    if (answer === undefined) return undefined;
    if (answer.status !== 200 && answer.status !== 201) {
      return undefined;
    }
    const payload = sender.open('uuid', answer, opts.clock.now());
    if (payload === undefined) return undefined;
    let uuid: string;
    try {
      uuid = (Msg.UuidResponse.decode(payload).uuid ?? '').trim();
    } catch (e) {
      sender.reject('uuid', 'undecodable-body', `UuidResponse (${payload.length} bytes) does not decode: ${(e as Error).message}`);
      return undefined;
    }
    if (!UUID_RE.test(uuid)) {
      sender.reject('uuid', 'conformance', `UuidResponse.uuid ${JSON.stringify(uuid)} is not a UUID`);
      return undefined;
    }
    return uuid.toLowerCase();
  }

  /** One onboarding round; each step starts as soon as the previous one answered. */
  private async round(dueAt: Millis): Promise<void> {
    const host = this.host;
    const gen = host.generation;
    const { opts, sender, trust } = host;
    const stale = (): boolean => gen !== host.generation;

    // v1: /certs needs the device certificate, known to the controller only after registration.
    if (!trust.current && !sender.v1) {
      host.setLifecycle('fetching-certs');
      const ok = await trust.fetch(dueAt);
      if (stale()) return;
      if (!ok) return this.retry();
      dueAt = opts.clock.now();
    }

    // Connectivity check before registration; a rate-limited or unavailable controller means back off.
    host.setLifecycle('registering');
    const ping = await sender.get('ping', v2Path('ping'), dueAt);
    if (stale()) return;
    if (ping === undefined || ping.status === 429 || ping.status === 503) return this.retry();

    if (!opts.behaviour.preRegistered) {
      const id = opts.identity;
      const msg = Msg.ZRegisterMsg.encode({
        pemCert: pemBase64Bytes(id.deviceCertPem),
        serial: id.serial.trim(),
        softSerial: id.softSerial.trim(),
      });
      const reg = await sender.postWithOnboardingKey('register', v2Path('register'), msg, opts.clock.now());
      if (stale()) return;
      if (reg === undefined) return this.retry();
      // EVE ignores the status (LEDs only) and goes on to /uuid on any HTTP answer (§2.2).
    }

    if (sender.v1 && !trust.current) {
      // v1 answers are not signed, so a failed /certs does not hold onboarding up; the periodic
      // refresh tries again.
      host.setLifecycle('fetching-certs');
      await trust.fetch(opts.clock.now());
      if (stale()) return;
    }

    host.setLifecycle('uuid');
    const uuid = await this.fetchUuid(opts.clock.now());
    if (stale()) return;
    if (uuid === undefined) return this.retry();
    this.failures = 0;
    host.onOnboarded(uuid, opts.clock.now());
  }

  private retry(): void {
    this.failures++;
    this.arm(this.host.opts.clock.now() + onboardingRetryDelayMs(this.failures));
  }
}
