// Controller CPU per verified-and-signed API v2 request, measured against a floor in the same run.
//
//   npx tsc && node dist/bench/controller-throughput.js [--devices 300] [--requests 4000] [--rounds 3]
//        [--concurrency 32] [--connections 16] [--newlogs-lines 60] [--sink-sample 0.01] [--cpu-prof DIR]
//
// The embedded controller runs in a child process of its own (bench/throughput-servers.ts) with N
// pre-onboarded devices (registered through the fleet, attested). This process sends it the
// devices' signed requests over loopback HTTPS through one keep-alive undici Pool; every body is
// sealed before the clock starts, so the client does little. The figure is the controller
// process's CPU (user + system, process.cpuUsage over IPC) per request, and 1e6 / that, the
// requests/s one controller core would answer. Kinds: config poll with the current hash (304),
// config poll with a stale hash (200 + the whole signed config), attest NONCE (201 + a freshly
// signed nonce), info (ZiDevice), metrics, newlogs (a gzip file of device log lines).
//
// Baselines in the same run: the floor, a bare node:https server in a child process answering a
// fixed body over the same client and TLS (what any HTTPS server on Node costs per request); the
// same server doing one ECDSA P-256 verify + one sign per request in its handler (the cheapest
// verified, signed answer: the target the controller is held to); and one verify + one sign in
// this process alone (the crypto's own cost).
// With --sink-sample the same kinds are sent to a second controller in --sink mode.
// With --cpu-prof DIR the controller runs under `node --cpu-prof` and the bench prints where its
// time went (self time by function and by source file).

import { fork, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { attest, info, type metrics } from '../src/gen/eve-types.js';
import { createDeviceIdentity, type DeviceIdentityMaterial } from '../src/identity/device-identity.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import { buildDeviceInfo } from '../src/device/telemetry/info-builders.js';
import { sealRequest } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import { encodeNewlogLine, writeNewlogsFile } from '../src/protocol/newlogs.js';
import { checkBenchArgs, positiveIntArg, stringArg } from './bench-args.js';
import { summarizeCpuProfile } from './cpu-profile-summary.js';
import { machineDescription } from './machine.js';
import type { ServerCommand, ServerReady, ServerSetup } from './throughput-servers.js';

const USAGE = `controller-throughput: controller CPU per verified-and-signed API v2 request, against a bare HTTPS floor in the same run.
  node dist/bench/controller-throughput.js [--devices 300] [--requests 4000] [--rounds 3]
       [--concurrency 32] [--connections 16] [--newlogs-lines 60] [--sink-sample 0.01] [--cpu-prof DIR]`;
checkBenchArgs(USAGE, ['devices=', 'requests=', 'rounds=', 'concurrency=', 'connections=', 'newlogs-lines=', 'cpu-prof=', 'sink-sample=']);

const P = '/api/v2/edgedevice';
const NOW = Date.UTC(2026, 10, 20);
const TOKEN = Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 0xff);

interface ChildServer {
  child: ChildProcess;
  ready: Extract<ServerReady, { type: 'ready' }>;
  cpuUs(): Promise<number>;
  stats(): Promise<unknown>;
  stop(): Promise<void>;
}

async function startChild(setup: ServerSetup, execArgv: string[] = []): Promise<ChildServer> {
  const child = fork(fileURLToPath(new URL('./throughput-servers.js', import.meta.url)), [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = <T extends ServerReady['type']>(type: T): Promise<Extract<ServerReady, { type: T }>> =>
    new Promise((resolve, reject) => {
      const onMsg = (m: ServerReady) => {
        if (m.type !== type) return;
        child.off('message', onMsg);
        child.off('exit', onExit);
        resolve(m as Extract<ServerReady, { type: T }>);
      };
      const onExit = (code: number) => reject(new Error(`${setup.kind} server exited with code ${code}`));
      child.on('message', onMsg);
      child.once('exit', onExit);
    });
  const send = (m: ServerCommand | ServerSetup) => child.send(m);
  const readyP = next('ready');
  send(setup);
  const ready = await readyP;
  return {
    child,
    ready,
    cpuUs: async () => {
      const p = next('cpu');
      send({ type: 'cpu' });
      const c = await p;
      return c.user + c.system;
    },
    stats: async () => {
      const p = next('stats');
      send({ type: 'stats' });
      return (await p).stats;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        send({ type: 'exit' });
      }),
  };
}

// ------------------------------------------------------------------------------------------------
// Request bodies, sealed before any measurement

interface Kind {
  name: string;
  /** Expected status (anything else is counted as an error and reported). */
  status: number;
  requests: { path: string; body: Uint8Array }[];
}

function metricsPayload(devID: string, seq: number): metrics.ZMetricMsg {
  const ts = (s: number) => ({ seconds: 1_779_268_000 + s, nanos: 0 });
  return {
    devID,
    atTimeStamp: ts(seq),
    dm: {
      memory: { usedMem: 1_834, availMem: 6_121, usedPercentage: 23.05, availPercentage: 76.95 },
      cpuMetric: { upTime: ts(-86_400), total: 123_456 + seq, systemTotal: 23_456 },
      network: ['eth0', 'eth1', 'wwan0'].map((n, i) => ({ iName: n, txBytes: 91_000_000 + i + seq, rxBytes: 420_000_000 + i, txPkts: 810_000, rxPkts: 2_100_000, localName: n })),
      disk: [{ disk: 'sda', mountPath: '/persist', readBytes: 12_000 + seq, writeBytes: 34_000, readCount: 90, writeCount: 120, total: 65_536, used: 4_096, free: 61_440 }],
      runtimeStorageOverheadMB: 412,
      appRunTimeStorageMB: 1_024,
    },
  } as metrics.ZMetricMsg;
}

function buildKinds(devs: DeviceIdentityMaterial[], uuids: string[], hashes: string[], newlogsLines: number): Kind[] {
  const seal = (d: DeviceIdentityMaterial, payload: Uint8Array) => sealRequest(payload, { key: d.deviceKey, certDerHash: d.deviceCertHash });
  const per = (fn: (d: DeviceIdentityMaterial, i: number) => { path: string; body: Uint8Array }) => devs.map(fn);
  const configReq = (hash: string) => new Uint8Array(Msg.ConfigRequest.encode({ configHash: hash, integrity_token: new Uint8Array(TOKEN) }));
  return [
    {
      name: 'config, unchanged (304)',
      status: 304,
      requests: per((d, i) => ({ path: `${P}/id/${uuids[i]}/config`, body: seal(d, configReq(hashes[i]!)) })),
    },
    {
      name: 'config, changed (200 + config)',
      status: 200,
      requests: per((d, i) => ({ path: `${P}/id/${uuids[i]}/config`, body: seal(d, configReq('stale-hash')) })),
    },
    {
      name: 'attest nonce (201 + signed nonce)',
      status: 201,
      requests: per((d, i) => ({ path: `${P}/id/${uuids[i]}/attest`, body: seal(d, Msg.ZAttestReq.encode({ reqType: attest.ZAttestReqType.ATTEST_REQ_NONCE })) })),
    },
    {
      name: 'info (ZiDevice)',
      status: 201,
      requests: per((d, i) => {
        const msg = buildDeviceInfo(
          {
            devId: uuids[i]!,
            deviceIndex: i,
            serial: d.serial,
            behaviour: { eveVersion: '13.4.0', hardware: { ncpu: 4, memoryMB: 8192, storageMB: 65536, model: 'evesim-device', manufacturer: 'evesim' } },
            hasTpm: false,
            bootTime: NOW - 3_600_000,
            restartCounter: 0,
            rebootConfigCounter: 0,
            shutdownConfigCounter: 0,
            attestationState: info.AttestationState.ATTESTATION_STATE_COMPLETE,
          },
          NOW,
        );
        return { path: `${P}/id/${uuids[i]}/info`, body: seal(d, Msg.ZInfoMsg.encode(msg)) };
      }),
    },
    {
      name: 'metrics',
      status: 201,
      requests: per((d, i) => ({ path: `${P}/id/${uuids[i]}/metrics`, body: seal(d, Msg.ZMetricMsg.encode(metricsPayload(uuids[i]!, i))) })),
    },
    {
      name: `newlogs (${newlogsLines} lines)`,
      status: 201,
      requests: per((d, i) => {
        const lines = Array.from({ length: newlogsLines }, (_, k) =>
          encodeNewlogLine({
            severity: 'info',
            source: 'zedagent',
            content: `{"file":"/pillar/cmd/zedagent/handlemetrics.go:${100 + k}","func":"publishMetrics","level":"info","msg":"metrics sent, ${k} of ${newlogsLines}"}`,
            msgid: k + 1,
            timestamp: { seconds: NOW / 1000 + k, nanos: 0 },
            filename: '/pillar/cmd/zedagent/handlemetrics.go',
            function: 'publishMetrics',
          }),
        );
        const file = writeNewlogsFile({ kind: 'device', meta: { devID: uuids[i]!, image: 'IMGA', eveVersion: '13.4.0' } }, lines, NOW / 1000);
        return { path: `${P}/id/${uuids[i]}/newlogs`, body: seal(d, file) };
      }),
    },
  ];
}

// ------------------------------------------------------------------------------------------------
// Measurement

interface Figure {
  cpuUs: number;
  wallMs: number;
  errors: number;
}

async function drive(pool: Pool, server: ChildServer, reqs: { path: string; body: Uint8Array }[], total: number, concurrency: number, status: number): Promise<Figure> {
  let next = 0;
  let errors = 0;
  const one = async (): Promise<void> => {
    while (next < total) {
      const r = reqs[next++ % reqs.length]!;
      const res = await pool.request({ method: 'POST', path: r.path, body: r.body, headers: { 'content-type': 'application/x-proto-binary' } });
      await res.body.arrayBuffer();
      if (res.statusCode !== status) errors++;
    }
  };
  const cpu0 = await server.cpuUs();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, one));
  const wallMs = performance.now() - t0;
  const cpu1 = await server.cpuUs();
  // The two IPC round trips are a few µs of the server's CPU, negligible against thousands of requests.
  return { cpuUs: (cpu1 - cpu0) / total, wallMs, errors };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function cryptoCosts(n: number): { verifyUs: number; signUs: number } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const payload = Buffer.alloc(1024, 7);
  const sig = sign('sha256', payload, { key: privateKey, dsaEncoding: 'ieee-p1363' });
  const time = (fn: () => void) => {
    const c0 = process.cpuUsage();
    for (let i = 0; i < n; i++) fn();
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / n;
  };
  const signUs = time(() => sign('sha256', payload, { key: privateKey, dsaEncoding: 'ieee-p1363' }));
  const verifyUs = time(() => verify('sha256', payload, { key: publicKey, dsaEncoding: 'ieee-p1363' }, sig));
  return { verifyUs, signUs };
}

async function main(): Promise<void> {
  const devices = positiveIntArg('devices', 300);
  const requests = positiveIntArg('requests', 4000);
  const rounds = positiveIntArg('rounds', 3);
  const concurrency = positiveIntArg('concurrency', 32);
  const connections = positiveIntArg('connections', 16);
  const newlogsLines = positiveIntArg('newlogs-lines', 60);
  const profDir = stringArg('cpu-prof', '');
  const sinkSampleRaw = stringArg('sink-sample', '');
  const sinkSample = sinkSampleRaw === '' ? undefined : Number(sinkSampleRaw);
  if (sinkSample !== undefined && !(sinkSample >= 0 && sinkSample <= 1)) throw new Error(`--sink-sample needs a share 0..1, got ${sinkSampleRaw}`);

  console.log(`machine   ${machineDescription()}`);
  console.log(`setup     ${devices} devices, ${requests} requests per kind and round, ${rounds} rounds, concurrency ${concurrency} over ${connections} keep-alive connections`);
  const dir = mkdtempSync(join(tmpdir(), 'evesim-ctl-bench-'));
  const ca = createFleetCa('ctl-bench', NOW);
  const t0 = performance.now();
  const devs = Array.from({ length: devices }, (_, i) => createDeviceIdentity(ca, 'ctl-bench', i, NOW).identity);
  console.log(`identities ${devices} made in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const deviceList = devs.map((d) => ({ serial: d.serial, certPem: d.deviceCertPem }));

  const execArgv = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  if (profDir) mkdirSync(profDir, { recursive: true });
  const controller = await startChild({ kind: 'controller', stateDir: join(dir, 'pki'), devices: deviceList, integrityToken: TOKEN }, execArgv);
  const floor = await startChild({ kind: 'floor', stateDir: join(dir, 'pki'), body: 0 });
  const floorCrypto = await startChild({ kind: 'floor', stateDir: join(dir, 'pki'), body: 0, crypto: true });
  const sink =
    sinkSample !== undefined
      ? await startChild({ kind: 'controller', stateDir: join(dir, 'pki'), devices: deviceList, integrityToken: TOKEN, sink: { verifySample: sinkSample } })
      : undefined;
  const kinds = buildKinds(devs, controller.ready.uuids, controller.ready.configHashes, newlogsLines);
  const sinkKinds = sink ? buildKinds(devs, sink.ready.uuids, sink.ready.configHashes, newlogsLines) : [];
  const pool = (s: ChildServer) => new Pool(s.ready.url, { connections, pipelining: 1, connect: { ca: s.ready.rootCaPem }, keepAliveTimeout: 120_000 });
  const pools = { controller: pool(controller), floor: pool(floor), floorCrypto: pool(floorCrypto), sink: sink ? pool(sink) : undefined };

  // Warm-up: opens every connection, compiles the hot paths.
  const floorReqs = kinds.find((k) => k.name.startsWith('info'))!.requests; // info-sized bodies, answered 200 with an empty body
  await drive(pools.floor, floor, floorReqs, 2000, concurrency, 200);
  await drive(pools.floorCrypto, floorCrypto, floorReqs, 1000, concurrency, 200);
  for (const k of kinds) await drive(pools.controller, controller, k.requests, Math.min(1000, requests), concurrency, k.status);
  if (sink) for (const k of sinkKinds) await drive(pools.sink!, sink, k.requests, Math.min(1000, requests), concurrency, k.status);

  const floorFig: Figure[] = [];
  const floorCryptoFig: Figure[] = [];
  const figs = kinds.map(() => [] as Figure[]);
  const sinkFigs = sinkKinds.map(() => [] as Figure[]);
  for (let r = 0; r < rounds; r++) {
    floorFig.push(await drive(pools.floor, floor, floorReqs, requests, concurrency, 200));
    floorCryptoFig.push(await drive(pools.floorCrypto, floorCrypto, floorReqs, requests, concurrency, 200));
    for (let i = 0; i < kinds.length; i++) figs[i]!.push(await drive(pools.controller, controller, kinds[i]!.requests, requests, concurrency, kinds[i]!.status));
    for (let i = 0; i < sinkKinds.length; i++) sinkFigs[i]!.push(await drive(pools.sink!, sink!, sinkKinds[i]!.requests, requests, concurrency, sinkKinds[i]!.status));
  }
  const crypto = cryptoCosts(2000);
  console.log(`machine   load average after the run: ${machineDescription().split('load average ')[1]}`);

  const floorUs = median(floorFig.map((f) => f.cpuUs));
  const row = (name: string, fs: Figure[]) => {
    const us = median(fs.map((f) => f.cpuUs));
    const errors = fs.reduce((a, f) => a + f.errors, 0);
    const wallRate = median(fs.map((f) => (requests / f.wallMs) * 1000));
    console.log(
      `${name.padEnd(34)} ${us.toFixed(1).padStart(8)} µs ${Math.round(1e6 / us).toString().padStart(7)} /s   ${(us / floorUs).toFixed(2).padStart(5)} × floor   ` +
        `${(us - floorUs).toFixed(1).padStart(7)} µs beyond   wall ${Math.round(wallRate)}/s${errors ? `   ${errors} UNEXPECTED STATUSES` : ''}`,
    );
  };
  console.log('');
  console.log(`${'request kind'.padEnd(34)} ${'controller CPU/req'.padStart(11)} ${'req/s/core'.padStart(10)}   ratio         beyond the floor`);
  row('floor: bare node:https, fixed body', floorFig);
  row('floor + 1 verify + 1 sign in handler', floorCryptoFig);
  kinds.forEach((k, i) => row(k.name, figs[i]!));
  if (sink) {
    console.log(`sink (--sink, verify sample ${(sinkSample! * 100).toFixed(1)} %):`);
    sinkKinds.forEach((k, i) => row(`  ${k.name}`, sinkFigs[i]!));
  }
  console.log('');
  console.log(`crypto    one ECDSA P-256 verify ${crypto.verifyUs.toFixed(1)} µs + one sign ${crypto.signUs.toFixed(1)} µs = ${(crypto.verifyUs + crypto.signUs).toFixed(1)} µs (1 KiB payload, this process)`);
  const st = (await controller.stats()) as { requests: number; byStatus: Record<string, number> };
  console.log(`controller answered ${st.requests} requests: ${JSON.stringify(st.byStatus)}`);

  await Promise.all([pools.controller.close(), pools.floor.close(), pools.floorCrypto.close(), pools.sink?.close()]);
  await Promise.all([controller.stop(), floor.stop(), floorCrypto.stop(), sink?.stop()]);
  rmSync(dir, { recursive: true, force: true });
  if (profDir) {
    const file = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')).sort().at(-1);
    if (file) {
      console.log('');
      console.log(`profile   ${join(profDir, file)} (controller process, warm-up included)`);
      for (const line of summarizeCpuProfile(join(profDir, file), 25)) console.log(line);
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
