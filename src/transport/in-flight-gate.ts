// Bounds the requests a worker has in flight: at most `maxInFlight` handed to the transport at
// once across the worker's devices, and at most `maxPerDevice` for any one device. Requests
// beyond either cap wait here, so a slow controller makes requests wait instead of piling up
// sockets, parsers and timers without bound. The queue itself is bounded: every device awaits its
// own requests (one per endpoint loop, as EVE's goroutines do), so it never holds more than the
// devices' loops.
//
// The wait is generator-side queueing, not the controller's doing, but it stays in the figures:
// latency counts from the request's dueAt (timed-transport.ts wraps this gate), so a request that
// waited reports its wait as latency (no coordinated omission). The request's deadline (the
// device's timer.send.timeout, else the transport's) runs from when the device asked, as it would in
// the pool: a request that waits past it fails as 'timeout' without reaching the wire, and one
// handed on late gets only what is left of it.
//
// Order: first come first served while every request handed on still has at least half of its
// deadline left. Once the oldest waiting request has used NEWEST_FIRST_AT_DEADLINE_SHARE of its
// deadline the queue is overloaded, and it serves the newest requests first (adaptive LIFO) until
// its oldest is younger again. First come first served under sustained overload hands on only
// requests whose deadline is nearly spent: they time out on the wire, each takes its pooled
// connection down with it (HTTP/1.1 cannot cancel one request otherwise), and goodput falls to
// nothing (fleet-100k.yaml, bench/README.md "overload-queue"). Newest first sends requests with most
// of their deadline left; the old ones time out in the queue, unsent. It flips no earlier because a
// device's onboarding is a dozen requests in a row, and newest first buries some of each device's
// steps under newer requests until their deadline: flipped once the oldest had waited 1 s,
// fleet-100k onboarded about half as many devices in its first five minutes and answered no more
// requests over its ten than first come first served, where flipped at half the deadline it
// answered a fifth more.

import type { Clock, Millis, Transport, TransportRequest, TransportResponse } from '../device/ports.js';
import { TransportError, buildBody } from '../device/ports.js';
import { DEFAULT_POOL_CONNECTIONS, requestDeadlineMs } from './controller-transport.js';
/**
 * Default worker cap: four requests per pooled connection. With one request per connection on the
 * wire (no pipelining) the pool can run 64; the rest wait in its queue for a free socket, so
 * the cap does not slow a healthy run, and per-device connections (API v1) still get 256 at once.
 */
export const MAX_IN_FLIGHT_DEFAULT = 4 * DEFAULT_POOL_CONNECTIONS;
/**
 * Default per-device cap: one request per endpoint loop of an EVE device (config, info, metrics,
 * logs, app logs, flow logs, attestation, certificates), each of which awaits its own answer.
 */
export const MAX_IN_FLIGHT_PER_DEVICE_DEFAULT = 8;

export interface InFlightGateOptions {
  /** Most requests handed on at once by this worker. */
  maxInFlight: number;
  /** Most requests handed on at once for one device. */
  maxPerDevice: number;
  /** The transport's own whole-request deadline, ms (the device's own applies when shorter). */
  timeoutMs: number;
}

/** What the gate saw: measured peaks, not the caps. */
export interface InFlightStats {
  maxInFlight: number;
  maxPerDevice: number;
  /** Most requests handed on at once, worker-wide. */
  peak: number;
  /** Most requests one device had handed on at once. */
  peakPerDevice: number;
  /** Most requests waiting for a slot at once. */
  queuePeak: number;
  /** Requests that waited for a slot (not handed on at once). */
  waited: number;
  /** Longest wait for a slot, ms (requests still waiting at close() included). */
  worstWaitMs: number;
  /** Requests whose deadline passed while they waited (failed as 'timeout', never sent). */
  timedOutWaiting: number;
  /** Requests handed on newest first, while the oldest waiting one had used NEWEST_FIRST_AT_DEADLINE_SHARE of its deadline or more. */
  handedOnNewestFirst?: number;
  /** Requests the gate was asked for, at once or after a wait. */
  requests?: number;
  /** Sum of every wait for a slot, ms (waits cut short by a deadline or by close() included). */
  waitMsTotal?: number;
  /** Requests handed on, ended or still in flight, and the sum of their times from hand-on to end
   *  (or to now), ms: the wire, the controller and the client stack, without the wait. Apart from
   *  the wait so a run can tell the gate's own queue from a slow controller (generator-verdict.ts). */
  handedOn?: number;
  handedOnMsTotal?: number;
}

interface Waiting {
  req: TransportRequest;
  resolve: (res: TransportResponse) => void;
  reject: (err: unknown) => void;
  askedAt: Millis;
  deadlineMs: number;
  /** When the deadline passes, on the timer's own (monotonic) time: setTimeout's, not the clock's. */
  expiresAt: number;
  /** Handed on or timed out: skipped by the queue. */
  done: boolean;
}

/**
 * How far apart the deadline sweeps run at least. One timer serves the whole queue (a timer per
 * waiting request was an object, a closure and a list entry each, promoted with the request when
 * thousands waited for seconds); a request may time out up to this late.
 */
const DEADLINE_SWEEP_MS = 25;

/**
 * The share of its deadline the oldest waiting request may have used before the queue serves
 * newest first: until then every request handed on has at least half its deadline for the wire
 * (60 s of EVE's default 120 s timer.send.timeout), far more than an answer takes.
 */
export const NEWEST_FIRST_AT_DEADLINE_SHARE = 0.5;

export class InFlightGate implements Transport {
  /** Bodies are made as requests are handed on, not while they wait here (TransportRequest.build). */
  readonly buildsBodiesLate = true;
  private active = 0;
  /**
   * Requests handed on, by device. A device's entry stays at 0 when its requests are answered:
   * deleting and re-adding it at every request made the map rebuild its table again and again, and
   * the new tables were promoted garbage. One entry per device of the worker.
   */
  private readonly byDevice = new Map<number, number>();
  /** FIFO; entries before `head` are gone, `done` entries are skipped. */
  private queue: Waiting[] = [];
  private head = 0;
  private waitingNow = 0;
  /** The one deadline timer, armed for the earliest deadline among waiting requests (or none). */
  private deadlineTimer: NodeJS.Timeout | undefined;
  private deadlineTimerAt = Infinity;
  private readonly figures: Required<Omit<InFlightStats, 'maxInFlight' | 'maxPerDevice'>> = {
    peak: 0,
    peakPerDevice: 0,
    queuePeak: 0,
    waited: 0,
    worstWaitMs: 0,
    timedOutWaiting: 0,
    handedOnNewestFirst: 0,
    requests: 0,
    waitMsTotal: 0,
    handedOn: 0,
    handedOnMsTotal: 0,
  };
  /** Sum of the hand-on times of the requests in flight now: their time so far without a list. */
  private activeHandedOnAtSum = 0;

  constructor(
    private readonly inner: Transport,
    private readonly clock: Clock,
    private readonly opts: InFlightGateOptions,
  ) {
    for (const k of ['maxInFlight', 'maxPerDevice', 'timeoutMs'] as const) {
      const v = opts[k];
      if (!(Number.isInteger(v) && v >= 1)) throw new Error(`in-flight gate: ${k} must be a whole number >= 1, got ${v}`);
    }
  }

  request(req: TransportRequest): Promise<TransportResponse> {
    this.figures.requests++;
    // pump() runs whenever a slot frees, so while a slot is free every waiting request is one whose
    // device is at its own cap: one with a slot may pass them, its own device's waiting ones not.
    if (this.hasSlot(req.deviceIndex)) return this.handOn(req);
    return new Promise<TransportResponse>((resolve, reject) => {
      const deadlineMs = requestDeadlineMs(req, this.opts.timeoutMs);
      const w: Waiting = { req, resolve, reject, askedAt: this.clock.now(), deadlineMs, expiresAt: performance.now() + deadlineMs, done: false };
      this.queue.push(w);
      this.waitingNow++;
      this.figures.waited++;
      if (this.waitingNow > this.figures.queuePeak) this.figures.queuePeak = this.waitingNow;
      if (w.expiresAt < this.deadlineTimerAt) this.armDeadlineTimer(w.expiresAt);
    });
  }

  /** Requests handed on now. */
  get inFlight(): number {
    return this.active;
  }

  /** Requests waiting for a slot now. */
  get waiting(): number {
    return this.waitingNow;
  }

  /** Entries the queue's array holds now, waiting or done but not yet dropped: what its memory grows with. */
  get entriesHeld(): number {
    return this.queue.length - this.head;
  }

  /**
   * The run is over: every request still waiting fails now as 'closed' (never sent), so no wait
   * timer outlives the run. Requests already handed on are the transport's to end.
   */
  close(): void {
    // One error for all of them: only its code is counted, and after a run that overloaded its
    // machine a worker fails 200,000 waiting requests here at once, when a stack trace and a
    // message apiece were a third of that stall.
    const closed = new TransportError(`the run ended while the request waited for an in-flight slot (closed, ${this.waitingNow} waiting)`, 'closed');
    for (let i = this.head; i < this.queue.length; i++) {
      const w = this.queue[i]!;
      if (w.done) continue;
      w.done = true;
      // Still waiting at the end: its wait so far counts towards the worst.
      this.noteWait(w);
      w.reject(closed);
    }
    this.waitingNow = 0;
    this.compact();
  }

  stats(): InFlightStats {
    // Requests still in flight count with their time so far: a controller that holds them shows.
    const soFar = this.active * this.clock.now() - this.activeHandedOnAtSum;
    return {
      maxInFlight: this.opts.maxInFlight,
      maxPerDevice: this.opts.maxPerDevice,
      ...this.figures,
      handedOn: this.figures.handedOn + this.active,
      handedOnMsTotal: this.figures.handedOnMsTotal + soFar,
    };
  }

  private hasSlot(device: number): boolean {
    return this.active < this.opts.maxInFlight && (this.byDevice.get(device) ?? 0) < this.opts.maxPerDevice;
  }

  private handOn(req: TransportRequest): Promise<TransportResponse> {
    const device = req.deviceIndex;
    const mine = (this.byDevice.get(device) ?? 0) + 1;
    this.byDevice.set(device, mine);
    this.active++;
    if (this.active > this.figures.peak) this.figures.peak = this.active;
    if (mine > this.figures.peakPerDevice) this.figures.peakPerDevice = mine;
    const handedOnAt = this.clock.now();
    this.activeHandedOnAtSum += handedOnAt;
    let sent: Promise<TransportResponse>;
    try {
      buildBody(req);
      sent = this.inner.request(req);
    } catch (err) {
      sent = Promise.reject(err);
    }
    // then() with both handlers rather than finally(): finally() makes two more promises and
    // closures per request, on every request of a run.
    return sent.then(
      (res) => {
        this.release(device, handedOnAt);
        return res;
      },
      (err: unknown) => {
        this.release(device, handedOnAt);
        throw err;
      },
    );
  }

  private release(device: number, handedOnAt: Millis): void {
    this.figures.handedOn++;
    this.figures.handedOnMsTotal += this.clock.now() - handedOnAt;
    this.activeHandedOnAtSum -= handedOnAt;
    this.active--;
    this.byDevice.set(device, this.byDevice.get(device)! - 1);
    this.pump();
  }

  /**
   * Hands on waiting requests while there are slots: oldest first, or newest first while the queue
   * is overloaded. One whose deadline has passed (its sweep not yet run) fails here, unsent.
   */
  private pump(): void {
    while (this.waitingNow > 0 && this.active < this.opts.maxInFlight) {
      const newestFirst = this.overloaded();
      const w = newestFirst ? this.newestEligible() : this.oldestEligible();
      if (!w) break;
      if (performance.now() >= w.expiresAt) {
        this.expire(w);
        continue;
      }
      w.done = true;
      this.waitingNow--;
      if (newestFirst) this.figures.handedOnNewestFirst++;
      const waitedMs = this.noteWait(w);
      const left = Math.max(1, Math.floor(w.deadlineMs - waitedMs));
      const req = left < w.deadlineMs ? { ...w.req, timeoutMs: left } : w.req;
      this.handOn(req).then(w.resolve, w.reject);
    }
    this.compact();
  }

  /**
   * Whether the oldest waiting request has used NEWEST_FIRST_AT_DEADLINE_SHARE of its deadline (the
   * handled entries before it dropped from view first).
   */
  private overloaded(): boolean {
    const q = this.queue;
    while (this.head < q.length && q[this.head]!.done) this.head++;
    if (this.head === q.length) return false;
    const oldest = q[this.head]!;
    return this.clock.now() - oldest.askedAt >= oldest.deadlineMs * NEWEST_FIRST_AT_DEADLINE_SHARE;
  }

  /** The oldest waiting request whose device is under its own cap. */
  private oldestEligible(): Waiting | undefined {
    const q = this.queue;
    for (let i = this.head; i < q.length; i++) {
      const w = q[i]!;
      if (!w.done && this.underDeviceCap(w)) return w;
    }
    return undefined;
  }

  /** The newest waiting request whose device is under its own cap. */
  private newestEligible(): Waiting | undefined {
    const q = this.queue;
    // The pick leaves the array at once when it is the last entry (nearly always): new requests
    // come between picks, so a done entry left at the tail would soon sit under them, holding its
    // request and payload until the head got past it, a deadline later.
    while (q.length > this.head && q[q.length - 1]!.done) q.pop();
    for (let i = q.length - 1; i >= this.head; i--) {
      const w = q[i]!;
      if (!w.done && this.underDeviceCap(w)) {
        if (i === q.length - 1) q.pop();
        return w;
      }
    }
    return undefined;
  }

  private underDeviceCap(w: Waiting): boolean {
    return (this.byDevice.get(w.req.deviceIndex) ?? 0) < this.opts.maxPerDevice;
  }

  private armDeadlineTimer(at: number): void {
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.deadlineTimerAt = at;
    this.deadlineTimer = setTimeout(this.sweepDeadlines, Math.max(1, at - performance.now()));
  }

  private disarmDeadlineTimer(): void {
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.deadlineTimerAt = Infinity;
  }

  /** Fails every waiting request whose deadline has passed, then waits for the next deadline. */
  private readonly sweepDeadlines = (): void => {
    const armedFor = this.deadlineTimerAt;
    this.deadlineTimer = undefined;
    this.deadlineTimerAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (let i = this.head; i < this.queue.length; i++) {
      const w = this.queue[i]!;
      if (w.done) continue;
      if (w.expiresAt <= now) this.expire(w);
      else if (w.expiresAt < next) next = w.expiresAt;
    }
    this.compact();
    // A timer can fire early by what the loop's cached time lags performance.now(): the deadline
    // it was armed for then gets its own timer again; later ones are swept together.
    if (next !== Infinity) this.armDeadlineTimer(next <= armedFor ? next : Math.max(next, now + DEADLINE_SWEEP_MS));
  };

  /** Fails a waiting request as 'timeout' (the caller compacts the queue). */
  private expire(w: Waiting): void {
    w.done = true;
    this.waitingNow--;
    this.figures.timedOutWaiting++;
    const waitedMs = this.noteWait(w);
    const { req } = w;
    w.reject(
      new TransportError(
        `${req.method} ${req.path} (device ${req.deviceIndex}, ${req.endpoint}): waited ${Math.round(waitedMs)} ms for one of the worker's ${this.opts.maxInFlight} in-flight slots, past the ${w.deadlineMs} ms deadline (timeout)`,
        'timeout',
      ),
    );
  }

  /** How long `w` has waited, ms, kept if it is the worst yet. */
  private noteWait(w: Waiting): number {
    const waitedMs = this.clock.now() - w.askedAt;
    this.figures.waitMsTotal += waitedMs;
    if (waitedMs > this.figures.worstWaitMs) this.figures.worstWaitMs = waitedMs;
    return waitedMs;
  }

  /** Drops the handled prefix once it is most of the array. */
  private compact(): void {
    if (this.waitingNow === 0) {
      this.queue = [];
      this.head = 0;
      this.disarmDeadlineTimer();
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
