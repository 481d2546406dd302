// Wraps any Transport and tells every RequestObserver (metric recorder, --record writer) what
// happened to each request, timed on the simulation clock. Latency counts from the request's
// dueAt (open model), so a slow generator or a stalled controller shows up as latency instead of
// as fewer requests. Observers are isolated: one that throws is counted, never breaks a request.

import type { Clock, Transport, TransportRequest, TransportResponse } from '../device/ports.js';
import { TransportError } from '../device/ports.js';
import type { RequestObserver, RequestOutcome } from './request-observer.js';

export class TimedTransport implements Transport {
  private readonly observers: RequestObserver[];
  private observerFailures = 0;
  private lastObserverError: unknown;

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

  async request(req: TransportRequest): Promise<TransportResponse> {
    const sentAt = this.clock.now();
    let res: TransportResponse;
    try {
      res = await this.inner.request(req);
    } catch (err) {
      // Anything but a TransportError breaks the Transport contract (a bug): reported as
      // 'internal', then rethrown unchanged.
      const code = err instanceof TransportError ? err.code : 'internal';
      this.report(req, sentAt, 0, code, undefined);
      throw err;
    }
    this.report(req, sentAt, res.status, undefined, res);
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
