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
}

export class TimedTransport implements Transport {
  private readonly observers: RequestObserver[];
  private observerFailures = 0;
  private lastObserverError: unknown;
  private readonly pending = new Set<Pending>();

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

  /** Requests handed on and not yet answered (nor reported as unfinished). */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * The end of the run: every request still waiting for its answer is reported now, once, with
   * status 0 and error 'unfinished' (latency = now − dueAt); whatever becomes of it later is not
   * reported again. Returns how many there were.
   */
  settleUnfinished(): number {
    const left = [...this.pending];
    this.pending.clear();
    for (const p of left) {
      p.settled = true;
      this.report(p.req, p.sentAt, 0, UNFINISHED, undefined);
    }
    return left.length;
  }

  async request(req: TransportRequest): Promise<TransportResponse> {
    const p: Pending = { req, sentAt: this.clock.now(), settled: false };
    this.pending.add(p);
    let res: TransportResponse;
    try {
      res = await this.inner.request(req);
    } catch (err) {
      this.pending.delete(p);
      // Anything but a TransportError breaks the Transport contract (a bug): reported as
      // 'internal', then rethrown unchanged.
      const code = err instanceof TransportError ? err.code : 'internal';
      if (!p.settled) this.report(req, p.sentAt, 0, code, undefined);
      throw err;
    }
    this.pending.delete(p);
    if (!p.settled) this.report(req, p.sentAt, res.status, undefined, res);
    return res;
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
