import { describe, expect, it } from 'vitest';
import {
  TransportError,
  type Clock,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from '../src/device/ports.js';
import type { RequestObserver, RequestOutcome } from '../src/transport/request-observer.js';
import { TimedTransport } from '../src/transport/timed-transport.js';

class ManualClock implements Clock {
  t = 1_000;
  now(): number {
    return this.t;
  }
}

/** A transport whose answers take `delay` ms of the manual clock. */
class ScriptedTransport implements Transport {
  constructor(
    private readonly clock: ManualClock,
    private readonly answer: (req: TransportRequest) => TransportResponse | Error,
    private readonly delay = 40,
  ) {}
  async request(req: TransportRequest): Promise<TransportResponse> {
    await Promise.resolve();
    this.clock.t += this.delay;
    const a = this.answer(req);
    if (a instanceof Error) throw a;
    return a;
  }
}

function collector(): RequestObserver & { seen: RequestOutcome[] } {
  const seen: RequestOutcome[] = [];
  return { seen, onOutcome: (o) => seen.push(o) };
}

/** A transport whose requests wait until the test answers (answers[i]) or fails (fails[i]) them. */
function heldTransport(): { inner: Transport; answers: ((r: TransportResponse) => void)[]; fails: ((e: Error) => void)[] } {
  const answers: ((r: TransportResponse) => void)[] = [];
  const fails: ((e: Error) => void)[] = [];
  const inner: Transport = {
    request: () =>
      new Promise<TransportResponse>((resolve, reject) => {
        answers.push(resolve);
        fails.push(reject);
      }),
  };
  return { inner, answers, fails };
}

const body = new Uint8Array([1, 2, 3]);

function req(over: Partial<TransportRequest> = {}): TransportRequest {
  return {
    endpoint: 'info',
    method: 'POST',
    path: '/api/v2/edgedevice/id/u/info',
    headers: { 'content-type': 'application/x-proto-binary' },
    body,
    dueAt: 900,
    deviceIndex: 42,
    ...over,
  };
}

describe('TimedTransport', () => {
  it('reports each outcome with dueAt from the request and sentAt/doneAt from the clock', async () => {
    const clock = new ManualClock();
    const resBody = new Uint8Array([9]);
    const inner = new ScriptedTransport(clock, () => ({ status: 201, headers: { 'x-a': 'b' }, body: resBody }));
    const obs = collector();
    const t = new TimedTransport(inner, clock, [obs]);

    // Due at 900, handed over at 1000 (the generator was 100 ms late), answered 40 ms later.
    const res = await t.request(req());
    expect(res.status).toBe(201);
    expect(obs.seen).toHaveLength(1);
    const o = obs.seen[0]!;
    expect(o).toMatchObject({
      endpoint: 'info',
      deviceIndex: 42,
      method: 'POST',
      path: '/api/v2/edgedevice/id/u/info',
      status: 201,
      dueAt: 900,
      sentAt: 1000,
      doneAt: 1040,
      responseHeaders: { 'x-a': 'b' },
      requestHeaders: { 'content-type': 'application/x-proto-binary' },
    });
    expect(o.error).toBeUndefined();
    expect(o.requestBody).toBe(body);
    expect(o.responseBody).toBe(resBody);
    // Latency counts from when it was due, so generator lateness is not hidden.
    expect(o.doneAt - o.dueAt).toBe(140);
    expect(o.doneAt - o.sentAt).toBe(40);
  });

  it('reports a TransportError as status 0 with its code, and still rejects', async () => {
    const clock = new ManualClock();
    const inner = new ScriptedTransport(clock, () => new TransportError('nobody home', 'ECONNREFUSED'), 5);
    const obs = collector();
    const t = new TimedTransport(inner, clock, [obs]);
    await expect(t.request(req())).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(obs.seen[0]).toMatchObject({ status: 0, error: 'ECONNREFUSED', sentAt: 1000, doneAt: 1005 });
    expect(obs.seen[0]!.responseBody).toBeUndefined();
    expect(obs.seen[0]!.responseHeaders).toBeUndefined();
  });

  it('reports a contract-breaking error as internal and rethrows it unchanged', async () => {
    const clock = new ManualClock();
    const bug = new TypeError('oops');
    const obs = collector();
    const t = new TimedTransport(new ScriptedTransport(clock, () => bug), clock, [obs]);
    await expect(t.request(req())).rejects.toBe(bug);
    expect(obs.seen[0]).toMatchObject({ status: 0, error: 'internal' });
  });

  it('isolates observers: one that throws is counted and the others still hear', async () => {
    const clock = new ManualClock();
    const inner = new ScriptedTransport(clock, () => ({ status: 200, headers: {}, body: new Uint8Array(0) }));
    const bad: RequestObserver = {
      onOutcome: () => {
        throw new Error('observer bug');
      },
    };
    const good = collector();
    const t = new TimedTransport(inner, clock, [bad]);
    t.addObserver(good);
    const res = await t.request(req());
    expect(res.status).toBe(200);
    expect(good.seen).toHaveLength(1);
    expect(t.observerErrors().count).toBe(1);
    expect((t.observerErrors().last as Error).message).toBe('observer bug');

    t.removeObserver(good);
    await t.request(req());
    expect(good.seen).toHaveLength(1);
    expect(t.observerErrors().count).toBe(2);
  });

  it('reports requests still waiting at the end once as unfinished, and never their late answers', async () => {
    const clock = new ManualClock();
    const { inner, answers, fails } = heldTransport();
    const obs = collector();
    const t = new TimedTransport(inner, clock, [obs]);
    const late = t.request(req({ dueAt: 700, endpoint: 'config' }));
    const failing = t.request(req({ dueAt: 800 }));
    const answered = t.request(req({ dueAt: 950 }));
    expect(t.inFlight).toBe(3);
    answers[2]!({ status: 201, headers: {}, body: new Uint8Array(0) });
    await answered;
    expect(obs.seen.map((o) => o.status)).toEqual([201]);

    clock.t = 5_000;
    expect(t.settleUnfinished()).toBe(2);
    expect(t.inFlight).toBe(0);
    expect(obs.seen.slice(1)).toMatchObject([
      { endpoint: 'config', status: 0, error: 'unfinished', dueAt: 700, sentAt: 1000, doneAt: 5000 },
      { endpoint: 'info', status: 0, error: 'unfinished', dueAt: 800, sentAt: 1000, doneAt: 5000 },
    ]);
    // What becomes of them afterwards reaches the caller, not the observers.
    answers[0]!({ status: 200, headers: {}, body: new Uint8Array(0) });
    fails[1]!(new TransportError('gone', 'ECONNRESET'));
    expect((await late).status).toBe(200);
    await expect(failing).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(obs.seen).toHaveLength(3);
    expect(t.settleUnfinished()).toBe(0);
    expect(obs.seen).toHaveLength(3);
  });

  it('keeps the requests in flight in the order they were sent, whichever are answered first', async () => {
    const clock = new ManualClock();
    const { inner, answers, fails } = heldTransport();
    const obs = collector();
    const t = new TimedTransport(inner, clock, [obs]);
    const sent = [100, 200, 300, 400, 500, 600].map((dueAt) => t.request(req({ dueAt })).catch((e: Error) => e));
    expect(t.inFlight).toBe(6);
    // The newest, one in the middle and the oldest leave the list in turn.
    answers[5]!({ status: 200, headers: {}, body: new Uint8Array(0) });
    answers[2]!({ status: 200, headers: {}, body: new Uint8Array(0) });
    fails[0]!(new TransportError('reset', 'ECONNRESET'));
    await Promise.all([sent[5], sent[2], sent[0]]);
    expect(t.inFlight).toBe(3);
    clock.t = 9_000;
    expect(t.settleUnfinished()).toBe(3);
    expect(t.inFlight).toBe(0);
    expect(obs.seen.slice(3).map((o) => [o.dueAt, o.error])).toEqual([
      [200, 'unfinished'],
      [400, 'unfinished'],
      [500, 'unfinished'],
    ]);
    // The list is empty and usable again.
    const again = t.request(req({ dueAt: 9_000 }));
    expect(t.inFlight).toBe(1);
    answers[6]!({ status: 201, headers: {}, body: new Uint8Array(0) });
    await again;
    expect(t.inFlight).toBe(0);
    expect(t.settleUnfinished()).toBe(0);
  });
});
