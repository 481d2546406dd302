// ControllerTransport against real loopback HTTPS servers (127.0.0.1 only), with a CA generated
// per run.

import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransportError, type TransportRequest } from '../src/device/ports.js';
import { ControllerTransport } from '../src/transport/controller-transport.js';
import { makeLoopbackTls, type LoopbackTlsMaterial } from '../src/transport/loopback-tls.js';

let tlsA: LoopbackTlsMaterial;
let tlsB: LoopbackTlsMaterial; // an unrelated CA: the "wrong CA" case
let server: https.Server;
let baseUrl: string;
const serverSockets = { resumed: 0, full: 0 };
const open: ControllerTransport[] = [];

function req(path: string, over: Partial<TransportRequest> = {}): TransportRequest {
  return { endpoint: 'config', method: 'GET', path, headers: {}, dueAt: 0, deviceIndex: 7, ...over };
}

function transport(opts: Partial<ConstructorParameters<typeof ControllerTransport>[0]> = {}): ControllerTransport {
  const t = new ControllerTransport({ baseUrl, caPem: tlsA.caPem, connectJitterMs: 0, ...opts });
  open.push(t);
  return t;
}

async function rejection(p: Promise<unknown>): Promise<TransportError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TransportError);
    return err as TransportError;
  }
  throw new Error('expected the request to reject');
}

beforeAll(async () => {
  [tlsA, tlsB] = await Promise.all([makeLoopbackTls('evesim test A'), makeLoopbackTls('evesim test B')]);
  server = https.createServer({ key: tlsA.keyPem, cert: tlsA.certPem }, (rq, rs) => {
    const url = new URL(rq.url ?? '/', 'https://x');
    const chunks: Buffer[] = [];
    rq.on('data', (c: Buffer) => chunks.push(c));
    rq.on('end', () => {
      const p = url.pathname;
      if (p.startsWith('/status/')) {
        const code = Number(p.slice('/status/'.length));
        rs.writeHead(code, { 'x-evesim-test': 'yes', 'set-cookie': ['a=1', 'b=2'] });
        rs.end(code === 304 ? undefined : `status ${code}`);
      } else if (p === '/echo') {
        rs.writeHead(201, { 'content-type': 'application/x-proto-binary', 'x-got-type': String(rq.headers['content-type']) });
        rs.end(Buffer.concat(chunks));
      } else if (p === '/hang') {
        // never answers
      } else if (p === '/big') {
        rs.writeHead(200, { 'content-length': String(2 * 1024 * 1024) });
        rs.end(Buffer.alloc(2 * 1024 * 1024, 1));
      } else if (p === '/big-chunked') {
        rs.writeHead(200);
        for (let i = 0; i < 32; i++) rs.write(Buffer.alloc(64 * 1024, 2));
        rs.end();
      } else if (p === '/close') {
        rs.writeHead(200, { connection: 'close' });
        rs.end('bye');
      } else if (p === '/reset') {
        rq.socket.destroy();
      } else if (p === '/prefix/api/ok') {
        rs.writeHead(200);
        rs.end('prefixed');
      } else {
        rs.writeHead(404);
        rs.end('no route');
      }
    });
  });
  server.on('secureConnection', (s: TLSSocket) => {
    if (s.isSessionReused()) serverSockets.resumed++;
    else serverSockets.full++;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await Promise.all(open.map((t) => t.destroy()));
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('ControllerTransport', () => {
  it('passes any HTTP status through, with headers and body', async () => {
    const t = transport();
    for (const code of [200, 304, 404, 500, 503]) {
      const res = await t.request(req(`/status/${code}`));
      expect(res.status).toBe(code);
      expect(res.headers['x-evesim-test']).toBe('yes');
      expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
      expect(Buffer.from(res.body).toString()).toBe(code === 304 ? '' : `status ${code}`);
    }
    const unknown = await t.request(req('/nothing-here'));
    expect(unknown.status).toBe(404);
    expect(Buffer.from(unknown.body).toString()).toBe('no route');
  });

  it('sends the body and headers intact over reused keep-alive connections', async () => {
    const t = transport();
    const body = new Uint8Array(3000).map((_, i) => (i * 31) & 0xff);
    for (let i = 0; i < 5; i++) {
      const res = await t.request(
        req('/echo', { method: 'POST', body, headers: { 'content-type': 'application/x-proto-binary' } }),
      );
      expect(res.status).toBe(201);
      expect(res.headers['x-got-type']).toBe('application/x-proto-binary');
      expect(Buffer.compare(Buffer.from(res.body), Buffer.from(body))).toBe(0);
    }
    // undici frees a socket one event-loop turn after its response (pipelining 1), so a request
    // sent at once may open a second connection; after that both are reused.
    expect(t.stats().connected).toBeLessThanOrEqual(2);
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setImmediate(r));
      expect((await t.request(req('/status/200'))).status).toBe(200);
    }
    expect(t.stats().connected).toBeLessThanOrEqual(2);
  });

  it('keeps a path prefix of the base URL', async () => {
    const t = transport({ baseUrl: `${baseUrl}/prefix/` });
    const res = await t.request(req('/api/ok'));
    expect(res.status).toBe(200);
    expect(Buffer.from(res.body).toString()).toBe('prefixed');
  });

  it('fails TLS verification against the wrong CA, with no HTTP answer', async () => {
    const t = transport({ caPem: tlsB.caPem });
    const err = await rejection(t.request(req('/status/200')));
    expect(err.code).toMatch(/UNABLE_TO_VERIFY|SELF_SIGNED|CERT/);
    expect(err.message).toContain('device 7');
    expect(t.stats().failed).toBe(1);
  });

  it('fails TLS verification with no CA at all (system roots only)', async () => {
    const t = transport({ caPem: undefined });
    const err = await rejection(t.request(req('/status/200')));
    expect(err.code).toMatch(/UNABLE_TO_VERIFY|SELF_SIGNED|CERT/);
  });

  it('rejects a certificate for another name', async () => {
    const t = transport({ servername: 'controller.example' });
    const err = await rejection(t.request(req('/status/200')));
    expect(err.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('connects without verification when insecureSkipVerify is set', async () => {
    const t = transport({ caPem: tlsB.caPem, insecureSkipVerify: true });
    const res = await t.request(req('/status/200'));
    expect(res.status).toBe(200);
  });

  it('reports a refused connection as TransportError(ECONNREFUSED)', async () => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const t = transport({ baseUrl: `https://127.0.0.1:${port}` });
    const err = await rejection(t.request(req('/status/200')));
    expect(err.code).toBe('ECONNREFUSED');
  });

  it('times out a request that gets no answer, also one still queued behind it', async () => {
    const t = transport({ timeoutMs: 300, connections: 1 });
    const started = Date.now();
    const [a, b] = await Promise.all([rejection(t.request(req('/hang'))), rejection(t.request(req('/hang')))]);
    const took = Date.now() - started;
    expect(a.code).toBe('timeout');
    expect(b.code).toBe('timeout');
    expect(took).toBeGreaterThanOrEqual(290);
    // Ended by the timeout, not by the test's own 60 s limit (with room for a loaded machine).
    expect(took).toBeLessThan(20_000);
    // The transport survives: the next request gets its answer.
    const ok = await t.request(req('/status/200'));
    expect(ok.status).toBe(200);
  });

  it('caps the response body, with and without a content-length', async () => {
    const t = transport({ maxBodyBytes: 1024 * 1024 });
    expect((await rejection(t.request(req('/big')))).code).toBe('body-too-large');
    expect((await rejection(t.request(req('/big-chunked')))).code).toBe('body-too-large');
    expect((await t.request(req('/status/200'))).status).toBe(200);
    const roomy = transport({ maxBodyBytes: 4 * 1024 * 1024 });
    const big = await roomy.request(req('/big-chunked'));
    expect(big.body.byteLength).toBe(32 * 64 * 1024);
  });

  it('reports a connection the server drops mid-request as ECONNRESET', async () => {
    const t = transport();
    const err = await rejection(t.request(req('/reset')));
    expect(err.code).toBe('ECONNRESET');
  });

  it('resumes the TLS session when it reconnects', async () => {
    const t = transport();
    const before = { ...serverSockets };
    for (let i = 0; i < 4; i++) {
      const res = await t.request(req('/close'));
      expect(Buffer.from(res.body).toString()).toBe('bye');
    }
    const s = t.stats();
    expect(s.connected).toBe(4);
    expect(s.resumed).toBeGreaterThanOrEqual(3);
    expect(serverSockets.resumed - before.resumed).toBeGreaterThanOrEqual(3);
  });

  it('spreads a burst of new connections and caps concurrent handshakes', async () => {
    const t = transport({ connections: 8, connectJitterMs: 40, maxConcurrentConnects: 2 });
    const results = await Promise.all(Array.from({ length: 16 }, () => t.request(req('/status/200'))));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const s = t.stats();
    expect(s.connected).toBeGreaterThan(1);
    expect(s.connected).toBeLessThanOrEqual(8);
    expect(s.connectsPaced).toBe(s.connected - 1);
  });

  it('reports generator-side queueing and fails requests after destroy as closed', async () => {
    // The timeout only has to outlast the wait below: destroy() ends both requests.
    const t = transport({ connections: 1, timeoutMs: 50_000 });
    const slow = t.request(req('/hang')).catch((e: unknown) => e);
    const queued = t.request(req('/status/200')).catch((e: unknown) => e);
    // Wait until the first is on the connection and the second queued behind it, not a fixed 100 ms.
    const end = Date.now() + 30_000;
    while (!(t.stats().running === 1 && t.stats().queued === 1) && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    const s = t.stats();
    expect(s.running).toBe(1);
    expect(s.queued).toBe(1);
    await t.destroy();
    for (const e of [await slow, await queued]) {
      expect(e).toBeInstanceOf(TransportError);
      expect((e as TransportError).code).toBe('closed');
    }
    expect((await rejection(t.request(req('/status/200')))).code).toBe('closed');
  });

  it('also speaks plain http (LPS, embedded servers)', async () => {
    const plain = http.createServer((rq, rs) => {
      rq.resume();
      rq.on('end', () => {
        rs.writeHead(204);
        rs.end();
      });
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    try {
      const t = transport({ baseUrl: `http://127.0.0.1:${(plain.address() as AddressInfo).port}` });
      const res = await t.request(req('/api/v1/local_profile'));
      expect(res.status).toBe(204);
      expect(res.body.byteLength).toBe(0);
      await t.destroy();
    } finally {
      plain.closeAllConnections();
      await new Promise((r) => plain.close(r));
    }
  });

  it('surfaces a malformed request as a bug, not as a network failure', async () => {
    const t = transport();
    const err = await t.request(req('/status/200', { headers: { 'transfer-encoding': 'chunked' } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(TransportError);
    expect((err as Error).message).toMatch(/device 7, config\): request rejected by the HTTP client/);
  });

  it('refuses bad options with a clear message', () => {
    expect(() => new ControllerTransport({ baseUrl: 'ftp://x' })).toThrow(/https/);
    expect(() => new ControllerTransport({ baseUrl: 'not a url' })).toThrow(/not a URL/);
    expect(() => new ControllerTransport({ baseUrl, caPem: 'garbage' })).toThrow(/root CA #1 is not a PEM/);
    expect(() => new ControllerTransport({ baseUrl, timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});
