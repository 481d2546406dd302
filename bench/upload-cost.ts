// CPU cost of one signed API v2 upload, measured against a baseline in the same run.
//
//   npx tsc && node dist/bench/upload-cost.js [--requests 5000] [--rounds 6] [--concurrency 32]
//
// ours:     sealRequest(~1 KiB ZMetricMsg payload) -> TimedTransport -> ControllerTransport (HTTPS)
// baseline: one ECDSA P-256 sign (ieee-p1363) of a body of the same size + a bare undici
//           Pool.request POST of that body, response body read
//
// Both talk to the same loopback HTTPS server, which runs in a child process (its CPU is not
// counted) and answers 201 with an empty body, as Adam does for /metrics. Client CPU is
// process.cpuUsage() (user + system) over N requests at a fixed concurrency, after a warm-up
// that also opens the connections, so TLS handshakes are not counted. Rounds alternate
// baseline/ours so drift on a shared machine hits both. Target: ours / baseline <= 1.5.

import { fork } from 'node:child_process';
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import type { TransportRequest } from '../src/device/ports.js';
import { sealRequest, type RequestSigner } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import { ControllerTransport } from '../src/transport/controller-transport.js';
import { makeLoopbackTls } from '../src/transport/loopback-tls.js';
import type { RequestObserver, RequestOutcome } from '../src/transport/request-observer.js';
import { TimedTransport } from '../src/transport/timed-transport.js';
import type { metrics } from '../src/gen/eve-types.js';
import { machineDescription } from './machine.js';
import { median } from './median.js';
import { checkBenchArgs, hasArg, positiveIntArg } from './bench-args.js';

const USAGE = `upload-cost: client CPU per signed API v2 upload, against a bare sign and undici POST in the same run.
  node dist/bench/upload-cost.js [--requests 5000] [--rounds 6] [--concurrency 32]
  (--server: the child process it forks, not for running by hand)`;
checkBenchArgs(USAGE, ['requests=', 'rounds=', 'concurrency=', 'server']);

const CONTENT_TYPE = 'application/x-proto-binary';
const DEVICE_UUID = '6ae3b91c-2f4d-4c8e-9b57-0d1e2f3a4b5c';
const PATH = `/api/v2/edgedevice/id/${DEVICE_UUID}/metrics`;

// ------------------------------------------------------------------------------------------------
// Child process: the loopback server

interface ServerSetup {
  key: string;
  cert: string;
}

function runServer(): void {
  process.once('message', (m: ServerSetup) => {
    const server = https.createServer({ key: m.key, cert: m.cert, keepAliveTimeout: 60_000 }, (req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(201);
        res.end();
      });
    });
    server.listen(0, '127.0.0.1', () => {
      process.send!({ port: (server.address() as AddressInfo).port });
    });
    process.once('disconnect', () => process.exit(0));
  });
}

// ------------------------------------------------------------------------------------------------
// Parent process: the measurement

interface Args {
  requests: number;
  rounds: number;
  concurrency: number;
}

function parseArgs(): Args {
  return { requests: positiveIntArg('requests', 5000), rounds: positiveIntArg('rounds', 6), concurrency: positiveIntArg('concurrency', 32) };
}

/** A ZMetricMsg shaped like a small EVE device's periodic metrics (~1 KiB encoded). */
function metricsPayload(seq: number): metrics.ZMetricMsg {
  const ts = (s: number) => ({ seconds: 1_779_268_000 + s, nanos: 123_000_000 });
  const nets = ['eth0', 'eth1', 'wwan0', 'bn1'].map((n, i) => ({
    iName: n,
    txBytes: 91_000_000 + i * 1_234_567 + seq,
    rxBytes: 420_000_000 + i * 7_654_321 + seq,
    txPkts: 810_000 + i * 999,
    rxPkts: 2_100_000 + i * 777,
    txDrops: i,
    rxDrops: 3 * i,
    localName: n,
  }));
  const disks = [
    ['/dev/sda1', '/persist'],
    ['/dev/sda2', '/config'],
    ['/dev/sda3', '/'],
  ].map(([disk, mountPath], i) => ({
    disk,
    mountPath,
    readBytes: 7_000_000 + i * 100_000,
    writeBytes: 3_000_000 + i * 50_000 + seq,
    readCount: 9_000 + i,
    writeCount: 4_000 + i,
    total: 64_000 + i * 1000,
    used: 21_000 + i * 333,
    free: 43_000 - i * 333,
  }));
  return {
    devID: DEVICE_UUID,
    atTimeStamp: ts(seq),
    dm: {
      memory: { usedMem: 1_834, availMem: 6_121, usedPercentage: 23.05, availPercentage: 76.95 },
      cpuMetric: { upTime: ts(-86_400), total: 123_456, systemTotal: 23_456 },
      network: nets,
      disk: disks,
      zedcloud: [
        {
          ifName: 'eth0',
          success: 10_000 + seq,
          failures: 3,
          lastSuccess: ts(seq),
          lastFailure: ts(-3600),
          urlMetrics: ['config', 'metrics', 'info', 'newlogs'].map((u, i) => ({
            url: `https://controller.example.com:443/api/v2/edgedevice/id/${DEVICE_UUID}/${u}`,
            tryMsgCount: 5_000 + i,
            tryByteCount: 9_000_000 + i,
            sentMsgCount: 4_990 + i,
            sentByteCount: 8_990_000 + i,
            recvMsgCount: 4_990 + i,
            recvByteCount: 1_200_000 + i,
            total_time_spent: 321_000 + i,
          })),
        },
      ],
      runtimeStorageOverheadMB: 412,
      appRunTimeStorageMB: 1_024,
    },
  };
}

interface Round {
  cpuUsPerRequest: number;
  requestsPerSecond: number;
}

/** Runs `total` calls of `one` with `concurrency` in flight; returns client CPU and rate. */
async function measure(total: number, concurrency: number, one: (i: number) => Promise<void>): Promise<Round> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) await one(next++);
  };
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallNs = Number(process.hrtime.bigint() - t0);
  const cpu = process.cpuUsage(cpu0);
  return { cpuUsPerRequest: (cpu.user + cpu.system) / total, requestsPerSecond: total / (wallNs / 1e9) };
}

/** µs per call of a synchronous function, for the breakdown. */
function microBench(n: number, fn: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(n, 500); i++) fn(i);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn(i);
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / n;
}

const fmt = (x: number): string => x.toFixed(1).padStart(7);

async function main(): Promise<void> {
  const args = parseArgs();
  const tls = await makeLoopbackTls('evesim upload-cost');
  const child = fork(fileURLToPath(import.meta.url), ['--server'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`upload-cost: server process exited early (code ${code})`)));
    child.send({ key: tls.keyPem, cert: tls.certPem } satisfies ServerSetup);
  });
  const origin = `https://127.0.0.1:${port}`;

  // Device identity: key object made once, certificate hash precomputed (as a device keeps them).
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signer: RequestSigner = { key: privateKey as KeyObject, certDerHash: randomBytes(32) };

  const payload = Msg.ZMetricMsg.encode(metricsPayload(0));
  const sealedSize = sealRequest(payload, signer).byteLength;

  // ours
  let observed = 0;
  const observer: RequestObserver = { onOutcome: (o: RequestOutcome) => void (observed += o.status === 201 ? 1 : 0) };
  const controller = new ControllerTransport({
    baseUrl: origin,
    caPem: tls.caPem,
    connections: args.concurrency,
    connectJitterMs: 0,
  });
  const timed = new TimedTransport(controller, { now: () => performance.now() }, [observer]);
  const headers = { 'content-type': CONTENT_TYPE, 'x-request-id': '00000000-0000-4000-8000-000000000000' };
  const ours = async (): Promise<void> => {
    const req: TransportRequest = {
      endpoint: 'metrics',
      method: 'POST',
      path: PATH,
      headers,
      body: sealRequest(payload, signer),
      dueAt: performance.now(),
      deviceIndex: 0,
    };
    const res = await timed.request(req);
    if (res.status !== 201) throw new Error(`ours: status ${res.status}`);
  };

  // baseline
  const pool = new Pool(origin, { connections: args.concurrency, pipelining: 1, connect: { ca: tls.caPem } });
  const body = randomBytes(sealedSize);
  const baseline = async (): Promise<void> => {
    sign('sha256', body, { key: signer.key, dsaEncoding: 'ieee-p1363' });
    const res = await pool.request({ path: PATH, method: 'POST', headers, body });
    await res.body.arrayBuffer();
    if (res.statusCode !== 201) throw new Error(`baseline: status ${res.statusCode}`);
  };

  // The same two paths without any signing: where the transport itself stands.
  const sealed = sealRequest(payload, signer);
  const oursTransportOnly = async (): Promise<void> => {
    const res = await timed.request({ endpoint: 'metrics', method: 'POST', path: PATH, headers, body: sealed, dueAt: performance.now(), deviceIndex: 0 });
    if (res.status !== 201) throw new Error(`ours: status ${res.status}`);
  };
  const baselineTransportOnly = async (): Promise<void> => {
    const res = await pool.request({ path: PATH, method: 'POST', headers, body });
    await res.body.arrayBuffer();
    if (res.statusCode !== 201) throw new Error(`baseline: status ${res.statusCode}`);
  };

  // Warm-up: JIT, and every connection opened (handshakes are not what this measures).
  const warm = Math.max(1000, args.concurrency * 20);
  await measure(warm, args.concurrency, baseline);
  await measure(warm, args.concurrency, ours);
  await measure(warm, args.concurrency, baselineTransportOnly);
  await measure(warm, args.concurrency, oursTransportOnly);

  const base: Round[] = [];
  const our: Round[] = [];
  const baseT: Round[] = [];
  const ourT: Round[] = [];
  for (let r = 0; r < args.rounds; r++) {
    // Alternate which side goes first, so neither always runs on a warmer or quieter machine.
    const pairs: Array<[Round[], () => Promise<void>]> =
      r % 2 === 0
        ? [[base, baseline], [our, ours], [baseT, baselineTransportOnly], [ourT, oursTransportOnly]]
        : [[our, ours], [base, baseline], [ourT, oursTransportOnly], [baseT, baselineTransportOnly]];
    for (const [into, fn] of pairs) into.push(await measure(args.requests, args.concurrency, fn));
  }
  if (observed !== 2 * (warm + args.requests * args.rounds)) throw new Error(`observer saw ${observed} outcomes`);

  // Breakdown of the work that is not the HTTP exchange itself.
  const tSign = microBench(5000, () => sign('sha256', body, { key: signer.key, dsaEncoding: 'ieee-p1363' }));
  const tSeal = microBench(5000, () => sealRequest(payload, signer));
  const metricMsg = metricsPayload(1);
  const tEncode = microBench(5000, () => Msg.ZMetricMsg.encode(metricMsg));
  const stats = controller.stats();

  console.log('evesim upload-cost: client CPU per signed v2 upload (HTTPS, loopback, server in a child process)');
  console.log(`machine   ${machineDescription()}`);
  console.log(
    `setup     ${args.rounds} rounds x ${args.requests} requests each side, concurrency ${args.concurrency}, ` +
      `payload ZMetricMsg ${payload.byteLength} B, sealed AuthContainer ${sealedSize} B`,
  );
  console.log('');
  console.log('round   baseline us/req   ours us/req    ratio   baseline req/s   ours req/s');
  for (let r = 0; r < args.rounds; r++) {
    console.log(
      `${String(r + 1).padStart(5)}   ${fmt(base[r]!.cpuUsPerRequest)}          ${fmt(our[r]!.cpuUsPerRequest)}     ` +
        `${(our[r]!.cpuUsPerRequest / base[r]!.cpuUsPerRequest).toFixed(2).padStart(5)}   ` +
        `${fmt(base[r]!.requestsPerSecond)}          ${fmt(our[r]!.requestsPerSecond)}`,
    );
  }
  const mb = median(base.map((x) => x.cpuUsPerRequest));
  const mo = median(our.map((x) => x.cpuUsPerRequest));
  const ratio = mo / mb;
  console.log('');
  console.log(`median    baseline ${mb.toFixed(1)} us CPU/request   ours ${mo.toFixed(1)} us CPU/request   ratio ${ratio.toFixed(2)} (target <= 1.5: ${ratio <= 1.5 ? 'met' : 'NOT met'})`);
  const mbT = median(baseT.map((x) => x.cpuUsPerRequest));
  const moT = median(ourT.map((x) => x.cpuUsPerRequest));
  console.log(`no sign   baseline (Pool.request) ${mbT.toFixed(1)} us CPU/request   ours (TimedTransport + ControllerTransport) ${moT.toFixed(1)} us CPU/request   ratio ${(moT / mbT).toFixed(2)}`);
  console.log(
    `parts     ECDSA sign ${tSign.toFixed(1)} us; sealRequest (sign + envelope encode) ${tSeal.toFixed(1)} us; ` +
      `ZMetricMsg encode ${tEncode.toFixed(1)} us (device work, in neither figure)`,
  );
  console.log(
    `transport ${stats.connected} connections opened (${stats.resumed} resumed), ${stats.failed} failed; baseline: bare undici Pool.request, body read with arrayBuffer()`,
  );

  await Promise.all([controller.close(), pool.close()]);
  child.disconnect();
}

if (hasArg('server')) {
  runServer();
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
