// Fakes for the LPS agent tests: a manual clock and scheduler, and a transport that answers from a
// function (or from an embedded LPS's request handler, in process).

import type { Clock, Millis, Scheduler, TimerHandle, Transport, TransportRequest, TransportResponse } from '../src/device/ports.js';
import { TransportError, wake, type WakeTarget } from '../src/device/ports.js';

export class ManualClock implements Clock {
  t = 0;
  now(): Millis {
    return this.t;
  }
}

interface Entry {
  at: Millis;
  seq: number;
  fn: (dueAt: Millis) => void;
}

export class ManualScheduler implements Scheduler {
  private entries = new Map<number, Entry>();
  private nextId = 1;
  private seq = 0;
  constructor(readonly clock: ManualClock) {}

  at(at: Millis, target: WakeTarget): TimerHandle {
    const id = this.nextId++;
    this.entries.set(id, { at, seq: this.seq++, fn: (dueAt) => wake(target, dueAt) });
    return id;
  }

  cancel(handle: TimerHandle): void {
    this.entries.delete(handle);
  }

  get pending(): number {
    return this.entries.size;
  }

  /** Runs every wake-up due up to `t` in time order, letting promises settle after each. */
  async advanceTo(t: Millis): Promise<void> {
    for (;;) {
      let best: [number, Entry] | undefined;
      for (const e of this.entries) {
        if (e[1].at <= t && (best === undefined || e[1].at < best[1].at || (e[1].at === best[1].at && e[1].seq < best[1].seq))) best = e;
      }
      if (best === undefined) break;
      this.entries.delete(best[0]);
      if (best[1].at > this.clock.t) this.clock.t = best[1].at;
      best[1].fn(best[1].at);
      await settle();
    }
    if (t > this.clock.t) this.clock.t = t;
    await settle();
  }

  async advance(ms: Millis): Promise<void> {
    await this.advanceTo(this.clock.t + ms);
  }
}

/** Lets pending promise callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

export type Answer = TransportResponse | 'no-answer';

export class FakeTransport implements Transport {
  readonly requests: (TransportRequest & { at: Millis })[] = [];
  constructor(
    private readonly clock: Clock,
    public answer: (req: TransportRequest) => Answer | Promise<Answer>,
  ) {}

  async request(req: TransportRequest): Promise<TransportResponse> {
    this.requests.push({ ...req, at: this.clock.now() });
    const a = await this.answer(req);
    if (a === 'no-answer') throw new TransportError('connection refused', 'ECONNREFUSED');
    return a;
  }

  /** Requests to one path. */
  to(endpoint: string): (TransportRequest & { at: Millis })[] {
    return this.requests.filter((r) => (r.endpoint as string) === endpoint);
  }
}

export function protoReply(body: Uint8Array, status = 200): TransportResponse {
  return { status, headers: { 'content-type': 'application/x-proto-binary' }, body };
}

export const NO_CONTENT: TransportResponse = { status: 204, headers: {}, body: new Uint8Array(0) };
export const NOT_FOUND: TransportResponse = { status: 404, headers: {}, body: new Uint8Array(0) };
