// Wraps any Transport and tells every RequestObserver (metric recorder, --record writer) what
// happened to each request, timed on the simulation clock. Latency counts from the request's
// dueAt (open model), so a slow generator or a stalled controller shows up as latency instead of
// as fewer requests. Observers are isolated: one that throws is counted, never breaks a request.
// Requests still in flight when the run ends are reported once as 'unfinished' (settleUnfinished),
// so a controller that never answers shows up instead of vanishing from the figures.

import type { Clock, Transport, TransportRequest, TransportResponse } from '../device/ports.js';
import { TransportError } from '../device/ports.js';
import { UNFINISHED, type RequestObserver, type RequestOutcome } from './request-observer.js';

/** A request handed to the inner transport and not yet reported. */
interface Pending {
  req: TransportRequest;
  sentAt: number;
  /** Reported as unfinished: its late answer (or failure) is not reported again. */
  settled: boolean;
  /** Neighbours in the list of requests in flight (oldest first); undefined at the ends. */
  prev: Pending | undefined;
  next: Pending | undefined;
}

export class TimedTransport implements Transport {
  private readonly observers: RequestObserver[];
  private observerFailures = 0;
  private lastObserverError: unknown;
  // The requests in flight, as a list linked through the requests themselves: a Set here grew and
  // rehashed its table as requests came and went, and each new table outlived a scavenge and was
  // promoted, about a tenth of the worker's old-generation garbage.
  private oldest: Pending | undefined;
  private newest: Pending | undefined;
  private pendingCount = 0;

  constructor(
    private readonly inner: Transport,
    private readonly clock: Clock,
    observers: readonly RequestObserver[] = [],
  ) {
    this.observers = [...observers];
  }

  addObserver(observer: RequestObserver): void {
    this.observers.push(observer);
  }

  removeObserver(observer: RequestObserver): void {
    const i = this.observers.indexOf(observer);
    if (i >= 0) this.observers.splice(i, 1);
  }

  /** How many times an observer threw, and the last thing it threw (for the run's health report). */
  observerErrors(): { count: number; last: unknown } {
    return { count: this.observerFailures, last: this.lastObserverError };
  }

  /** As the transport it wraps: the gate makes bodies as it hands requests on. */
  get buildsBodiesLate(): boolean {
    return this.inner.buildsBodiesLate === true;
  }

  /** Requests handed on and not yet answered (nor reported as unfinished). */
  get inFlight(): number {
    return this.pendingCount;
  }

  /**
   * The end of the run: every request still waiting for its answer is reported now, once, with
   * status 0 and error 'unfinished' (latency = now − dueAt); whatever becomes of it later is not
   * reported again. Returns how many there were.
   */
  settleUnfinished(): number {
    const left: Pending[] = [];
    for (let p = this.oldest; p !== undefined; p = p.next) left.push(p);
    for (const p of left) this.unlink(p);
    for (const p of left) {
      p.settled = true;
      this.report(p.req, p.sentAt, 0, UNFINISHED, undefined);
    }
    return left.length;
  }

  request(req: TransportRequest): Promise<TransportResponse> {
    const p: Pending = { req, sentAt: this.clock.now(), settled: false, prev: this.newest, next: undefined };
    if (this.newest) this.newest.next = p;
    else this.oldest = p;
    this.newest = p;
    this.pendingCount++;
    let sent: Promise<TransportResponse>;
    try {
      sent = this.inner.request(req);
    } catch (err) {
      sent = Promise.reject(err);
    }
    // then() with two handlers rather than an async function: a request waiting for a slot for
    // seconds keeps whatever its frame holds, and a suspended async frame is the larger.
    return sent.then(
      (res) => {
        if (!p.settled) {
          this.unlink(p);
          this.report(req, p.sentAt, res.status, undefined, res);
        }
        return res;
      },
      (err: unknown) => {
        // Anything but a TransportError breaks the Transport contract (a bug): reported as
        // 'internal', then rethrown unchanged.
        if (!p.settled) {
          this.unlink(p);
          this.report(req, p.sentAt, 0, err instanceof TransportError ? err.code : 'internal', undefined);
        }
        throw err;
      },
    );
  }

  /** Takes a request off the in-flight list (once: settled requests are already off it). */
  private unlink(p: Pending): void {
    if (p.prev) p.prev.next = p.next;
    else this.oldest = p.next;
    if (p.next) p.next.prev = p.prev;
    else this.newest = p.prev;
    p.prev = p.next = undefined;
    this.pendingCount--;
  }

  private report(
    req: TransportRequest,
    sentAt: number,
    status: number,
    error: string | undefined,
    res: TransportResponse | undefined,
  ): void {
    if (this.observers.length === 0) return;
    const outcome: RequestOutcome = {
      endpoint: req.endpoint,
      deviceIndex: req.deviceIndex,
      method: req.method,
      path: req.path,
      status,
      dueAt: req.dueAt,
      sentAt,
      doneAt: this.clock.now(),
      requestBody: req.body,
      requestHeaders: req.headers,
    };
    if (error !== undefined) outcome.error = error;
    if (req.expect && status !== 0 && req.expect.statuses.includes(status)) outcome.expected = req.expect.reason;
    if (res) {
      outcome.responseBody = res.body;
      outcome.responseHeaders = res.headers;
    }
    for (const o of this.observers) {
      try {
        o.onOutcome(outcome);
      } catch (err) {
        this.observerFailures++;
        this.lastObserverError = err;
      }
    }
  }
}
