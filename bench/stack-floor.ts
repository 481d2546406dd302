// What one request costs the platform itself, layer by layer, before evesim's code does anything:
// the server's and the client's CPU per request over raw TCP, raw TLS, HTTP and HTTPS, with one
// request in flight (how a fleet's requests reach a controller: one per event-loop turn) and with
// many in flight (how controller-throughput drives it). It is the floor under every per-request
// figure of the other benchmarks.
//
//   npx tsc && node dist/bench/stack-floor.js [--concurrency 1,32] [--requests 10000] [--rounds 3] [--body 1024]
//
// The server runs in a child process and answers every request with a header-only 201, as Adam does
// for metrics and info; on raw TCP and TLS it frames requests itself (headers, content-length) and
// writes the same answer bytes node:http would. The client is undici's Pool over 16 kept-alive
// connections, one request per connection, as the generator's transport; it POSTs a body of --body
// bytes (a sealed metrics message is about 1 KiB) and reads the answer. Server CPU comes from the
// child's process.cpuUsage() (every thread) over the measured requests, client CPU from this
// process's. Each round runs every layer once, in a rotated order, after a warm-up that opens the
// connections (no handshake is counted); figures are medians over rounds. The baseline, measured in
// the same run, is raw TCP at the same concurrency.

import { fork, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { makeLoopbackTls } from '../src/transport/loopback-tls.js';
import { checkBenchArgs, positiveIntArg, stringArg } from './bench-args.js';
import { machineDescription } from './machine.js';
import { median } from './median.js';

const USAGE = `stack-floor: server and client CPU per request over raw TCP, TLS, HTTP and HTTPS: the platform's floor under every per-request figure.
  node dist/bench/stack-floor.js [--concurrency 1,32] [--requests 10000] [--rounds 3] [--body 1024]
  (--server: the child process it forks, not for running by hand)`;
checkBenchArgs(USAGE, ['concurrency=', 'requests=', 'rounds=', 'body=', 'server']);

const LAYERS = ['tcp', 'tls', 'http', 'https'] as const;
type Layer = (typeof LAYERS)[number];
const SECURE: Readonly<Record<Layer, boolean>> = { tcp: false, tls: true, http: false, https: true };
const LABEL: Readonly<Record<Layer, string>> = {
  tcp: 'raw TCP (request framing in JS)',
  tls: 'raw TLS (request framing in JS)',
  http: 'node:http',
  https: 'node:https',
};
const CONNECTIONS = 16;

interface ServerSetup {
  layer: Layer;
  key: string;
  cert: string;
}
type CpuSample = { user: number; system: number };

// ------------------------------------------------------------------------------------------------
// Child process: one server of one layer

// What node:http writes for `writeHead(201, { 'content-length': 0 }); end()` on a kept-alive
// connection (the Date header's length is fixed), so every layer sends the same bytes.
const ANSWER = Buffer.from(
  'HTTP/1.1 201 Created\r\ncontent-length: 0\r\nDate: Mon, 30 Nov 2026 14:00:00 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=120\r\n\r\n',
  'latin1',
);

/** Answers each complete request (headers plus content-length bytes of body) with ANSWER. */
function frameRequests(socket: Socket): void {
  socket.setNoDelay(true);
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      const end = pending.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = pending.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      const total = end + 4 + length;
      if (pending.length < total) return;
      pending = pending.subarray(total);
      socket.write(ANSWER);
    }
  });
  socket.on('error', () => socket.destroy());
}

function runServer(): void {
  process.once('message', (m: ServerSetup) => {
    const onRequest = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void => {
      req.on('data', () => {});
      req.on('end', () => {
        res.writeHead(201, { 'content-length': 0 });
        res.end();
      });
    };
    let server: NetServer | HttpServer;
    if (m.layer === 'tcp') server = createNetServer(frameRequests);
    else if (m.layer === 'tls') server = createTlsServer({ key: m.key, cert: m.cert }, frameRequests);
    else if (m.layer === 'http') server = createHttpServer({ keepAliveTimeout: 120_000 }, onRequest);
    else server = createHttpsServer({ key: m.key, cert: m.cert, keepAliveTimeout: 120_000 }, onRequest);
    server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
    process.on('message', (msg: unknown) => {
      if (msg === 'cpu') process.send!({ cpu: process.cpuUsage() });
    });
    process.once('disconnect', () => process.exit(0));
  });
}

// ------------------------------------------------------------------------------------------------
// Parent process: the measurement

interface Endpoint {
  layer: Layer;
  child: ChildProcess;
  pool: Pool;
}

async function startEndpoint(layer: Layer, tls: { keyPem: string; certPem: string; caPem: string }): Promise<Endpoint> {
  const child = fork(fileURLToPath(import.meta.url), ['--server'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`stack-floor: the ${layer} server exited early (code ${code})`)));
    child.send({ layer, key: tls.keyPem, cert: tls.certPem } satisfies ServerSetup);
  });
  const pool = new Pool(`${SECURE[layer] ? 'https' : 'http'}://127.0.0.1:${port}`, {
    connections: CONNECTIONS,
    pipelining: 1,
    keepAliveTimeout: 120_000,
    connect: SECURE[layer] ? { ca: tls.caPem, servername: 'localhost' } : {},
  });
  return { layer, child, pool };
}

function serverCpu(e: Endpoint): Promise<CpuSample> {
  return new Promise((resolve) => {
    const onMessage = (m: { cpu?: CpuSample }): void => {
      if (!m.cpu) return;
      e.child.off('message', onMessage);
      resolve(m.cpu);
    };
    e.child.on('message', onMessage);
    e.child.send('cpu');
  });
}

async function drive(e: Endpoint, body: Buffer, total: number, concurrency: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next++ < total) {
      const res = await e.pool.request({ path: '/api/v2/edgedevice/id/6ae3b91c-2f4d-4c8e-9b57-0d1e2f3a4b5c/metrics', method: 'POST', body });
      await res.body.arrayBuffer();
      if (res.statusCode !== 201) throw new Error(`stack-floor: ${e.layer} answered ${res.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

interface Figure {
  server: number;
  serverSystem: number;
  client: number;
  clientSystem: number;
}

async function measure(e: Endpoint, body: Buffer, total: number, concurrency: number): Promise<Figure> {
  const s0 = await serverCpu(e);
  const c0 = process.cpuUsage();
  await drive(e, body, total, concurrency);
  const c = process.cpuUsage(c0);
  const s1 = await serverCpu(e);
  const su = s1.user - s0.user;
  const ss = s1.system - s0.system;
  return { server: (su + ss) / total, serverSystem: ss / total, client: (c.user + c.system) / total, clientSystem: c.system / total };
}

const us = (x: number): string => `${x.toFixed(1)} µs`.padStart(9);

function concurrencies(): number[] {
  const text = stringArg('concurrency', '1,32');
  const list = text.split(',').map((s) => Number(s.trim()));
  if (list.some((n) => !Number.isInteger(n) || n < 1 || n > 1000)) {
    throw new Error(`stack-floor: --concurrency ${text}: expected a comma-separated list of whole numbers from 1 to 1000`);
  }
  return list;
}

async function main(): Promise<void> {
  const paces = concurrencies();
  const requests = positiveIntArg('requests', 10_000);
  const rounds = positiveIntArg('rounds', 3);
  const body = Buffer.alloc(positiveIntArg('body', 1024), 0x5a);
  const tls = await makeLoopbackTls('evesim stack-floor');
  const endpoints = await Promise.all(LAYERS.map((l) => startEndpoint(l, tls)));

  console.log(`machine   ${machineDescription()}`);
  console.log(`setup     ${requests} POSTs of ${body.length} bytes per layer, pace and round, ${rounds} rounds, ${CONNECTIONS} kept-alive connections, header-only 201 answers`);
  for (const e of endpoints) await drive(e, body, Math.min(2000, requests), CONNECTIONS); // warm-up: connections open, code hot

  for (const concurrency of paces) {
    const figs = new Map<Layer, Figure[]>(LAYERS.map((l) => [l, []]));
    for (let r = 0; r < rounds; r++) {
      // Rotate the order each round, so drift on a shared machine hits every layer alike.
      for (let k = 0; k < endpoints.length; k++) {
        const e = endpoints[(k + r) % endpoints.length]!;
        figs.get(e.layer)!.push(await measure(e, body, requests, concurrency));
      }
    }
    const med = (l: Layer, f: keyof Figure): number => median(figs.get(l)!.map((x) => x[f]));
    const base = med('tcp', 'server');
    console.log(`\n${concurrency === 1 ? 'one request in flight (a fleet\'s pace: one request per event-loop turn)' : `${concurrency} requests in flight`}`);
    console.log(`${'layer'.padEnd(34)}${'server CPU/req'.padStart(15)}${'of it kernel'.padStart(14)}${'× raw TCP'.padStart(11)}${'client CPU/req'.padStart(16)}${'of it kernel'.padStart(14)}`);
    for (const l of LAYERS) {
      console.log(
        `${LABEL[l].padEnd(34)}${us(med(l, 'server')).padStart(15)}${us(med(l, 'serverSystem')).padStart(14)}${`${(med(l, 'server') / base).toFixed(2)} ×`.padStart(11)}` +
          `${us(med(l, 'client')).padStart(16)}${us(med(l, 'clientSystem')).padStart(14)}`,
      );
    }
    const spread = (l: Layer): string => figs.get(l)!.map((x) => x.server.toFixed(1)).join(' / ');
    console.log(`server CPU per round (µs): ${LAYERS.map((l) => `${l} ${spread(l)}`).join('; ')}`);
  }
  console.log(`\nmachine   load average after the run: ${machineDescription().replace(/.*load average /, '')}`);
  for (const e of endpoints) {
    await e.pool.close();
    e.child.disconnect();
  }
}

if (process.argv.includes('--server')) runServer();
else
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
