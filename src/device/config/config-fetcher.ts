// The configuration poll (§3.1, §3.2, §13.2): POST /config right after onboarding and then every
// uniform [0.3×, 1.0×] timer.config.interval, carrying the last accepted configHash and the
// integrity token. 304 → unchanged; 200 → verify the envelope, a known hash is "unchanged", a new
// one is applied; 403 → attestation restart if a quote was already sent; 400/404 → the UUID may be
// looked up again, at most every 10 minutes.

import { v2Path, type EndpointKey } from '../../protocol/endpoints.js';
import { Msg } from '../../protocol/messages.js';
import type { config } from '../../gen/eve-types.js';
import type { DeviceFinding, DeviceOptions } from '../device-options.js';
import type { Answer, DeviceSender } from '../sender/device-sender.js';
import { DeviceTimer } from '../core/device-timer.js';
import { configPollDelayMs } from '../core/eve-timers.js';
import type { ExpectedAnswer, Millis, TransportResponse } from '../ports.js';

/**
 * EVE polls config at once after onboarding, in parallel with attestation (§5.4, §14): until a
 * quote is accepted the request carries no integrity token and a controller that requires one
 * answers 403 ("attest first"). Before the first quote EVE just counts it as a failed fetch.
 */
export const CONFIG_BEFORE_ATTESTATION: ExpectedAnswer = { statuses: [403], reason: 'before-attestation' };

/**
 * EVE re-runs the UUID lookup after config 400/404 at most this often, counted from the start of
 * zedagent (its lastDevUUIDChange starts at time.Now()), so never in the first 10 minutes after a
 * boot (§13.2, §13.5).
 */
export const UUID_RELOOKUP_MIN_MS = 10 * 60_000;

export interface ConfigFetchHost {
  readonly opts: DeviceOptions;
  readonly sender: DeviceSender;
  readonly uuid: string;
  readonly generation: number;
  /** Current timer.config.interval, seconds. */
  readonly configIntervalS: number;
  /** Integrity token from the last successful attestation (tmpfs: lost at reboot). */
  readonly integrityToken: Uint8Array | undefined;
  finding(endpoint: EndpointKey, kind: DeviceFinding['kind'], detail: string): void;
  /** A config answer came (200 or 304): the device is connected. */
  onConfigReceived(now: Millis): void;
  /** A configuration with a new hash arrived (already verified and decoded). */
  applyConfig(cfg: config.EdgeDevConfig, now: Millis): void;
  /** Config answered 403. */
  onForbidden(now: Millis): void;
  /** Config answered 400/404 and the UUID may be looked up again. */
  relookupUuid(now: Millis): Promise<void>;
  guard(fn: () => Promise<void> | void): void;
}

export class ConfigFetcher {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onTimer = (f: ConfigFetcher, dueAt: Millis): void => f.host.guard(() => f.tick(dueAt));

  /** Hash of the last accepted configuration; in memory only, empty after a reboot (§3.1). */
  configHash = '';
  /** Polls answered 200 with a new hash, 200 with the known hash, and 304. */
  applied = 0;
  unchanged = 0;
  private lastUuidLookup = -Infinity;
  private inFlight = false;
  private started = false;
  /** API v1: a configuration the UUID lookup fetched before the poll started, taken at start(). */
  private fromUuidLookup: config.ConfigResponse | undefined;
  private readonly timer: DeviceTimer;

  constructor(private readonly host: ConfigFetchHost) {
    this.timer = new DeviceTimer(host.opts.scheduler, this, ConfigFetcher.onTimer);
  }

  /** First poll right away (§3.6). */
  start(now: Millis): void {
    this.inFlight = false;
    this.started = true;
    this.lastUuidLookup = now;
    const first = this.fromUuidLookup;
    this.fromUuidLookup = undefined;
    if (first) this.accept(first, now);
    this.timer.at(now);
  }

  /** New boot: the remembered hash is gone. */
  reset(): void {
    this.timer.cancel();
    this.configHash = '';
    this.inFlight = false;
    this.started = false;
    this.fromUuidLookup = undefined;
  }

  stop(): void {
    this.timer.cancel();
    this.started = false;
  }

  /**
   * API v1 learns its UUID from a first configuration (v1-uuid-lookup.ts). That answer is a
   * configuration like any other: it is applied and its hash kept, so the next poll carries the
   * hash and an unchanged configuration comes back 304 instead of in full.
   */
  takeFromUuidLookup(resp: config.ConfigResponse, now: Millis): void {
    if (this.started) this.accept(resp, now);
    else this.fromUuidLookup = resp;
  }

  /** timer.config.interval changed: the next poll follows the new range from now. */
  reschedule(now: Millis): void {
    if (this.timer.armed) this.rearm(now);
  }

  private rearm(now: Millis): void {
    this.timer.at(now + configPollDelayMs(this.host.opts.rng, this.host.configIntervalS));
  }

  // A chain of then() rather than an async function: a poll whose request waits seconds for an
  // in-flight slot holds only what its handlers need, where a suspended async frame held every local
  // (bench/waiting-request-memory.ts, "a device's config poll").
  private tick(dueAt: Millis): Promise<void> | undefined {
    const host = this.host;
    this.rearm(host.opts.clock.now());
    if (this.inFlight) return undefined; // EVE's ticker drops ticks while a fetch runs
    this.inFlight = true;
    const gen = host.generation;
    let sent: Promise<Answer>;
    try {
      const req: config.ConfigRequest = { configHash: this.configHash };
      if (host.integrityToken) req.integrity_token = host.integrityToken;
      // No quote accepted since boot: a 403 is the controller asking for attestation, not an error.
      const expect = host.integrityToken ? undefined : CONFIG_BEFORE_ATTESTATION;
      sent = host.sender.post('config', v2Path('config', host.uuid), Msg.ConfigRequest.encode(req), dueAt, expect);
    } catch (err) {
      this.fetchEnded(gen);
      throw err;
    }
    return sent.then(
      (answer) => {
        this.fetchEnded(gen);
        if (gen === host.generation && answer !== undefined) return this.onAnswer(answer);
        return undefined;
      },
      (err: unknown) => {
        this.fetchEnded(gen);
        throw err;
      },
    );
  }

  /** The poll's request has ended: the next tick may fetch again (unless the device rebooted meanwhile). */
  private fetchEnded(gen: number): void {
    if (gen === this.host.generation) this.inFlight = false;
  }

  /** What the poll's answer makes the device do; a UUID lookup is the one thing it may wait for. */
  private onAnswer(answer: TransportResponse): Promise<void> | undefined {
    const host = this.host;
    const now = host.opts.clock.now();
    const status = answer.status;
    if (status === 304) {
      this.unchanged++;
      host.onConfigReceived(now);
    } else if (status === 200 || status === 201) {
      this.onConfigAnswer(answer, now);
    } else if (status === 403) {
      host.onForbidden(now);
    } else if ((status === 400 || status === 404) && now - this.lastUuidLookup >= UUID_RELOOKUP_MIN_MS) {
      this.lastUuidLookup = now;
      return host.relookupUuid(now);
    }
    return undefined;
  }

  private onConfigAnswer(answer: TransportResponse, now: Millis): void {
    const host = this.host;
    const payload = host.sender.open('config', answer, now);
    if (payload === undefined) return;
    let resp: config.ConfigResponse;
    try {
      resp = Msg.ConfigResponse.decode(payload);
    } catch (e) {
      host.sender.reject('config', 'undecodable-body', `ConfigResponse (${payload.length} bytes) does not decode: ${(e as Error).message}`);
      return;
    }
    this.accept(resp, now);
  }

  /** A verified, decoded configuration answer: unchanged if its hash is known, applied otherwise. */
  private accept(resp: config.ConfigResponse, now: Millis): void {
    const host = this.host;
    host.onConfigReceived(now);
    const hash = resp.configHash ?? '';
    if (hash !== '' && hash === this.configHash) {
      this.unchanged++;
      return;
    }
    const cfg = resp.config ?? {};
    const cfgUuid = cfg.id?.uuid ?? '';
    if (cfgUuid !== '' && cfgUuid.toLowerCase() !== host.uuid) {
      host.finding('config', 'conformance', `configuration is for device ${cfgUuid}, not ${host.uuid}`);
    }
    this.configHash = hash;
    this.applied++;
    host.applyConfig(cfg, now);
  }
}
