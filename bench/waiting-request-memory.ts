// What a request costs in memory while it waits for one of its worker's in-flight slots. When a
// controller (or the generator itself) falls behind, tens of thousands of a worker's requests wait
// in the in-flight gate for seconds; whatever each holds outlives two scavenges and is promoted, so
// the old generation grows by it and mark-compacts follow (a 40,000-device run's config-change
// minute, bench/README). This bench holds N requests in the worker's own transport stack
// (TimedTransport over InFlightGate, as shard-runner.ts builds it) against a transport that never
// answers, first on their own, then sent by devices' DeviceSenders (one per device, as in a run),
// and measures the live heap per waiting request after a forced GC. Last, the same through two of
// a device's own loops: an info pass (InfoPublisher, a queued message of --body bytes) and a config
// poll (ConfigFetcher), each woken by its timer, so what the loop itself holds while its request
// waits is counted too.
//
//   npm run build && node --expose-gc dist/bench/waiting-request-memory.js [--requests 20000] [--rounds 5] [--body 1024]
//
// Baseline in the same run: the floor, the same N requests (request object, headers, body) each
// held by an awaiting caller without any transport. The figures are the heap per waiting request
// above that floor, of the transport stack and of the sender with it; it also prints the heap of a
// request handed on (in flight), for scale.

import { checkBenchArgs, positiveIntArg } from './bench-args.js';
import { machineDescription } from './machine.js';
import { median } from './median.js';
import type { Clock, Transport, TransportRequest, TransportResponse } from '../src/device/ports.js';
import { InFlightGate } from '../src/transport/in-flight-gate.js';
import { TimedTransport } from '../src/transport/timed-transport.js';
import type { RequestObserver } from '../src/transport/request-observer.js';
import { DeviceSender, type SenderHost } from '../src/device/sender/device-sender.js';
import { DeviceStats } from '../src/device/sender/device-stats.js';
import { DeviceCounters } from '../src/device/telemetry/metrics-builder.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import type { DeviceOptions } from '../src/device/device-options.js';
import type { Scheduler, TimerHandle, WakeTarget } from '../src/device/ports.js';
import { wake } from '../src/device/ports.js';
import { InfoPublisher } from '../src/device/telemetry/info-publisher.js';
import { ConfigFetcher } from '../src/device/config/config-fetcher.js';
import { generateKeyPairSync } from 'node:crypto';

const USAGE = `waiting-request-memory: live heap per request waiting for an in-flight slot, above the request's own, after a forced GC.
  node --expose-gc dist/bench/waiting-request-memory.js [--requests 20000] [--rounds 5] [--body 1024]`;
checkBenchArgs(USAGE, ['requests=', 'rounds=', 'body=']);

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error('waiting-request-memory: run with node --expose-gc (it measures the live heap after a forced GC)');
  process.exit(2);
}
const requests = positiveIntArg('requests', 20_000);
const rounds = positiveIntArg('rounds', 5);
const bodyBytes = positiveIntArg('body', 1024);
const MAX_IN_FLIGHT = 256; // the worker's default cap (MAX_IN_FLIGHT_DEFAULT)
const clock: Clock = { now: () => performance.now() };

/** Never answers until released; holds what a transport with a socket per request would. */
class StalledTransport implements Transport {
  held: Array<(res: TransportResponse) => void> = [];
  request(): Promise<TransportResponse> {
    return new Promise((resolve) => this.held.push(resolve));
  }
  releaseAll(): void {
    const answer: TransportResponse = { status: 201, headers: {}, body: new Uint8Array(0) };
    for (const r of this.held.splice(0)) r(answer);
  }
}

function makeRequest(i: number, withBody = true): TransportRequest {
  if (!withBody) return { endpoint: 'ping', method: 'GET', path: '/api/v2/edgedevice/ping', headers: { 'X-Request-Id': `r-${i}` }, dueAt: clock.now(), deviceIndex: i };
  return {
    endpoint: 'metrics',
    method: 'POST',
    path: `/api/v2/edgedevice/id/00000000-0000-4000-8000-${String(i).padStart(12, '0')}/metrics`,
    headers: { 'X-Request-Id': `r-${i}`, 'Content-Type': 'application/x-proto-binary' },
    body: new Uint8Array(bodyBytes),
    dueAt: clock.now(),
    deviceIndex: i,
  };
}

function liveHeap(): number {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const settle = () => new Promise<void>((r) => setImmediate(r));

/** Live bytes per request while `n` requests are held by `send`, then everything is let go. */
async function heldBytesPerRequest(n: number, send: (req: TransportRequest) => Promise<unknown>, release: () => Promise<void>, withBody = true): Promise<number> {
  const before = liveHeap();
  const done: Promise<unknown>[] = [];
  // Each caller awaits its own request, as a device's endpoint loop does.
  for (let i = 0; i < n; i++) done.push((async () => { try { await send(makeRequest(i, withBody)); } catch { /* closed */ } })());
  await settle();
  const during = liveHeap();
  await release();
  await Promise.all(done);
  return (during - before - n * 8) / n; // minus the `done` array's slot per caller
}

/** The floor: `n` requests each held by its awaiting caller, with no transport. */
async function heldByCaller(n: number, withBody: boolean): Promise<number> {
  const held: Array<() => void> = [];
  return heldBytesPerRequest(
    n,
    (req) => new Promise<void>((resolve) => held.push(() => resolve(void req))),
    async () => { for (const r of held.splice(0)) r(); },
    withBody,
  );
}

const floor = () => heldByCaller(requests, true);

/** The worker's stack with a cap of `maxInFlight`; release() fails the waiting and answers the rest. */
function stack(maxInFlight: number): { timed: TimedTransport; release: () => Promise<void> } {
  const inner = new StalledTransport();
  const gate = new InFlightGate(inner, clock, { maxInFlight, maxPerDevice: 8, timeoutMs: 300_000 });
  const observer: RequestObserver = { onOutcome: () => {} };
  return {
    timed: new TimedTransport(gate, clock, [observer]),
    release: async () => {
      gate.close();
      inner.releaseAll();
    },
  };
}

/** N requests into the stack: MAX_IN_FLIGHT handed on, the rest waiting for a slot. */
async function waiting(): Promise<number> {
  const s = stack(MAX_IN_FLIGHT);
  return heldBytesPerRequest(requests + MAX_IN_FLIGHT, (req) => s.timed.request(req), s.release);
}

/**
 * The same, each request sent by its own device's DeviceSender (a GET: no body, so the floor here
 * is a request without one). The senders exist before the measurement, as a run's devices do.
 */
function senders(n: number, transport: Transport): DeviceSender[] {
  return senderHosts(n, transport, undefined).map((host) => new DeviceSender(host));
}

/** One signing key for every device: what a device holds of it is not what this bench measures. */
const deviceKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

/** What a device's sender reads of its device; `scheduler` for the loops that arm timers. */
function senderHosts(n: number, transport: Transport, scheduler: Scheduler | undefined): SenderHost[] {
  const out: SenderHost[] = [];
  for (let i = 0; i < n; i++) {
    const rng = SeededRng.create(1, i);
    // Only what DeviceSender and the loops read of a device; the rest of DeviceOptions is never touched here.
    const identity = { deviceKey, deviceCertHash: new Uint8Array(32) };
    const opts = { rng, identity, transport, clock, scheduler, index: i, behaviour: { api: 'v2' } } as unknown as DeviceOptions;
    out.push({
      opts,
      tally: new DeviceStats(),
      counters: new DeviceCounters(rng, { storageMB: 1000 }, 0),
      trust: { current: undefined, onCertMiss: () => {} },
      uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      finding: () => {},
    });
  }
  return out;
}

/** Keeps every wake-up asked for; wakeAll() fires them, as the worker's scheduler does when they are due. */
class HeldScheduler implements Scheduler {
  private targets: Array<WakeTarget | undefined> = [];
  at(_at: number, target: WakeTarget): TimerHandle {
    return this.targets.push(target) - 1;
  }
  cancel(handle: TimerHandle): void {
    this.targets[handle] = undefined;
  }
  wakeAll(): void {
    const due = this.targets.splice(0);
    for (const t of due) if (t) wake(t, clock.now());
  }
}

const guard = (fn: () => Promise<void> | void): void => {
  const r = fn();
  if (r) r.catch(() => {});
};

/**
 * Live bytes per device while each device's loop waits on its request: `arm` makes the devices
 * (and arms their loops) before the first measurement, wakeAll() starts every loop at once.
 */
async function loopWaiting(arm: (hosts: SenderHost[]) => unknown[]): Promise<number> {
  const s = stack(MAX_IN_FLIGHT);
  const n = requests + MAX_IN_FLIGHT;
  const scheduler = new HeldScheduler();
  const loops = arm(senderHosts(n, s.timed, scheduler));
  const before = liveHeap();
  scheduler.wakeAll();
  await settle();
  const during = liveHeap();
  await s.release();
  await settle();
  loops.length = 0; // as senderWaiting: gone before the next round's floor
  return (during - before) / n;
}

/** Each device's info pass sends one queued message of --body bytes (sealed and signed on the way). */
const infoPassWaiting = () =>
  loopWaiting((hosts) =>
    hosts.map((h) => {
      const sender = new DeviceSender(h);
      const publisher = new InfoPublisher({ ...h, sender, generation: 0, onAttestCertsOutcome: () => {}, guard });
      publisher.enqueue(h.uuid, 'device', new Uint8Array(bodyBytes), clock.now(), false);
      return publisher;
    }),
  );

/** Each device's config poll (a ConfigRequest with a 64-character hash, sealed and signed). */
const configPollWaiting = () =>
  loopWaiting((hosts) =>
    hosts.map((h) => {
      const sender = new DeviceSender(h);
      const fetcher = new ConfigFetcher({
        ...h,
        sender,
        generation: 0,
        configIntervalS: 60,
        integrityToken: undefined,
        onConfigReceived: () => {},
        applyConfig: () => {},
        onForbidden: () => {},
        relookupUuid: async () => {},
        guard,
      });
      fetcher.configHash = 'a'.repeat(64);
      fetcher.start(clock.now());
      return fetcher;
    }),
  );

const senderFloor = () => heldByCaller(requests + MAX_IN_FLIGHT, false);

async function senderWaiting(): Promise<number> {
  const s = stack(MAX_IN_FLIGHT);
  const n = requests + MAX_IN_FLIGHT;
  const devices = senders(n, s.timed);
  const perRequest = await heldBytesPerRequest(n, (req) => devices[req.deviceIndex]!.get('ping', '/api/v2/edgedevice/ping', req.dueAt), s.release, false);
  // Let the senders go now: without this the next round's floor found them still live at its
  // start and freed during its measurement (a negative floor in one round of five).
  devices.length = 0;
  return perRequest;
}

/** Every request handed on (a cap of N): what a request in flight holds in the stack. */
async function inFlight(): Promise<number> {
  const s = stack(requests);
  return heldBytesPerRequest(requests, (req) => s.timed.request(req), s.release);
}

console.log(`machine: ${machineDescription()}`);
console.log(`${requests} requests with ${bodyBytes}-byte bodies; the gate's cap ${MAX_IN_FLIGHT} (the rest wait); ${rounds} rounds, each kind once a round in turn, after one warm-up round`);
const kinds = { floor, waiting, inFlight, senderFloor, senderWaiting, infoPassWaiting, configPollWaiting };
const xs = Object.fromEntries(Object.keys(kinds).map((k) => [k, [] as number[]])) as Record<keyof typeof kinds, number[]>;
for (let r = 0; r <= rounds; r++) {
  for (const [k, run] of Object.entries(kinds)) {
    const v = await run();
    if (r > 0) xs[k as keyof typeof kinds].push(v); // round 0 warms up: JIT, the heap's first growth
  }
}
const m = (k: keyof typeof kinds) => median(xs[k]);
const range = (k: keyof typeof kinds) => `rounds ${Math.min(...xs[k]).toFixed(0)}–${Math.max(...xs[k]).toFixed(0)}`;
console.log(`floor (the request held by its caller): ${m('floor').toFixed(0)} B per request (${range('floor')})`);
console.log(`waiting for a slot in TimedTransport + InFlightGate: ${m('waiting').toFixed(0)} B per request, ${(m('waiting') - m('floor')).toFixed(0)} B above the floor (${range('waiting')})`);
console.log(`handed on (in flight), for scale: ${m('inFlight').toFixed(0)} B per request, ${(m('inFlight') - m('floor')).toFixed(0)} B above the floor (${range('inFlight')})`);
console.log(`a device's GET waiting, sent by its DeviceSender through the same stack: ${m('senderWaiting').toFixed(0)} B per request, ${(m('senderWaiting') - m('senderFloor')).toFixed(0)} B above its floor of ${m('senderFloor').toFixed(0)} B (a GET held by its caller) (${range('senderWaiting')})`);
console.log(`a device's info pass waiting (InfoPublisher, a ${bodyBytes}-byte message sealed by its DeviceSender): ${m('infoPassWaiting').toFixed(0)} B per request with its sealed body, ${(m('infoPassWaiting') - m('senderWaiting')).toFixed(0)} B above the GET (${range('infoPassWaiting')})`);
console.log(`a device's config poll waiting (ConfigFetcher, its ConfigRequest sealed by its DeviceSender): ${m('configPollWaiting').toFixed(0)} B per request with its sealed body, ${(m('configPollWaiting') - m('senderWaiting')).toFixed(0)} B above the GET (${range('configPollWaiting')})`);
