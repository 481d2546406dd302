// The per-device (mutual TLS) transport against a loopback HTTPS server that asks for client
// certificates and reports, per request, which certificate it saw, on which socket, and whether
// the TLS session was resumed: contexts built once per device and certificate, reconnects resumed,
// the switch from the onboarding to the device certificate (and no session carried across it), a
// device that went down losing its connection and session (closed after a command, left open without
// a FIN after a power loss and reset when it closes), a connection lost to the network made again
// with its session (what the server sees of the old one following the fault: a reset, nothing until
// the network is back, a FIN; a reset instead when the device goes down before the network is
// back), a connect under way when the power goes (silent, then reset), one connection per device,
// and server verification still on.

import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { Socket, type AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TransportError, type ClientCertKind, type TransportRequest } from '../src/device/ports.js';
import { createDeviceIdentity, type DeviceIdentityMaterial } from '../src/identity/device-identity.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import { makeLoopbackTls, type LoopbackTlsMaterial } from '../src/transport/loopback-tls.js';
import { PerDeviceTransport, type PerDeviceTransportOptions } from '../src/transport/mtls-transport.js';

interface Seen {
  peer: string;
  reused: boolean;
  socket: number;
}

const NOW = Date.now();

describe('per-device mutual-TLS transport', () => {
  let tlsMaterial: LoopbackTlsMaterial;
  let server: Server;
  let base: string;
  const ids: DeviceIdentityMaterial[] = [];
  const socketIds = new WeakMap<object, number>();
  let sockets = 0;
  /** Server sockets by id, the ids whose client sent its FIN (or reset), and those it reset. */
  const serverSockets = new Map<number, TLSSocket>();
  const finished = new Set<number>();
  const reset = new Set<number>();

  beforeAll(async () => {
    tlsMaterial = await makeLoopbackTls('mtls-test');
    const ca = createFleetCa('mtls-test', NOW);
    for (let i = 0; i < 3; i++) ids.push(createDeviceIdentity(ca, 'mtls-test', i, NOW).identity);
    server = createServer(
      { key: tlsMaterial.keyPem, cert: tlsMaterial.certPem, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const s = req.socket as TLSSocket;
        if (!socketIds.has(s)) {
          const id = ++sockets;
          socketIds.set(s, id);
          serverSockets.set(id, s);
          s.once('end', () => finished.add(id));
          s.once('close', () => finished.add(id));
          s.on('error', (err: NodeJS.ErrnoException) => {
            if (err.code === 'ECONNRESET') reset.add(id);
          });
        }
        const seen: Seen = { peer: s.getPeerX509Certificate()?.fingerprint256 ?? 'none', reused: s.isSessionReused(), socket: socketIds.get(s)! };
        const close = req.url?.includes('close') ?? false;
        const answer = () => {
          res.writeHead(200, { 'content-type': 'application/json', ...(close ? { connection: 'close' } : {}) });
          res.end(JSON.stringify(seen));
        };
        // '/slow': answered later, so a test can act while the request is on the wire.
        if (req.url?.includes('slow')) setTimeout(answer, 150);
        else answer();
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const fp = (pem: string) => new X509Certificate(pem).fingerprint256;

  function transport(extra: Partial<PerDeviceTransportOptions> = {}): PerDeviceTransport {
    return new PerDeviceTransport({
      baseUrl: base,
      caPem: tlsMaterial.caPem,
      trustSystemRoots: false,
      identityOf: (i) => ids[i],
      connectJitterMs: 0,
      ...extra,
    });
  }

  /** Runs `body` with a fresh transport and destroys it afterwards, whatever the body did. */
  async function withTransport(...args: [Partial<PerDeviceTransportOptions>, (t: PerDeviceTransport) => Promise<void>] | [(t: PerDeviceTransport) => Promise<void>]): Promise<void> {
    const [extra, body] = args.length === 2 ? args : [{}, args[0]];
    const t = transport(extra);
    try {
      await body(t);
    } finally {
      await t.destroy();
    }
  }

  async function send(t: PerDeviceTransport, deviceIndex: number, clientCert: ClientCertKind | undefined, path = '/api/v1/edgedevice/ping'): Promise<Seen> {
    const req: TransportRequest = { endpoint: 'ping', method: 'GET', path, headers: {}, dueAt: 0, deviceIndex };
    if (clientCert) req.clientCert = clientCert;
    const res = await t.request(req);
    expect(res.status).toBe(200);
    return JSON.parse(Buffer.from(res.body).toString()) as Seen;
  }

  it('presents the device certificate, builds its context once and resumes the session on every reconnect', async () => {
    await withTransport(async (t) => {
      const seen: Seen[] = [];
      // The server closes the connection after each answer: every request is a new connect.
      for (let i = 0; i < 4; i++) seen.push(await send(t, 0, 'device', '/close'));
      expect(seen.map((s) => s.peer)).toEqual(Array(4).fill(fp(ids[0]!.deviceCertPem)));
      expect(new Set(seen.map((s) => s.socket)).size).toBe(4);
      expect(seen.map((s) => s.reused)).toEqual([false, true, true, true]);
      const st = t.stats();
      expect(st.contextsCreated).toBe(1);
      expect(st.connected).toBe(4);
      expect(st.resumed).toBe(3);
    });
  });

  it('keeps one connection per device and reuses it while it is alive', async () => {
    await withTransport(async (t) => {
      const [a1, b1] = await Promise.all([send(t, 0, 'device'), send(t, 1, 'device')]);
      const [a2, b2] = await Promise.all([send(t, 0, 'device'), send(t, 1, 'device')]);
      expect(a1.socket).not.toBe(b1.socket);
      expect(a2.socket).toBe(a1.socket);
      expect(b2.socket).toBe(b1.socket);
      expect(a1.peer).toBe(fp(ids[0]!.deviceCertPem));
      expect(b1.peer).toBe(fp(ids[1]!.deviceCertPem));
      const st = t.stats();
      expect(st.devices).toBe(2);
      expect(st.sockets).toBe(2);
      expect(st.connected).toBe(2);
    });
  });

  it('switches from the onboarding to the device certificate on a new connection, without resuming across', async () => {
    await withTransport(async (t) => {
      const o1 = await send(t, 2, 'onboarding', '/close');
      const o2 = await send(t, 2, 'onboarding');
      expect(o1.peer).toBe(fp(ids[2]!.onboardCertPem));
      expect(o2.peer).toBe(fp(ids[2]!.onboardCertPem));
      expect(o2.reused).toBe(true);
      const d1 = await send(t, 2, 'device', '/close');
      const d2 = await send(t, 2, 'device');
      expect(d1.peer).toBe(fp(ids[2]!.deviceCertPem));
      expect(d1.socket).not.toBe(o2.socket);
      // A session made with the onboarding certificate would resume that identity: never offered.
      expect(d1.reused).toBe(false);
      expect(d2.reused).toBe(true);
      expect(d2.peer).toBe(fp(ids[2]!.deviceCertPem));
      const st = t.stats();
      expect(st.certSwitches).toBe(1);
      expect(st.contextsCreated).toBe(2);
    });
  });

  it('lets a device that went down lose its connection and TLS session: after it, a new connection and a full handshake', async () => {
    await withTransport(async (t) => {
      const first = await send(t, 1, 'device', '/close');
      const resumed = await send(t, 1, 'device');
      expect([first.reused, resumed.reused]).toEqual([false, true]);
      // A request on the wire when the device goes down still gets its answer on the old connection.
      const inFlight = send(t, 1, 'device', '/slow');
      await new Promise((r) => setTimeout(r, 30));
      t.deviceDown(1);
      t.deviceDown(2); // no connection yet: nothing to let go
      const afterBoot = await send(t, 1, 'device');
      const answered = await inFlight;
      expect(answered.socket).toBe(resumed.socket);
      expect(afterBoot.socket).not.toBe(resumed.socket);
      expect(afterBoot.peer).toBe(fp(ids[1]!.deviceCertPem));
      // The session died with the device: offering it would let the controller skip a handshake a rebooted EVE makes.
      expect(afterBoot.reused).toBe(false);
      const again = await send(t, 1, 'device');
      expect(again.socket).toBe(afterBoot.socket);
      const st = t.stats();
      expect(st.deviceRestarts).toBe(1);
      expect(st.connected).toBe(3);
      expect(st.resumed).toBe(1);
      expect(st.contextsCreated).toBe(1);
      // The old connection closes once its request was answered.
      await vi.waitFor(() => expect(t.stats().sockets).toBe(1), { timeout: 10_000, interval: 10 });
    });
  });

  it('closes the connection of a device shut down by command, and leaves a power-lost one open and silent until the controller closes it', async () => {
    await withTransport(async (t) => {
      const [a, b] = await Promise.all([send(t, 0, 'device'), send(t, 1, 'device')]);
      const keepAlive = vi.spyOn(Socket.prototype, 'setKeepAlive');
      t.deviceDown(0, 'shutdown');
      t.deviceDown(1, 'power-loss');
      // A dead device's kernel sends no TCP keep-alive probes either: turned off on the abandoned socket only.
      expect(keepAlive.mock.calls).toEqual([[false]]);
      keepAlive.mockRestore();
      // The shut-down device's kernel closed its socket: the server gets the FIN.
      await vi.waitFor(() => expect(finished.has(a.socket)).toBe(true), { timeout: 10_000, interval: 10 });
      expect(reset.has(a.socket)).toBe(false);
      // The power-lost device boots and connects again, without a session; two round trips on the new
      // connection later the old one has still sent nothing.
      const afterBoot = await send(t, 1, 'device');
      await send(t, 1, 'device');
      expect(afterBoot.socket).not.toBe(b.socket);
      expect(afterBoot.reused).toBe(false);
      expect(finished.has(b.socket)).toBe(false);
      expect(t.stats()).toMatchObject({ deviceRestarts: 2, abandonedByPowerLoss: 1, abandonedOpen: 1, sockets: 1 });
      expect(t.ownConnectionFigures()).toMatchObject({ deviceRestarts: 2, abandonedByPowerLoss: 1 });
      // The controller closes the dead connection itself (its idle timeout): the rebooted kernel
      // answers with a reset, and the transport forgets the connection.
      serverSockets.get(b.socket)!.end();
      await vi.waitFor(() => expect(reset.has(b.socket)).toBe(true), { timeout: 10_000, interval: 10 });
      await vi.waitFor(() => expect(t.stats().abandonedOpen).toBe(0), { timeout: 10_000, interval: 10 });
      // A second power loss, then the run ends: the abandoned connection is closed with the rest, reset.
      t.deviceDown(1, 'power-loss');
      expect(t.stats().abandonedOpen).toBe(1);
      await t.close();
      await vi.waitFor(() => expect(reset.has(afterBoot.socket)).toBe(true), { timeout: 10_000, interval: 10 });
    });
  });

  it('closes a power-lost connection when a live one would close for idleness (here the server\'s Keep-Alive: timeout=5)', async () => {
    await withTransport(async (t) => {
      const seen = await send(t, 2, 'device');
      t.deviceDown(2, 'power-loss');
      expect(t.stats().abandonedOpen).toBe(1);
      await vi.waitFor(() => expect(reset.has(seen.socket)).toBe(true), { timeout: 10_000, interval: 10 });
      await vi.waitFor(() => expect(t.stats().abandonedOpen).toBe(0), { timeout: 10_000, interval: 10 });
    });
  });

  it('makes a connection lost to the network again and resumes its session, never across certificates', async () => {
    await withTransport(async (t) => {
      const o1 = await send(t, 0, 'onboarding');
      t.connectionLost(0);
      const o2 = await send(t, 0, 'onboarding');
      expect(o2.socket).not.toBe(o1.socket);
      // Not a reboot: EVE's client still holds the session in memory and offers it.
      expect([o1.reused, o2.reused]).toEqual([false, true]);
      t.connectionLost(0);
      // Lost while on the onboarding certificate; the next request wants the device certificate.
      const d1 = await send(t, 0, 'device');
      expect(d1.peer).toBe(fp(ids[0]!.deviceCertPem));
      expect(d1.reused).toBe(false);
      t.connectionLost(0);
      const d2 = await send(t, 0, 'device');
      expect(d2.reused).toBe(true);
      expect(d2.socket).not.toBe(d1.socket);
      // Lost, then down before it connected again: the reboot still forgets the session.
      t.connectionLost(0);
      t.deviceDown(0);
      const d3 = await send(t, 0, 'device');
      expect(d3.reused).toBe(false);
      const st = t.stats();
      expect(st.connectionsLost).toBe(4);
      expect(st.deviceRestarts).toBe(0); // no connection was open to let go
      expect(st.connected).toBe(5);
      expect(st.resumed).toBe(2);
      // The onboarding to device move happened with no connection open: not a switch of a live one.
      expect(st.certSwitches).toBe(0);
    });
  });

  it('shows the server what each network fault leaves of the old connection: a reset, nothing until the network is back, a FIN', async () => {
    await withTransport(async (t) => {
      // A reset on the path: the server's socket fails with ECONNRESET at once.
      const r = await send(t, 0, 'device');
      t.connectionLost(0, 'reset');
      await vi.waitFor(() => expect(reset.has(r.socket)).toBe(true), { timeout: 10_000, interval: 10 });
      // A partition: the device gives the connection up, but its FIN does not get through; two
      // round trips of another device later the server still holds it, silent.
      const p = await send(t, 0, 'device');
      t.connectionLost(0, 'unreachable');
      expect(t.stats()).toMatchObject({ abandonedByNetwork: 1, abandonedOpen: 1, connectionsReset: 1 });
      await send(t, 1, 'device');
      await send(t, 1, 'device');
      expect(finished.has(p.socket)).toBe(false);
      // The network is back: the device connects again (resuming its session), and the old
      // connection's FIN arrives, not a reset.
      const back = await send(t, 0, 'device');
      expect(back.socket).not.toBe(p.socket);
      expect(back.reused).toBe(true);
      // Bounded below the idle close (about 4 s after the partition, from the server's
      // Keep-Alive: timeout=5), so the FIN must come from the reconnect, not from idleness.
      await vi.waitFor(() => expect(finished.has(p.socket)).toBe(true), { timeout: 2_500, interval: 10 });
      await vi.waitFor(() => expect(t.stats().abandonedOpen).toBe(0), { timeout: 10_000, interval: 10 });
      expect(reset.has(p.socket)).toBe(false);
      // A refused handshake or a name that does not resolve: the network carries the FIN.
      t.connectionLost(0, 'closed');
      await vi.waitFor(() => expect(finished.has(back.socket)).toBe(true), { timeout: 10_000, interval: 10 });
      expect(reset.has(back.socket)).toBe(false);
      expect(t.ownConnectionFigures()).toMatchObject({ connectionsLost: 3, abandonedByNetwork: 1, resetByNetwork: 1 });
    });
  });

  it('resets, never FINs, a connection a partition cut off when the device went down before the network was back', async () => {
    await withTransport(async (t) => {
      const p = await send(t, 0, 'device');
      const q = await send(t, 1, 'device');
      t.connectionLost(0, 'unreachable');
      t.connectionLost(1, 'unreachable');
      // Device 0 loses power, device 1 reboots by command, both while partitioned: each kernel dies with its FIN unsent.
      t.deviceDown(0, 'power-loss');
      t.deviceDown(1, 'shutdown');
      expect(t.stats()).toMatchObject({ abandonedByNetwork: 2, abandonedOpen: 2, deviceRestarts: 0 });
      // The network is back and both boot and connect again (a full handshake: the reboot took the
      // session); the old connections get no FIN. Two more round trips give a FIN time to arrive.
      const [p2, q2] = await Promise.all([send(t, 0, 'device'), send(t, 1, 'device')]);
      expect([p2.reused, q2.reused]).toEqual([false, false]);
      await Promise.all([send(t, 0, 'device'), send(t, 1, 'device')]);
      expect(finished.has(p.socket) || finished.has(q.socket)).toBe(false);
      expect(t.stats().abandonedOpen).toBe(2);
      // The controller closes one itself: the rebooted kernel answers with a reset. The run's end resets the other.
      serverSockets.get(p.socket)!.end();
      await vi.waitFor(() => expect(reset.has(p.socket)).toBe(true), { timeout: 10_000, interval: 10 });
      await vi.waitFor(() => expect(t.stats().abandonedOpen).toBe(1), { timeout: 10_000, interval: 10 });
      await t.close();
      await vi.waitFor(() => expect(reset.has(q.socket)).toBe(true), { timeout: 10_000, interval: 10 });
    });
  });

  it('makes a connect its device lost power during silent and reset when closed, also after a partition took it first', async () => {
    await withTransport(async (t) => {
      // Both requests are handed on, their connects not yet made: device 2 loses power; device 1 is
      // partitioned, then loses power. Loopback lets the connects finish and the requests go out,
      // as requests a worker handed on before a power loss do.
      const p = send(t, 2, 'device');
      const q = send(t, 1, 'device');
      expect(t.stats().sockets).toBe(0);
      t.deviceDown(2, 'power-loss');
      t.connectionLost(1, 'unreachable');
      t.deviceDown(1, 'power-loss');
      const [a, b] = await Promise.all([p, q]);
      expect(t.stats().abandonedOpen).toBe(2);
      // The controller closes both: the rebooted kernels answer with resets, not FINs.
      serverSockets.get(a.socket)!.end();
      serverSockets.get(b.socket)!.end();
      await vi.waitFor(() => expect([reset.has(a.socket), reset.has(b.socket)]).toEqual([true, true]), { timeout: 10_000, interval: 10 });
      await vi.waitFor(() => expect(t.stats().abandonedOpen).toBe(0), { timeout: 10_000, interval: 10 });
    });
  });

  it('sends no client certificate when the request asks for none (v2 per-device connections)', async () => {
    await withTransport({ identityOf: undefined }, async (t) => {
      const s = await send(t, 0, undefined);
      expect(s.peer).toBe('none');
      expect(t.stats().contextsCreated).toBe(0);
    });
  });

  it('fails a request whose device has no identity, and verifies the server certificate', async () => {
    await withTransport({ identityOf: () => undefined }, async (t) => {
      await expect(send(t, 5, 'device')).rejects.toThrow(/no identity for this device/);
    });
    const other = await makeLoopbackTls('someone else');
    const wrongCa = transport({ caPem: other.caPem });
    try {
      const err = await send(wrongCa, 0, 'device').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).code).toMatch(/CERT|VERIFY|SIGNATURE/);
    } finally {
      await wrongCa.destroy();
    }
  });
});
