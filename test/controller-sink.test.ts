// `evesim controller --sink`: a load-test sink answering from precomputed signed responses and
// verifying only a sample of request signatures. In process through ControllerCore.handle, and a
// short real run of the simulator (compiled, dist/) against a sink controller.

import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseShare } from '../src/cli/controller-command.js';
import { loadOrCreateOnboardingKit } from '../src/cli/onboarding-kit.js';
import { attest } from '../src/gen/eve-types.js';
import { createDeviceIdentity, type DeviceIdentityMaterial } from '../src/identity/device-identity.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import { openResponse, sealRequest } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import { createControllerServer, type ControllerServer } from '../src/servers/controller/controller-server.js';
import { resolveControllerOptions } from '../src/servers/controller/controller-options.js';
import { DEFAULT_GROUP } from '../src/servers/controller/fleet-spec.js';
import { SINK_INTEGRITY_TOKEN } from '../src/servers/controller/sink-responder.js';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';

const P = '/api/v2/edgedevice';
const NOW = Date.UTC(2026, 10, 20);
const dir = mkdtempSync(join(tmpdir(), 'evesim-sink-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ca = createFleetCa('sink', NOW);
const devs: DeviceIdentityMaterial[] = [0, 1].map((i) => createDeviceIdentity(ca, 'sink', i, NOW).identity);
const GROUP = { ...DEFAULT_GROUP, name: 'g', apps: [{ name: 'web', activate: true, profiles: [], logLinesPerSec: 0, flowsPerMessage: 0 }] };

async function sinkServer(verifySample: number, name: string): Promise<{ server: ControllerServer; uuids: string[] }> {
  const server = await createControllerServer({
    stateDir: join(dir, name),
    apiV1: false,
    sink: { verifySample },
    fleet: { groups: [GROUP], devices: devs.map((d) => ({ serial: d.serial, group: 'g', deviceCertPem: d.deviceCertPem })) },
  });
  return { server, uuids: devs.map((d) => server.core.registry.find(d.serial)!.uuid) };
}

const signed = (d: DeviceIdentityMaterial, payload: Uint8Array) => sealRequest(payload, { key: d.deviceKey, certDerHash: d.deviceCertHash });
/** Signed with a key that is not the device's, under the device's certificate hash. */
const forged = (d: DeviceIdentityMaterial, payload: Uint8Array) =>
  sealRequest(payload, { key: generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey, certDerHash: d.deviceCertHash });
const metricsBody = (uuid: string) => Msg.ZMetricMsg.encode({ devID: uuid });
const configBody = (hash: string) => Msg.ConfigRequest.encode({ configHash: hash, integrity_token: SINK_INTEGRITY_TOKEN });

describe('controller --sink, every signature verified (100 %)', () => {
  let server: ControllerServer;
  let uuids: string[];
  beforeAll(async () => ({ server, uuids } = await sinkServer(1, 'all')));
  afterAll(() => server.stop());

  it('rejects a request with a bad signature, answers a good one', () => {
    const core = server.core;
    expect(core.handle('POST', `${P}/id/${uuids[0]}/metrics`, forged(devs[0]!, metricsBody(uuids[0]!))).status).toBe(401);
    expect(core.handle('POST', `${P}/id/${uuids[0]}/metrics`, signed(devs[0]!, metricsBody(uuids[0]!))).status).toBe(201);
    // Device 1's signed request on device 0's path: another device's path.
    expect(core.handle('POST', `${P}/id/${uuids[0]}/info`, signed(devs[1]!, metricsBody(uuids[1]!))).status).toBe(403);
    expect(core.sink!.counts).toEqual({ answered: 3, verified: 3 });
    expect(core.stats.of('metrics').byStatus.get(401)).toBe(1);
  });

  it('answers attest from precomputed signed responses and serves the signed config, then 304', () => {
    const core = server.core;
    const trust = { signingCertPemHash: createHash('sha256').update(core.signingCertPem).digest(), signingKey: core.pki.signing.key };
    const att = (reqType: attest.ZAttestReqType) => {
      const r = core.handle('POST', `${P}/id/${uuids[1]}/attest`, signed(devs[1]!, Msg.ZAttestReq.encode({ reqType })));
      expect(r.status).toBe(201);
      return Msg.ZAttestResponse.decode(openResponse(r.body!, trust).payload);
    };
    expect(att(attest.ZAttestReqType.ATTEST_REQ_NONCE).nonce?.nonce?.length).toBe(32);
    const quote = att(attest.ZAttestReqType.ATTEST_REQ_QUOTE).quoteResp!;
    expect(quote.response).toBe(attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_SUCCESS);
    expect(Buffer.from(quote.integrity_token!)).toEqual(Buffer.from(SINK_INTEGRITY_TOKEN));

    const first = core.handle('POST', `${P}/id/${uuids[1]}/config`, signed(devs[1]!, configBody('')));
    expect(first.status).toBe(200);
    const resp = Msg.ConfigResponse.decode(openResponse(first.body!, trust).payload);
    expect(resp.config?.id?.uuid).toBe(uuids[1]);
    expect(resp.config?.apps?.map((a) => a.displayname)).toEqual(['web']);
    // The same bytes the conformance path would hash: the hash is the device's current one.
    expect(resp.configHash).toBe(core.configs.currentHash(core.registry.byDeviceUuid(uuids[1]!)!));
    expect(core.handle('POST', `${P}/id/${uuids[1]}/config`, signed(devs[1]!, configBody(resp.configHash!))).status).toBe(304);
    // A stale hash again: the kept signed body, byte for byte.
    expect(Buffer.from(core.handle('POST', `${P}/id/${uuids[1]}/config`, signed(devs[1]!, configBody('old'))).body!)).toEqual(Buffer.from(first.body!));
  });

  it('refuses an unknown device and an undecodable envelope', () => {
    const core = server.core;
    expect(core.handle('POST', `${P}/id/00000000-0000-4000-8000-000000000000/metrics`, signed(devs[0]!, metricsBody(uuids[0]!))).status).toBe(400);
    expect(core.handle('POST', `${P}/id/${uuids[0]}/config`, new Uint8Array([0xff, 0xff, 0xff])).status).toBe(422);
  });
});

describe('controller --sink, sampled verification', () => {
  it('verifies every 100th request at 1 %, none at 0 %', async () => {
    const { server, uuids } = await sinkServer(0.01, 'sampled');
    try {
      const statuses = new Map<number, number>();
      for (let i = 0; i < 300; i++) {
        const s = server.core.handle('POST', `${P}/id/${uuids[0]}/metrics`, forged(devs[0]!, metricsBody(uuids[0]!))).status;
        statuses.set(s, (statuses.get(s) ?? 0) + 1);
      }
      // The first request is sampled, then every 100th: 3 forged requests caught, 297 answered unchecked.
      expect(Object.fromEntries(statuses)).toEqual({ 201: 297, 401: 3 });
      expect(server.core.sink!.counts).toEqual({ answered: 300, verified: 3 });
    } finally {
      await server.stop();
    }
    const none = await sinkServer(0, 'none');
    try {
      expect(none.server.core.handle('POST', `${P}/id/${none.uuids[0]}/metrics`, forged(devs[0]!, metricsBody(none.uuids[0]!))).status).toBe(201);
      expect(none.server.core.sink!.counts.verified).toBe(0);
    } finally {
      await none.server.stop();
    }
  });

  it('parses --verify-sample and checks the option', () => {
    expect(parseShare('1%', '--verify-sample')).toBe(0.01);
    expect(parseShare('100%', '--verify-sample')).toBe(1);
    expect(parseShare('0.25', '--verify-sample')).toBe(0.25);
    expect(() => parseShare('150%', '--verify-sample')).toThrow(/--verify-sample needs a share .* got "150%"/);
    expect(() => parseShare('lots', '--verify-sample')).toThrow(/got "lots"/);
    expect(() => resolveControllerOptions({ stateDir: dir, sink: { verifySample: 2 } })).toThrow(/sink\.verifySample must be a share 0\.\.1, got 2/);
  });
});

const SCENARIO = `
name: sink-run
seed: 7
duration: 40s
gracefulStop: 15s
target: embedded
arrival:
  model: uniform
  over: 3s
groups:
  - name: edge
    count: 4
    eveVersion: 14.5.2-kvm-amd64
    logs:
      format: newlogs
      linesPerSec: 3
    appStep: 1s
    apps:
      - name: web
        logLinesPerSec: 1
    configItems:
      timer.config.interval: 5
      timer.metric.interval: 5
      timer.deviceinfo.interval: 30
      newlog.allow.fastupload: true
thresholds:
  - onboarded.ratio == 1
  - errors.count == 0
  - findings.count == 0
  - attest.count >= 1 per device
  - config.count >= 3 per device
  - info.count >= 2 per device
  - metrics.count >= 2 per device
  - drain.newlogs.count >= 1 per device
`;

describe('a real run against evesim controller --sink', () => {
  it('onboards every device and passes its thresholds; the sink verified a sample', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const kit = loadOrCreateOnboardingKit(join(dir, 'run-controller'));
    const controller = await ctl.startControllerInThread({
      stateDir: join(dir, 'run-controller'),
      onboardingCaPems: [readFileSync(kit.caFile, 'utf8')],
      sink: { verifySample: 0.1 },
    });
    try {
      const rootCaFile = join(dir, 'run-root.pem');
      writeFileSync(rootCaFile, controller.rootCaPem);
      const file = join(dir, 'sink-run.yaml');
      writeFileSync(file, SCENARIO);
      let err = '';
      const result = await run.runScenario({
        scenarioFile: file,
        workers: 1,
        stateDir: join(dir, 'run-state'),
        controller: { url: controller.url, rootCaFile, onboardCertFile: kit.certFile, onboardKeyFile: kit.keyFile, insecure: false },
        controllerAdmin: controller.admin,
        quiet: true,
        out: () => {},
        err: (t) => (err += t),
      });
      expect({ exitCode: result.exitCode, err: result.exitCode === 0 ? '' : err }).toEqual({ exitCode: 0, err: '' });
      expect(result.summary?.devices.onboarded).toBe(4);
      const stats = (await controller.admin.stats()) as { sink?: { verifySample: number; answered: number; verified: number } };
      expect(stats.sink!.verifySample).toBe(0.1);
      expect(stats.sink!.answered).toBeGreaterThan(40);
      // Every 10th request, the first one included.
      expect(stats.sink!.verified).toBe(Math.floor((stats.sink!.answered - 1) / 10) + 1);
    } finally {
      await controller.stop();
    }
  }, 120_000);
});
