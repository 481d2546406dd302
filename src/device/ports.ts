// The only ways a virtual device touches the outside world. A device owns no timers and no
// sockets: the fleet (or a test) hands it these, so a fake clock and a fake transport can drive it
// and the same seed replays the same way.

import type { EndpointKey } from '../protocol/endpoints.js';
import type { LpsEndpointKey } from './lps/lps-endpoints.js';

/** Milliseconds on the simulation clock (epoch ms in real runs, any origin in tests). */
export type Millis = number;

export interface Clock {
  now(): Millis;
}

/**
 * What a wake-up calls: a function, or an object's wake() method. Device timers are objects, so a
 * device holds no closure per timer (they were about 1.3 KiB of every device's memory).
 */
export type WakeTarget = ((dueAt: Millis) => void) | { wake(dueAt: Millis): void };

/** Wake-ups a device asks for. The fleet's scheduler (heap or timing wheel) implements it. */
export interface Scheduler {
  /** Wakes `target` at (or as soon as possible after) `at`. Returns a handle for cancel. */
  at(at: Millis, target: WakeTarget): TimerHandle;
  cancel(handle: TimerHandle): void;
}
export type TimerHandle = number;

/** Calls a wake target (schedulers use this, so both kinds behave the same). */
export function wake(target: WakeTarget, dueAt: Millis): void {
  if (typeof target === 'function') target(dueAt);
  else target.wake(dueAt);
}

/** Deterministic random numbers, seeded per device from the scenario seed. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [min, max). */
  range(min: number, max: number): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** n random bytes. */
  bytes(n: number): Uint8Array;
  /** A random RFC 4122 version-4 UUID string. */
  uuid(): string;
}

/** Metric key of a request: a controller endpoint, or a local profile server's ('lps.radio', ...). */
export type RequestEndpointKey = EndpointKey | LpsEndpointKey;

export interface TransportRequest {
  /** Which logical endpoint this is, for metrics and records (never derived from the path). */
  endpoint: RequestEndpointKey;
  method: 'GET' | 'POST';
  /** Path and query, beginning with '/', e.g. '/api/v2/edgedevice/id/<uuid>/config'. */
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /**
   * Makes the body when the request is handed to the wire, for transports that say so
   * (`buildsBodiesLate`): a device's envelope is then sealed and signed as the request leaves, as
   * EVE does, not while it waits for an in-flight slot, so a waiting request holds its payload
   * alone and a request that times out waiting is never signed. `buildBody` runs it once.
   */
  build?: (() => Uint8Array) | undefined;
  /** When this request was due on the clock (open-model timing: latency counts from here). */
  dueAt: Millis;
  /** Which device sends it (index within the fleet), for records and per-device counts. */
  deviceIndex: number;
  /**
   * TLS client certificate the request must be sent with (API v1 mutual TLS): the device's
   * onboarding or device certificate. Absent: none (API v2). Transports without client
   * certificates ignore it.
   */
  clientCert?: ClientCertKind;
  /**
   * Non-success answers the device expects at this point and handles as EVE does (absent: every
   * non-success answer is an error). Such answers are counted as expected, not as errors.
   */
  expect?: ExpectedAnswer;
  /** The device's own whole-request deadline, ms (EVE's timer.send.timeout); the transport's applies when shorter or absent. */
  timeoutMs?: number;
}

/**
 * Why a non-success answer is normal. 'before-attestation': config polled before any quote was
 * accepted since boot — EVE polls config at once, in parallel with attesting (eve-wire-facts §5.4,
 * §14), and a controller that requires the integrity token answers 403, its signal to attest.
 */
export type ExpectReason = 'before-attestation';

export interface ExpectedAnswer {
  statuses: readonly number[];
  reason: ExpectReason;
}

/** Which of its certificates a device presents as TLS client certificate (API v1). */
export type ClientCertKind = 'onboarding' | 'device';

export interface TransportResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
}

/**
 * Sends one request and resolves with the response. Rejects only when no HTTP answer came
 * (connection refused, reset, timeout): that is a TransportError, which EVE treats differently
 * from any HTTP status.
 */
export interface Transport {
  request(req: TransportRequest): Promise<TransportResponse>;
  /** True when the transport calls a request's `build` as it hands the request to the wire
   *  (InFlightGate); a sender gives others their body made. */
  readonly buildsBodiesLate?: boolean;
}

/** Makes a request's body from its `build`, once (a transport that hands the request on calls it). */
export function buildBody(req: TransportRequest): void {
  const build = req.build;
  if (build === undefined) return;
  req.build = undefined;
  req.body = build();
}

export class TransportError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
    this.name = 'TransportError';
  }
}
