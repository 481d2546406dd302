// Controller API v1 of the embedded controller over real mutual TLS on 127.0.0.1: every endpoint of
// docs/interfaces.md (controller API v1) and its status codes, the client certificate deciding who is
// asking (none 401, unknown 401, onboarding certificate on a device endpoint 403, device
// certificate on register 403), bare messages both ways, the deprecated GET /config, Adam's v1
// spellings, and one device registry and one set of counters shared with v2.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { attest, certs } from '../src/gen/eve-types.js';
import { createDeviceIdentity, type DeviceIdentityMaterial } from '../src/identity/device-identity.js';
import { createDeviceCertificate } from '../src/identity/eve-certificates.js';
import { createFleetCa, type FleetCa } from '../src/identity/fleet-ca.js';
import { generateP256 } from '../src/identity/keys.js';
import { parseTrustedRoots, verifyControllerCerts } from '../src/protocol/controller-certs.js';
import { openResponse, openUnverified, sealRequest } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import { encodeNewlogLine, writeNewlogsFile } from '../src/protocol/newlogs.js';
import { appObjectUuids } from '../src/servers/controller/derived-uuid.js';
import { createControllerServer, type ControllerServer } from '../src/servers/controller/controller-server.js';
import { ControllerAdminClient } from '../src/servers/controller/controller-admin-client.js';
import type { GroupSpec } from '../src/scenario/scenario-types.js';
import { testGroup } from './fixtures/test-group.js';

const NOW = Date.now();
const SEED = 'controller-v1-test';
const P = '/api/v1/edgedevice';
const PROTO = 'application/x-proto-binary';

interface Res {
  status: number;
  body: Buffer;
  contentType: string | undefined;
}

/** A v1 client presenting one certificate (or none), like one device connection. */
class V1Client {
  private readonly agent: Agent;

  constructor(
    private readonly server: ControllerServer,
    cert?: { certPem: string; key: import('node:crypto').KeyObject },
  ) {
    const connect: Record<string, unknown> = { ca: server.rootCaPem };
    if (cert) {
      connect.cert = cert.certPem;
      connect.key = cert.key.export({ format: 'pem', type: 'pkcs8' });
    }
    // One connection, as a device keeps one: limits and identities are per connection.
    this.agent = new Agent({ connect, connections: 1 });
  }

  async send(method: 'GET' | 'POST', path: string, body?: Uint8Array): Promise<Res> {
    const res = await request(this.server.v1Url! + path, {
      method,
      dispatcher: this.agent,
      headers: body ? { 'content-type': PROTO } : {},
      body: body ? Buffer.from(body) : undefined,
    });
    const buf = Buffer.from(await res.body.arrayBuffer());
    const ct = res.headers['content-type'];
    return { status: res.statusCode, body: buf, contentType: Array.isArray(ct) ? ct[0] : ct };
  }

  post(path: string, body: Uint8Array): Promise<Res> {
    return this.send('POST', path, body);
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

function device(ca: FleetCa, index: number): DeviceIdentityMaterial {
  return createDeviceIdentity(ca, SEED, index, NOW).identity;
}

function registerMsg(d: DeviceIdentityMaterial, deviceCertPem = d.deviceCertPem): Uint8Array {
  return Msg.ZRegisterMsg.encode({
    // base64 of PEM, as Adam's v1 route expects (eve-wire-facts §12)
    pemCert: new Uint8Array(Buffer.from(Buffer.from(deviceCertPem).toString('base64'))),
    serial: d.serial,
    softSerial: d.softSerial,
  });
}

const GROUP: GroupSpec = testGroup('old-edge', 3, {
  api: 'v1',
  eveVersion: '9.4.0-kvm-amd64',
  logFormat: 'legacy',
  logLinesPerSec: 1,
  apps: [{ name: 'nginx-gateway', activate: true, profiles: [], logLinesPerSec: 1, flowsPerMessage: 2 }],
  configItems: { 'timer.config.interval': '60' },
  hardware: { ncpu: 2, memoryMB: 4096, storageMB: 32768, model: 'OldBox', manufacturer: 'evesim labs' },
});

describe('embedded controller API v1 (mutual TLS)', () => {
  let stateDir: string;
  let server: ControllerServer;
  let admin: ControllerAdminClient;
  let ca: FleetCa;
  let a: DeviceIdentityMaterial;
  let b: DeviceIdentityMaterial;
  const clients: V1Client[] = [];
  let anonymous: V1Client;
  let onboardA: V1Client;
  let deviceA: V1Client;
  let deviceB: V1Client;
  let uuidA: string;
  let uuidB: string;

  const client = (cert?: { certPem: string; key: import('node:crypto').KeyObject }): V1Client => {
    const c = new V1Client(server, cert);
    clients.push(c);
    return c;
  };
  const onboardingOf = (d: DeviceIdentityMaterial) => client({ certPem: d.onboardCertPem, key: d.onboardKey });
  const deviceOf = (d: DeviceIdentityMaterial) => client({ certPem: d.deviceCertPem, key: d.deviceKey });

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'evesim-v1-'));
    ca = createFleetCa(SEED, NOW);
    server = await createControllerServer({ stateDir: join(stateDir, 'pki'), onboardingCaPems: [ca.certPem] });
    admin = new ControllerAdminClient(server.adminUrl);
    await admin.setFleet({ groups: [GROUP], devices: [] });
    a = device(ca, 0);
    b = device(ca, 1);
    anonymous = client();
    onboardA = onboardingOf(a);
    deviceA = deviceOf(a);
    deviceB = deviceOf(b);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await admin.close();
    await server.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('serves v1 on a port of its own, next to v2', () => {
    expect(server.v1Url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(server.v1Url).not.toBe(server.url);
  });

  it('ping: no certificate 401, onboarding certificate 200 and rate limited per connection (429), unknown certificate 401', async () => {
    const none = await anonymous.send('GET', `${P}/ping`);
    expect(none.status).toBe(401);
    expect(none.body.toString()).toMatch(/no client certificate/);
    expect((await onboardA.send('GET', `${P}/ping`)).status).toBe(200);
    const again = await onboardA.send('GET', '/api/v1/edgeDevice/ping');
    expect(again.status).toBe(429);
    // Another device of the fleet, the same onboarding certificate on its own connection: the limit
    // is per connection, or a fleet would onboard one device a second.
    expect((await onboardingOf(a).send('GET', `${P}/ping`)).status).toBe(200);
    // A device certificate the controller does not know yet.
    const unknown = await deviceA.send('GET', `${P}/ping`);
    expect(unknown.status).toBe(401);
    expect(unknown.body.toString()).toMatch(/not a registered device certificate/);
  });

  it('register: onboarding certificate 201, identical repeat 200, other device certificate 409', async () => {
    const r = await onboardA.post(`${P}/register`, registerMsg(a));
    expect(r.status).toBe(201);
    expect(r.body.length).toBe(0); // "Responses without a body MUST contain no body content"
    expect((await onboardA.post('/api/v1/edgeDevice/register', registerMsg(a))).status).toBe(200);
    const other = generateP256();
    const otherCert = createDeviceCertificate(other.privateKey, other.publicKey, NOW);
    const dup = await onboardA.post(`${P}/register`, registerMsg(a, otherCert.pem));
    expect(dup.status).toBe(409);
    expect((await onboardingOf(b).post(`${P}/register`, registerMsg(b))).status).toBe(201);
  });

  it('register refused: no certificate 401, untrusted onboarding CA 401, device certificate 403, empty or bad body 422', async () => {
    expect((await anonymous.post(`${P}/register`, registerMsg(a))).status).toBe(401);
    const stranger = createDeviceIdentity(createFleetCa('someone-else', NOW), SEED, 7, NOW).identity;
    const s = await onboardingOf(stranger).post(`${P}/register`, registerMsg(stranger));
    expect(s.status).toBe(401);
    expect(s.body.toString()).toMatch(/does not chain to a trusted onboarding CA/);
    const asDevice = await deviceA.post(`${P}/register`, registerMsg(a));
    expect(asDevice.status).toBe(403);
    expect(asDevice.body.toString()).toMatch(/onboarding certificate/);
    const c = device(ca, 2);
    const onboardC = onboardingOf(c);
    expect((await onboardC.post(`${P}/register`, new Uint8Array(0))).status).toBe(422);
    expect((await onboardC.post(`${P}/register`, new Uint8Array([0x0a, 0xff, 0x01]))).status).toBe(422);
    expect((await onboardC.post(`${P}/register`, Msg.ZRegisterMsg.encode({ serial: c.serial }))).status).toBe(422);
  });

  it('config POST: the device certificate gets a bare ConfigResponse with the UUID; 304 when the hash matches; no integrity token needed', async () => {
    const r = await deviceA.post(`${P}/config`, Msg.ConfigRequest.encode({}));
    expect(r.status).toBe(200);
    expect(r.contentType).toBe(PROTO);
    const resp = Msg.ConfigResponse.decode(r.body); // bare: no AuthContainer around it
    uuidA = resp.config!.id!.uuid!;
    expect(uuidA).toMatch(/^[0-9a-f-]{36}$/);
    expect(resp.configHash).toMatch(/^[A-Za-z0-9_-]+=*$/);
    expect((await admin.device(a.serial)).uuid).toBe(uuidA);
    const same = await deviceA.post('/api/v1/edgeDevice/config', Msg.ConfigRequest.encode({ configHash: resp.configHash! }));
    expect(same.status).toBe(304);
    expect(same.body.length).toBe(0);
    const old = await deviceA.post(`${P}/config`, Msg.ConfigRequest.encode({ configHash: 'stale' }));
    expect(Msg.ConfigResponse.decode(old.body).config?.id?.uuid).toBe(uuidA);
    uuidB = Msg.ConfigResponse.decode((await deviceB.post(`${P}/config`, new Uint8Array(0))).body).config!.id!.uuid!;
    expect(uuidB).not.toBe(uuidA);
    expect((await deviceA.post(`${P}/config`, new Uint8Array([0x0a, 0x80]))).status).toBe(422);
  });

  it('config GET (deprecated): the whole EdgeDevConfig with the UUID, every time', async () => {
    const one = await deviceA.send('GET', `${P}/config`);
    const two = await deviceA.send('GET', `${P}/config`);
    for (const r of [one, two]) {
      expect(r.status).toBe(200);
      const cfg = Msg.EdgeDevConfig.decode(r.body);
      expect(cfg.id?.uuid).toBe(uuidA);
      expect(cfg.apps?.map((x) => x.displayname)).toEqual(['nginx-gateway']);
    }
    expect(Buffer.compare(one.body, two.body)).toBe(0);
  });

  it('an onboarding certificate on a device endpoint is 403; an unregistered certificate 401', async () => {
    for (const [method, path] of [['GET', 'config'], ['POST', 'config'], ['GET', 'certs'], ['POST', 'info'], ['POST', 'metrics']] as const) {
      const r = await onboardA.send(method, `${P}/${path}`, method === 'POST' ? Msg.ZInfoMsg.encode({ ztype: 1 }) : undefined);
      expect(r.status, `${method} ${path}`).toBe(403);
    }
    expect((await onboardA.send('GET', `${P}/config`)).body.toString()).toMatch(/may only register/);
    const stranger = deviceOf(device(ca, 9));
    expect((await stranger.send('GET', `${P}/config`)).status).toBe(401);
    expect((await anonymous.send('GET', `${P}/certs`)).status).toBe(401);
    // After registration the device certificate pings.
    expect((await deviceA.send('GET', `${P}/ping`)).status).toBe(200);
  });

  it('certs: a bare ZControllerCert that verifies against the root; 404 while withheld', async () => {
    const r = await deviceA.send('GET', `${P}/certs`);
    expect(r.status).toBe(200);
    const zc = Msg.ZControllerCert.decode(r.body);
    const trusted = verifyControllerCerts(zc, parseTrustedRoots(server.rootCaPem), Date.now());
    expect(Buffer.from(trusted.signingCertPem).toString()).toContain('BEGIN CERTIFICATE');
    expect((zc.certs ?? []).map((c) => c.type).sort()).toEqual([
      certs.ZCertType.CERT_TYPE_CONTROLLER_SIGNING,
      certs.ZCertType.CERT_TYPE_CONTROLLER_INTERMEDIATE,
      certs.ZCertType.CERT_TYPE_CONTROLLER_ECDH_EXCHANGE,
    ]);
    // The same certificates v2 serves inside its envelope.
    const v2 = await request(server.url + '/api/v2/edgedevice/certs', { dispatcher: new Agent({ connect: { ca: server.rootCaPem } }) });
    const v2body = Buffer.from(await v2.body.arrayBuffer());
    expect(Buffer.compare(Buffer.from(openUnverified(v2body).payload), r.body)).toBe(0);
    await admin.setServeCerts(false);
    expect((await deviceA.send('GET', `${P}/certs`)).status).toBe(404);
    await admin.setServeCerts(true);
  });

  it('attest at id/{uuid}/attest (document) and /attest: nonce, empty quote → token, all bare, 201', async () => {
    const send = (req: attest.ZAttestReq, path = `${P}/id/${uuidA}/attest`) => deviceA.post(path, Msg.ZAttestReq.encode(req));
    const n = await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_NONCE });
    expect(n.status).toBe(201);
    expect(Msg.ZAttestResponse.decode(n.body).nonce?.nonce?.length).toBe(32);
    const q = await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_QUOTE, quote: { versions: [{ version_type: 1, version: '9.4.0' }] } }, `${P}/attest`);
    expect(q.status).toBe(201);
    const qr = Msg.ZAttestResponse.decode(q.body);
    expect(qr.respType).toBe(attest.ZAttestRespType.ATTEST_RESP_QUOTE_RESP);
    expect(qr.quoteResp?.response).toBe(attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_SUCCESS);
    expect(qr.quoteResp?.integrity_token?.length).toBe(32);
    const certsReq = { reqType: attest.ZAttestReqType.ATTEST_REQ_CERT, certs: [{ type: 11, cert: new Uint8Array(Buffer.from(a.attestCertPem)) }] };
    expect(Msg.ZAttestResponse.decode((await send(certsReq)).body).respType).toBe(attest.ZAttestRespType.ATTEST_RESP_CERT);
    // A different certificate of the same type, the stored one not mutable: rejected.
    expect((await send({ ...certsReq, certs: [{ type: 11, cert: new Uint8Array(Buffer.from(b.attestCertPem)) }] })).status).toBe(403);
    expect((await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_NONE })).status).toBe(422);
    expect((await deviceA.post(`${P}/attest`, new Uint8Array(0))).status).toBe(422);
    // Path UUIDs: unknown 400, another device's 403.
    expect((await send({ reqType: 1 }, `${P}/id/00000000-0000-4000-8000-000000000000/attest`)).status).toBe(400);
    expect((await send({ reqType: 1 }, `${P}/id/${uuidB}/attest`)).status).toBe(403);
  });

  it('info, metrics, logs, app logs, newlogs and flowlog: 201 and no body; empty or undecodable 422; unknown app 400', async () => {
    const ok = async (path: string, body: Uint8Array) => {
      const r = await deviceA.post(path, body);
      expect(r.status, path).toBe(201);
      return r;
    };
    const info = await ok(`${P}/info`, Msg.ZInfoMsg.encode({ ztype: 1, devId: uuidA, dinfo: { ncpu: 2 } }));
    expect(info.body.length).toBe(0);
    await ok(`${P}/metrics`, Msg.ZMetricMsg.encode({ devID: uuidA, dm: { memory: { usedMem: 5 } } }));
    await ok(`${P}/logs`, Msg.LogBundle.encode({ devID: uuidA, log: [{ content: 'one' }, { content: 'two' }] }));
    const app = appObjectUuids(uuidA, 'nginx-gateway').app;
    const appLogs = Msg.AppInstanceLogBundle.encode({ log: [{ content: 'x' }] });
    await ok(`${P}/apps/instances/${app}/logs`, appLogs); // document
    await ok(`${P}/apps/instances/id/${app}/logs`, appLogs); // Adam
    await ok(`${P}/flowlog`, Msg.FlowMessage.encode({ devId: uuidA, flows: [{ flow: { src: '10.0.0.1', dest: '10.0.0.2', protocol: 6 }, txBytes: 1 }] }));
    const deviceFile = writeNewlogsFile({ kind: 'device', meta: { devID: uuidA, image: 'IMGA', eveVersion: '9.4.0' } }, [encodeNewlogLine({ content: 'hi' })], 1_700_000_000);
    await ok(`${P}/newlogs`, deviceFile); // Adam's v1 extension
    const appFile = writeNewlogsFile({ kind: 'app', appName: 'nginx-gateway' }, [encodeNewlogLine({ content: 'hi' })], 1_700_000_000);
    await ok(`${P}/apps/instanceid/id/${app}/newlogs`, appFile); // Adam

    const garbage = new Uint8Array([0x0a, 0x80, 0x80, 0x80]);
    for (const ep of ['info', 'metrics', 'logs', 'flowlog']) {
      expect((await deviceA.post(`${P}/${ep}`, garbage)).status, ep).toBe(422);
      expect((await deviceA.post(`${P}/${ep}`, new Uint8Array(0))).status, `${ep} empty`).toBe(422);
    }
    expect((await deviceA.post(`${P}/info`, Msg.ZInfoMsg.encode({ ztype: 1, devId: uuidB, dinfo: {} }))).status).toBe(422);
    const ghostApp = appObjectUuids(uuidB, 'nginx-gateway').app;
    expect((await deviceA.post(`${P}/apps/instances/${ghostApp}/logs`, appLogs)).status).toBe(400);
    expect((await deviceA.post(`${P}/apps/instances/${app}/logs`, new Uint8Array(0))).status).toBe(422);
  });

  it("uuid (Adam's v1 extension): bare UuidResponse; unknown paths 404", async () => {
    const r = await deviceA.post(`${P}/uuid`, new Uint8Array(0));
    expect(r.status).toBe(200);
    expect(Msg.UuidResponse.decode(r.body).uuid).toBe(uuidA);
    expect((await deviceA.send('GET', `${P}/nosuch`)).status).toBe(404);
    expect((await deviceA.send('GET', '/api/v1/EDGEDEVICE/ping')).status).toBe(404);
    expect((await deviceA.send('GET', `${P}/register`)).status).toBe(404);
    expect((await deviceA.send('GET', '/api/v2/edgedevice/ping')).status).toBe(404); // v2 is on the other port
  });

  it('answers 503 on every endpoint in maintenance', async () => {
    await admin.setMaintenance(true);
    try {
      expect((await deviceA.send('GET', `${P}/ping`)).status).toBe(503);
      expect((await deviceA.post(`${P}/config`, new Uint8Array(0))).status).toBe(503);
    } finally {
      await admin.setMaintenance(false);
    }
  });

  it('shares the registry with v2: a device registered over v1 is served over v2 too; counts per API', async () => {
    // Same device, v2 envelope signed with its device key.
    const agent = new Agent({ connect: { ca: server.rootCaPem } });
    const sealed = sealRequest(new Uint8Array(0), { key: a.deviceKey, certDerHash: a.deviceCertHash });
    const res = await request(`${server.url}/api/v2/edgedevice/uuid`, { method: 'POST', body: Buffer.from(sealed), dispatcher: agent });
    const body = Buffer.from(await res.body.arrayBuffer());
    expect(res.statusCode).toBe(200);
    const certsRes = await request(`${server.url}/api/v2/edgedevice/certs`, { dispatcher: agent });
    const zc = Msg.ZControllerCert.decode(openUnverified(Buffer.from(await certsRes.body.arrayBuffer())).payload);
    const trust = verifyControllerCerts(zc, parseTrustedRoots(server.rootCaPem), Date.now());
    expect(Msg.UuidResponse.decode(openResponse(body, trust).payload).uuid).toBe(uuidA);
    await agent.close();

    const dev = (await admin.device(a.serial)) as { api: string; counts: { endpoints: Record<string, { requests: number }> } };
    expect(dev.api).toBe('v1+v2');
    expect(((await admin.device(b.serial)) as { api: string }).api).toBe('v1');
    const stats = (await admin.stats()) as {
      endpoints: Record<string, { requests: number }>;
      byApi: { v1: { endpoints: Record<string, { requests: number; byStatus: Record<string, number> }> }; v2: { endpoints: Record<string, { requests: number }> } };
    };
    expect(stats.byApi.v1.endpoints.register!.byStatus).toMatchObject({ '200': 1, '201': 2, '401': 2, '403': 1, '409': 1, '422': 3 });
    expect(stats.byApi.v2.endpoints.uuid!.requests).toBe(1);
    expect(stats.byApi.v1.endpoints.uuid!.requests).toBe(1);
    // The overall figures are the sum of both APIs.
    for (const [ep, t] of Object.entries(stats.endpoints)) {
      const v1 = stats.byApi.v1.endpoints[ep]?.requests ?? 0;
      const v2 = stats.byApi.v2.endpoints[ep]?.requests ?? 0;
      expect(t.requests, ep).toBe(v1 + v2);
    }
  });

  it("counts each listener's connections in /admin/stats: opened, open now, the most at once", async () => {
    type Gauges = { connections: Record<'v1' | 'v2', { opened: number; open: number; peak: number }> };
    const before = ((await admin.stats()) as Gauges).connections;
    const v1 = new V1Client(server);
    const v2 = new Agent({ connect: { ca: server.rootCaPem }, connections: 1 });
    expect((await v1.send('GET', `${P}/ping`)).status).toBe(401);
    const res = await request(`${server.url}/api/v2/edgedevice/certs`, { dispatcher: v2 });
    await res.body.arrayBuffer();
    const during = ((await admin.stats()) as Gauges).connections;
    for (const api of ['v1', 'v2'] as const) {
      expect(during[api].opened, api).toBe(before[api].opened + 1);
      expect(during[api].open, api).toBe(before[api].open + 1);
      expect(during[api].peak, api).toBeGreaterThanOrEqual(during[api].open);
    }
    // Closed by the client: the controller's count comes down; opened and the peak stay.
    await Promise.all([v1.close(), v2.close()]);
    await vi.waitFor(
      async () => {
        const after = ((await admin.stats()) as Gauges).connections;
        for (const api of ['v1', 'v2'] as const) {
          expect(after[api].open, api).toBe(before[api].open);
          expect(after[api].opened, api).toBe(during[api].opened);
          expect(after[api].peak, api).toBe(during[api].peak);
        }
      },
      { timeout: 10_000, interval: 20 },
    );
  });
});
