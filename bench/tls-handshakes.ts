// What API v1's mutual TLS costs the generator: TLS handshakes per client CPU-second with and
// without session resumption, and the memory of one v1 device with its own idle connection.
//
//   npx tsc && node --expose-gc dist/bench/tls-handshakes.js [--handshakes 600] [--rounds 4] [--devices 1000]
//
// Part 1, handshakes: a client makes N TLS connections, 8 at a time, each closed as soon as its
// handshake is done, to a loopback TLS server in a child process (its CPU is not counted) that
// asks for a client certificate like the v1 port of the embedded controller. Four kinds, rounds
// alternating their order: full and resumed (session ticket of the previous handshake offered),
// each with a device client certificate (API v1) and without one (API v2). Client CPU is
// process.cpuUsage() (user + system) over the N handshakes; the reused share says how many
// resumed handshakes the server really accepted.
//
// Part 2, memory: D devices, each with its own key, self-signed EVE device certificate and
// PerDeviceTransport connection (one TLS SecureContext per device, one keep-alive socket), open
// one connection each with one request and then sit idle. Heap, external and RSS growth per device
// after GC, against the same process before the devices existed (their key objects and
// certificates excluded: identities exist with or without connections). The context alone is
// measured first (contexts built without connecting), so the socket's share shows too.

import { fork } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { createDeviceCertificate } from '../src/identity/eve-certificates.js';
import { makeLoopbackTls } from '../src/transport/loopback-tls.js';
import { PerDeviceTransport, type ClientIdentity } from '../src/transport/mtls-transport.js';
import { machineDescription } from './machine.js';
import { checkBenchArgs, hasArg, positiveIntArg } from './bench-args.js';

const USAGE = `tls-handshakes: what API v1's mutual TLS costs the generator: handshakes per CPU-second, memory per v1 device.
  node --expose-gc dist/bench/tls-handshakes.js [--handshakes 600] [--rounds 4] [--devices 1000]
  (--server: the child process it forks, not for running by hand)`;
checkBenchArgs(USAGE, ['handshakes=', 'rounds=', 'devices=', 'server']);

// ------------------------------------------------------------------------------------------------
// Child process: the loopback server (TLS for part 1, HTTPS for part 2), asking for client certs.

interface ServerSetup {
  key: string;
  cert: string;
}

async function runServer(): Promise<void> {
  const https = await import('node:https');
  process.once('message', (m: ServerSetup) => {
    const opts = { key: m.key, cert: m.cert, requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' as const };
    // Closes when the client does (so the session tickets it sends after the handshake arrive).
    const raw = tls.createServer(opts, (socket) => {
      socket.on('error', () => {});
      socket.on('end', () => socket.end());
      socket.resume();
    });
    const web = https.createServer({ ...opts, keepAliveTimeout: 600_000 }, (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-length': 0 }).end());
    });
    web.headersTimeout = 0;
    web.requestTimeout = 0;
    raw.listen(0, '127.0.0.1', () =>
      web.listen(0, '127.0.0.1', () =>
        process.send!({ tlsPort: (raw.address() as AddressInfo).port, httpsPort: (web.address() as AddressInfo).port }),
      ),
    );
    process.once('disconnect', () => process.exit(0));
  });
}

// ------------------------------------------------------------------------------------------------
// Parent process

interface Args {
  handshakes: number;
  rounds: number;
  devices: number;
}

function parseArgs(): Args {
  return { handshakes: positiveIntArg('handshakes', 600), rounds: positiveIntArg('rounds', 4), devices: positiveIntArg('devices', 1000) };
}

interface Kind {
  name: string;
  clientCert: boolean;
  resume: boolean;
}

const KINDS: Kind[] = [
  { name: 'v1 mTLS, full', clientCert: true, resume: false },
  { name: 'v1 mTLS, resumed', clientCert: true, resume: true },
  { name: 'v2 no client cert, full', clientCert: false, resume: false },
  { name: 'v2 no client cert, resumed', clientCert: false, resume: true },
];

const CONCURRENCY = 8;

/** N handshakes of one kind; client CPU µs per handshake and the share the server resumed. */
async function handshakes(port: number, ctx: tls.SecureContext, kind: Kind, n: number): Promise<{ cpuUs: number; reused: number }> {
  let session: Buffer | undefined;
  let reused = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const s = tls.connect({ host: '127.0.0.1', port, secureContext: ctx, rejectUnauthorized: true, session: kind.resume ? session : undefined });
      s.on('session', (t: Buffer) => {
        session = t;
        if (waitingForTicket) s.end();
      });
      let waitingForTicket = false;
      s.once('secureConnect', () => {
        if (s.isSessionReused()) reused++;
        // A TLS 1.3 ticket arrives just after the handshake: a resuming client without one yet
        // waits for it (afterwards it keeps offering the one it has, as tickets are reusable).
        if (kind.resume && session === undefined) waitingForTicket = true;
        else s.end();
      });
      s.resume();
      s.once('close', () => resolve());
      s.once('error', reject);
    });
  // Warm-up (and the first ticket).
  for (let i = 0; i < CONCURRENCY; i++) await one();
  reused = 0;
  const cpu0 = process.cpuUsage();
  let started = 0;
  const lane = async () => {
    while (started < n) {
      started++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: (cpu.user + cpu.system) / n, reused: reused / n };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

interface Device {
  id: ClientIdentity;
}

function makeDevices(n: number): Device[] {
  const out: Device[] = [];
  for (let i = 0; i < n; i++) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const cert = createDeviceCertificate(privateKey, publicKey, Date.now());
    out.push({ id: { deviceCertPem: cert.pem, deviceKey: privateKey, onboardCertPem: cert.pem, onboardKey: privateKey as KeyObject } });
  }
  return out;
}

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error('tls-handshakes: run with node --expose-gc (memory figures need a GC before each reading)');
  for (let i = 0; i < 3; i++) g();
}

interface Mem {
  heap: number;
  external: number;
  rss: number;
}

function mem(): Mem {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external, rss: m.rss };
}

function perDevice(after: Mem, before: Mem, n: number): { heapKiB: number; externalKiB: number; rssKiB: number } {
  const k = (v: number) => Math.round((v / n / 1024) * 10) / 10;
  return { heapKiB: k(after.heap - before.heap), externalKiB: k(after.external - before.external), rssKiB: k(after.rss - before.rss) };
}

async function main(): Promise<void> {
  const args = parseArgs();
  const material = await makeLoopbackTls('tls-handshakes bench');
  const child = fork(fileURLToPath(import.meta.url), ['--server'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ports = await new Promise<{ tlsPort: number; httpsPort: number }>((resolve) => {
    child.once('message', (m) => resolve(m as { tlsPort: number; httpsPort: number }));
    child.send({ key: material.keyPem, cert: material.certPem } satisfies ServerSetup);
  });

  console.log(`machine: ${machineDescription()} (at start; other jobs share the machine)`);

  // ---- part 1: handshakes per CPU-second ----
  const [dev] = makeDevices(1);
  const withCert = tls.createSecureContext({
    ca: material.caPem,
    minVersion: 'TLSv1.2',
    cert: dev!.id.deviceCertPem,
    key: dev!.id.deviceKey.export({ format: 'pem', type: 'pkcs8' }) as string,
  });
  const without = tls.createSecureContext({ ca: material.caPem, minVersion: 'TLSv1.2' });
  const results = new Map<string, { cpuUs: number[]; reused: number[] }>(KINDS.map((k) => [k.name, { cpuUs: [], reused: [] }]));
  for (let r = 0; r < args.rounds; r++) {
    const order = r % 2 === 0 ? KINDS : [...KINDS].reverse();
    for (const kind of order) {
      const res = await handshakes(ports.tlsPort, kind.clientCert ? withCert : without, kind, args.handshakes);
      results.get(kind.name)!.cpuUs.push(res.cpuUs);
      results.get(kind.name)!.reused.push(res.reused);
    }
  }
  console.log(`\nTLS handshakes, client side (TLS 1.3, ECDSA P-256; ${args.handshakes} per kind and round, ${CONCURRENCY} at a time, median of ${args.rounds} rounds):`);
  console.log('kind                          µs CPU/handshake  handshakes per CPU-second  resumed');
  for (const k of KINDS) {
    const r = results.get(k.name)!;
    const us = median(r.cpuUs);
    console.log(`${k.name.padEnd(30)}${us.toFixed(0).padStart(16)}${Math.round(1e6 / us).toString().padStart(27)}${`${Math.round(median(r.reused) * 100)}%`.padStart(9)}`);
  }

  // ---- part 2: memory per v1 device with its own idle connection ----
  const n = args.devices;
  const devices = makeDevices(n);
  const base = mem();
  // Contexts alone.
  const ctxs: tls.SecureContext[] = [];
  const t0 = performance.now();
  for (const d of devices) {
    ctxs.push(tls.createSecureContext({ ca: material.caPem, minVersion: 'TLSv1.2', cert: d.id.deviceCertPem, key: d.id.deviceKey.export({ format: 'pem', type: 'pkcs8' }) as string }));
  }
  const ctxMs = (performance.now() - t0) / n;
  const withContexts = mem();
  const contextCost = perDevice(withContexts, base, n);
  ctxs.length = 0;
  const base2 = mem();

  const transport = new PerDeviceTransport({
    baseUrl: `https://127.0.0.1:${ports.httpsPort}`,
    caPem: material.caPem,
    identityOf: (i) => devices[i]?.id,
    keepAliveTimeoutMs: 600_000,
    connectJitterMs: 0,
    maxConcurrentConnects: 32,
  });
  const c0 = performance.now();
  const cpu0 = process.cpuUsage();
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const res = await transport.request({ endpoint: 'ping', method: 'GET', path: '/api/v1/edgedevice/ping', headers: {}, dueAt: 0, deviceIndex: i, clientCert: 'device' });
      if (res.status !== 200) throw new Error(`device ${i}: ping answered ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, lane));
  const connectCpu = process.cpuUsage(cpu0);
  const connectWall = performance.now() - c0;
  await new Promise((r) => setTimeout(r, 500));
  const idle = mem();
  const st = transport.stats();
  if (st.sockets !== n) throw new Error(`expected ${n} open sockets, found ${st.sockets}`);
  const deviceCost = perDevice(idle, base2, n);
  console.log(`\nMemory per API v1 device with its own idle mutual-TLS connection (${n} devices, one PerDeviceTransport; after GC):`);
  console.log(`  TLS context alone (built ${ctxMs.toFixed(2)} ms each):  heap ${contextCost.heapKiB} KiB, external ${contextCost.externalKiB} KiB, RSS ${contextCost.rssKiB} KiB`);
  console.log(`  context + undici Client + idle TLS socket:  heap ${deviceCost.heapKiB} KiB, external ${deviceCost.externalKiB} KiB, RSS ${deviceCost.rssKiB} KiB`);
  console.log(`  connecting them: ${((connectCpu.user + connectCpu.system) / n / 1000).toFixed(2)} ms client CPU per device (context + full handshake + one request), ${(connectWall / 1000).toFixed(1)} s wall for ${n}`);
  console.log(`  so 10,000 such devices in one worker: about ${Math.round((deviceCost.rssKiB * 10_000) / 1024)} MiB RSS and 10,000 sockets (the server side holds another 10,000)`);
  console.log(`  sockets open: ${st.sockets}, contexts built: ${st.contextsCreated}, connects: ${st.connected}`);

  await transport.destroy();
  child.disconnect();
}

if (hasArg('server')) {
  void runServer();
} else {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
