// The servers controller-throughput measures, each in a child process of its own so its CPU is
// its own (process.cpuUsage over IPC): the embedded controller with N pre-onboarded devices, or the
// floor, a bare node:https server answering a fixed body with the same TLS certificate.
//
//   child: node dist/bench/throughput-servers.js   (forked by controller-throughput; IPC only)

import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createControllerServer } from '../src/servers/controller/controller-server.js';
import { loadOrCreateControllerPki } from '../src/identity/controller-pki.js';
import type { GroupSpec } from '../src/scenario/scenario-types.js';
import { DEFAULT_GROUP } from '../src/servers/controller/fleet-spec.js';

/** A well-formed r‖s signature that does not verify: the verify does its full work and says no. */
const FIXED_SIGNATURE = Buffer.alloc(64, 0x11);

export type ServerSetup =
  | { kind: 'controller'; stateDir: string; devices: { serial: string; certPem: string }[]; integrityToken: number[]; sink?: { verifySample: number } }
  | { kind: 'floor'; stateDir: string; body: number; crypto?: boolean };

export type ServerReady =
  | { type: 'ready'; url: string; rootCaPem: string; uuids: string[]; configHashes: string[] }
  | { type: 'cpu'; user: number; system: number }
  | { type: 'stats'; stats: unknown };

export type ServerCommand = { type: 'cpu' } | { type: 'stats' } | { type: 'exit' };

/** A group shaped like steady-state.yaml's: two apps, a few config items. */
export const BENCH_GROUP: GroupSpec = {
  ...DEFAULT_GROUP,
  name: 'bench',
  eveVersion: '13.4.0',
  apps: [
    { name: 'nginx-gateway', activate: true, profiles: [], logLinesPerSec: 0, flowsPerMessage: 0 },
    { name: 'modbus-collector', activate: true, profiles: ['lab'], logLinesPerSec: 0, flowsPerMessage: 0 },
  ],
  configItems: { 'timer.config.interval': '60', 'timer.metric.interval': '60' },
} as GroupSpec;

async function start(setup: ServerSetup): Promise<Extract<ServerReady, { type: 'ready' }>> {
  if (setup.kind === 'floor') {
    const pki = loadOrCreateControllerPki(setup.stateDir);
    const body = Buffer.alloc(setup.body, 0x2a);
    // With crypto: the least a verified and signed answer needs, one P-256 verify of the request
    // body (against a fixed signature) and one sign, in the handler.
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const server = createHttpsServer({ key: pki.tls.keyPem, cert: pki.tls.certPem, minVersion: 'TLSv1.2', keepAliveTimeout: 120_000 }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (setup.crypto) {
          const got = Buffer.concat(chunks);
          verify('sha256', got, { key: publicKey, dsaEncoding: 'ieee-p1363' }, FIXED_SIGNATURE);
          sign('sha256', got, { key: privateKey, dsaEncoding: 'ieee-p1363' });
        }
        res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/x-proto-binary' });
        res.end(body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { type: 'ready', url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, rootCaPem: pki.root.certPem, uuids: [], configHashes: [] };
  }
  const server = await createControllerServer({
    stateDir: setup.stateDir,
    apiV1: false,
    fleet: { groups: [BENCH_GROUP], devices: setup.devices.map((d) => ({ serial: d.serial, group: 'bench', deviceCertPem: d.certPem })) },
    ...(setup.sink ? { sink: setup.sink } : {}),
  });
  const core = server.core;
  const uuids: string[] = [];
  const configHashes: string[] = [];
  // Pre-onboarded: registered by the fleet, attested (the token every config request must carry).
  for (const d of setup.devices) {
    const dev = core.registry.find(d.serial)!;
    const st = dev.attestState();
    st.integrityToken = new Uint8Array(setup.integrityToken);
    st.attested = true;
    uuids.push(dev.uuid);
    configHashes.push(core.configs.currentHash(dev));
  }
  process.on('message', (m: ServerCommand) => {
    if (m.type === 'stats') process.send!({ type: 'stats', stats: core.stats.toJSON() } satisfies ServerReady);
  });
  return { type: 'ready', url: server.url, rootCaPem: server.rootCaPem, uuids, configHashes };
}

process.once('message', (setup: ServerSetup) => {
  start(setup).then(
    (ready) => {
      process.on('message', (m: ServerCommand) => {
        if (m.type === 'cpu') {
          const u = process.cpuUsage();
          process.send!({ type: 'cpu', user: u.user, system: u.system } satisfies ServerReady);
        } else if (m.type === 'exit') {
          // A normal exit, so --cpu-prof writes its profile.
          process.exit(0);
        }
      });
      process.send!(ready);
    },
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
});
process.once('disconnect', () => process.exit(0));
