// A device's envelope sealed as the request leaves: behind a transport that builds bodies late
// (the in-flight gate, through the timed transport), DeviceSender gives the request a build()
// instead of a sealed body, and what it builds is the envelope it would have sent at once; the
// config poll's kept envelope still serves an unchanged poll. Elsewhere the body comes sealed.

import { describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { buildBody, type Transport, type TransportRequest, type TransportResponse } from '../src/device/ports.js';
import { DeviceSender, type SenderHost } from '../src/device/sender/device-sender.js';
import { DeviceStats } from '../src/device/sender/device-stats.js';
import { DeviceCounters } from '../src/device/telemetry/metrics-builder.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import type { DeviceOptions } from '../src/device/device-options.js';
import { openRequest } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import { InFlightGate } from '../src/transport/in-flight-gate.js';
import { TimedTransport } from '../src/transport/timed-transport.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const open = (bytes: Uint8Array) => openRequest(bytes, () => ({ publicKey }), { acceptDer: false });

/** Keeps every request it is given and answers 201. */
class Capture implements Transport {
  readonly seen: TransportRequest[] = [];
  constructor(readonly buildsBodiesLate?: boolean) {}
  request(req: TransportRequest): Promise<TransportResponse> {
    this.seen.push(req);
    return Promise.resolve({ status: 201, headers: {}, body: new Uint8Array(0) });
  }
}

function sender(transport: Transport): DeviceSender {
  const rng = SeededRng.create(1, 0);
  const opts = { rng, identity: { deviceKey: privateKey, deviceCertHash: new Uint8Array(32) }, transport, clock: { now: () => 0 }, index: 0, behaviour: { api: 'v2' } } as unknown as DeviceOptions;
  const host: SenderHost = {
    opts,
    tally: new DeviceStats(),
    counters: new DeviceCounters(rng, { storageMB: 1000 }, 0),
    trust: { current: undefined, onCertMiss: () => {} },
    uuid: '00000000-0000-4000-8000-000000000000',
    finding: () => {},
  };
  return new DeviceSender(host);
}

const payload = new Uint8Array([1, 2, 3, 4, 5]);

describe('late sealing', () => {
  it('gives a transport that builds bodies late a build(), and its body is the sealed envelope', async () => {
    const t = new Capture(true);
    await sender(t).post('metrics', '/api/v2/edgedevice/id/x/metrics', payload, 0);
    const req = t.seen[0]!;
    expect(req.body).toBeUndefined();
    expect(req.build).toBeTypeOf('function');
    buildBody(req);
    expect(req.build).toBeUndefined();
    expect(Buffer.from(open(req.body!).payload)).toEqual(Buffer.from(payload));
  });

  it('seals at once for any other transport', async () => {
    const t = new Capture();
    await sender(t).post('metrics', '/api/v2/edgedevice/id/x/metrics', payload, 0);
    expect(t.seen[0]!.build).toBeUndefined();
    expect(Buffer.from(open(t.seen[0]!.body!).payload)).toEqual(Buffer.from(payload));
  });

  it('reaches the device through the timed transport over the gate, and an unchanged config poll still reuses its envelope', async () => {
    const inner = new Capture();
    const timed = new TimedTransport(new InFlightGate(inner, { now: () => 0 }, { maxInFlight: 4, maxPerDevice: 8, timeoutMs: 60_000 }), { now: () => 0 });
    expect(timed.buildsBodiesLate).toBe(true);
    const s = sender(timed);
    const poll = Msg.ConfigRequest.encode({ configHash: 'h'.repeat(43) });
    await s.post('config', '/api/v2/edgedevice/id/x/config', poll, 0);
    await s.post('config', '/api/v2/edgedevice/id/x/config', new Uint8Array(poll), 0);
    // The gate built both as it handed them on; the second is the first's envelope, byte for byte.
    expect(inner.seen.map((r) => r.build)).toEqual([undefined, undefined]);
    expect(Buffer.from(inner.seen[1]!.body!)).toEqual(Buffer.from(inner.seen[0]!.body!));
    expect(Buffer.from(open(inner.seen[1]!.body!).payload)).toEqual(Buffer.from(poll));
  });
});
