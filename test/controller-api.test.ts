// The embedded controller over real HTTPS on 127.0.0.1: every status code of controller-api-v2,
// envelopes both ways, /certs verified as a device verifies it, config hashing and 304, the admin
// API changing config, newlogs checks, and the per-endpoint counts matching what was sent.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attest, certs, type config, type uuid } from '../src/gen/eve-types.js';
import { createDeviceIdentity, type DeviceIdentityMaterial } from '../src/identity/device-identity.js';
import { createDeviceCertificate } from '../src/identity/eve-certificates.js';
import { createFleetCa, type FleetCa } from '../src/identity/fleet-ca.js';
import { generateP256 } from '../src/identity/keys.js';
import { zcertHash16 } from '../src/protocol/cert-hash.js';
import { parseTrustedRoots, verifyControllerCerts, type TrustedControllerCerts } from '../src/protocol/controller-certs.js';
import { openResponse, openUnverified, sealRequest } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import { encodeNewlogLine, writeNewlogsFile } from '../src/protocol/newlogs.js';
import { appObjectUuids } from '../src/servers/controller/derived-uuid.js';
import { createControllerServer, type ControllerServer } from '../src/servers/controller/controller-server.js';
import { ControllerAdminClient } from '../src/servers/controller/controller-admin-client.js';
import type { GroupSpec } from '../src/scenario/scenario-types.js';
import { testGroup } from './fixtures/test-group.js';

const NOW = Date.now();
const SEED = 'controller-api-test';

interface Res {
  status: number;
  body: Buffer;
  contentType: string | undefined;
}

/** An HTTPS client trusting the controller root, counting what it sent per endpoint and status. */
class Client {
  readonly sent = new Map<string, Map<number, number>>();
  private readonly agent: Agent;

  constructor(
    private readonly server: ControllerServer,
  ) {
    this.agent = new Agent({ connect: { ca: server.rootCaPem } });
  }

  async send(endpoint: string, method: 'GET' | 'POST', path: string, body?: Uint8Array): Promise<Res> {
    const res = await request(this.server.url + path, {
      method,
      dispatcher: this.agent,
      headers: body ? { 'content-type': 'application/x-proto-binary' } : {},
      body: body ? Buffer.from(body) : undefined,
    });
    const buf = Buffer.from(await res.body.arrayBuffer());
    const m = this.sent.get(endpoint) ?? new Map<number, number>();
    m.set(res.statusCode, (m.get(res.statusCode) ?? 0) + 1);
    this.sent.set(endpoint, m);
    const ct = res.headers['content-type'];
    return { status: res.statusCode, body: buf, contentType: Array.isArray(ct) ? ct[0] : ct };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

const P = '/api/v2/edgedevice';

function device(ca: FleetCa, index: number): DeviceIdentityMaterial {
  return createDeviceIdentity(ca, SEED, index, NOW).identity;
}

const signer = (d: DeviceIdentityMaterial) => ({ key: d.deviceKey, certDerHash: d.deviceCertHash });

function registerBody(d: DeviceIdentityMaterial, deviceCertPem = d.deviceCertPem, serial = d.serial): Uint8Array {
  const payload = Msg.ZRegisterMsg.encode({
    pemCert: new Uint8Array(Buffer.from(Buffer.from(deviceCertPem).toString('base64'))),
    serial,
    softSerial: d.softSerial,
  });
  return sealRequest(payload, { key: d.onboardKey, certDerHash: d.onboardCertHash, senderCertB64Pem: d.onboardCertB64Pem });
}

const GROUP: GroupSpec = testGroup('edge', 3, {
  logLinesPerSec: 1,
  apps: [
    { name: 'nginx-gateway', activate: true, profiles: [], logLinesPerSec: 1, flowsPerMessage: 2 },
    { name: 'modbus-collector', activate: false, profiles: ['lab'], logLinesPerSec: 0, flowsPerMessage: 0 },
  ],
  configItems: { 'timer.config.interval': '60', 'timer.metric.interval': '30' },
  globalProfile: 'prod',
  hardware: { ncpu: 4, memoryMB: 8192, storageMB: 65536, model: 'SimBox 3000', manufacturer: 'evesim labs' },
});

describe('embedded controller device API', () => {
  let stateDir: string;
  let server: ControllerServer;
  let client: Client;
  let admin: ControllerAdminClient;
  let ca: FleetCa;
  let trust: TrustedControllerCerts;
  let a: DeviceIdentityMaterial;
  let b: DeviceIdentityMaterial;
  let uuidA: string;
  let uuidB: string;
  let tokenA: Uint8Array;

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'evesim-ctl-'));
    ca = createFleetCa(SEED, NOW);
    server = await createControllerServer({ stateDir: join(stateDir, 'pki'), onboardingCaPems: [ca.certPem] });
    client = new Client(server);
    admin = new ControllerAdminClient(server.adminUrl);
    a = device(ca, 0);
    b = device(ca, 1);
    await admin.setFleet({ groups: [GROUP], devices: [] });
  });

  afterAll(async () => {
    await client.close();
    await admin.close();
    await server.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  async function deviceRequest(d: DeviceIdentityMaterial, endpoint: string, path: string, payload: Uint8Array): Promise<Res> {
    return client.send(endpoint, 'POST', path, sealRequest(payload, signer(d)));
  }

  function open<T>(res: Res, codec: { decode(b: Uint8Array): T }): T {
    return codec.decode(openResponse(res.body, trust).payload);
  }

  it('answers ping on both spellings of the prefix and 404 for anything else', async () => {
    expect((await client.send('ping', 'GET', `${P}/ping`)).status).toBe(200);
    expect((await client.send('ping', 'GET', '/api/v2/edgeDevice/ping')).status).toBe(200);
    expect((await client.send('unknown', 'GET', '/api/v2/EDGEDEVICE/ping')).status).toBe(404);
    expect((await client.send('unknown', 'GET', `${P}/nosuch`)).status).toBe(404);
    expect((await client.send('unknown', 'GET', `${P}/register`)).status).toBe(404);
    expect((await client.send('unknown', 'POST', `${P}/id/x/y/z`, new Uint8Array([1]))).status).toBe(404);
  });

  it('serves /certs that verify from the device side, signed like every response', async () => {
    const res = await client.send('certs', 'GET', `${P}/certs`);
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/x-proto-binary');
    const zc = Msg.ZControllerCert.decode(openUnverified(res.body).payload);
    trust = verifyControllerCerts(zc, parseTrustedRoots(server.rootCaPem), Date.now());
    const types = (zc.certs ?? []).map((c) => c.type).sort();
    expect(types).toEqual([
      certs.ZCertType.CERT_TYPE_CONTROLLER_SIGNING,
      certs.ZCertType.CERT_TYPE_CONTROLLER_INTERMEDIATE,
      certs.ZCertType.CERT_TYPE_CONTROLLER_ECDH_EXCHANGE,
    ]);
    for (const c of zc.certs ?? []) expect(Buffer.from(c.certHash!)).toEqual(Buffer.from(zcertHash16(c.cert!)));
    // The envelope of /certs itself is signed with the signing key it carries.
    expect(() => openResponse(res.body, trust)).not.toThrow();
    // Same bytes on the document's spelling.
    const again = await client.send('certs', 'GET', '/api/v2/edgeDevice/certs');
    expect(Buffer.compare(again.body, res.body)).toBe(0);
  });

  it('registers: 201, identical repeat 200, different device certificate 409', async () => {
    expect((await client.send('register', 'POST', `${P}/register`, registerBody(a))).status).toBe(201);
    expect((await client.send('register', 'POST', '/api/v2/edgeDevice/register', registerBody(a))).status).toBe(200);
    const other = generateP256();
    const otherCert = createDeviceCertificate(other.privateKey, other.publicKey, NOW);
    const res = await client.send('register', 'POST', `${P}/register`, registerBody(a, otherCert.pem));
    expect(res.status).toBe(409);
    expect(res.body.toString()).toMatch(/different device certificate/);
    expect((await client.send('register', 'POST', `${P}/register`, registerBody(b))).status).toBe(201);
  });

  it('refuses register: untrusted onboarding CA 401, bad signature 401, garbage 422, empty 422', async () => {
    const strangerCa = createFleetCa('someone-else', NOW);
    const stranger = createDeviceIdentity(strangerCa, SEED, 7, NOW).identity;
    const r1 = await client.send('register', 'POST', `${P}/register`, registerBody(stranger));
    expect(r1.status).toBe(401);
    expect(r1.body.toString()).toMatch(/does not chain to a trusted onboarding CA/);

    const c = Msg.AuthContainer.decode(registerBody(device(ca, 2)));
    c.signatureHash = new Uint8Array(c.signatureHash!.length).fill(7);
    expect((await client.send('register', 'POST', `${P}/register`, Msg.AuthContainer.encode(c))).status).toBe(401);

    expect((await client.send('register', 'POST', `${P}/register`, Buffer.from('definitely not protobuf \xff\xff\xff'))).status).toBe(422);
    expect((await client.send('register', 'POST', `${P}/register`, new Uint8Array(0))).status).toBe(422);

    // A valid envelope around a payload that is not a ZRegisterMsg.
    const d3 = device(ca, 3);
    const junk = sealRequest(new Uint8Array([0x0a, 0xff, 0x01]), { key: d3.onboardKey, certDerHash: d3.onboardCertHash, senderCertB64Pem: d3.onboardCertB64Pem });
    expect((await client.send('register', 'POST', `${P}/register`, junk)).status).toBe(422);
  });

  it('answers /uuid with the UUID, manufacturer and model; unknown device 400', async () => {
    const res = await deviceRequest(a, 'uuid', `${P}/uuid`, new Uint8Array(0));
    expect(res.status).toBe(200);
    const u = open<uuid.UuidResponse>(res, Msg.UuidResponse);
    expect(u.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(u.manufacturer).toBe('evesim labs');
    expect(u.product_name).toBe('SimBox 3000');
    uuidA = u.uuid!;
    const rb = await deviceRequest(b, 'uuid', '/api/v2/edgeDevice/uuid', new Uint8Array(0));
    uuidB = open<uuid.UuidResponse>(rb, Msg.UuidResponse).uuid!;
    expect(uuidB).not.toBe(uuidA);
    expect((await admin.device(a.serial)).uuid).toBe(uuidA);

    const unknown = device(ca, 4); // never registered
    const r = await deviceRequest(unknown, 'uuid', `${P}/uuid`, new Uint8Array(0));
    expect(r.status).toBe(400);
    expect(r.body.toString()).toMatch(/unknown device/);
  });

  it('gates config on the integrity token: 403 before attestation', async () => {
    const r = await deviceRequest(a, 'config', `${P}/id/${uuidA}/config`, Msg.ConfigRequest.encode({}));
    expect(r.status).toBe(403);
  });

  it('runs the attestation cycle: nonce, certs, empty quote → token, store keys', async () => {
    const path = `${P}/id/${uuidA}/attest`;
    const send = (req: attest.ZAttestReq) => deviceRequest(a, 'attest', path, Msg.ZAttestReq.encode(req));
    const read = (res: Res) => {
      expect(res.status).toBe(201);
      return open<attest.ZAttestResponse>(res, Msg.ZAttestResponse);
    };

    // A quote without a nonce first: NONCE_MISMATCH.
    const q0 = read(await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_QUOTE, quote: {} }));
    expect(q0.quoteResp?.response).toBe(attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_NONCE_MISMATCH);

    const certsReq = (pem: string, type: number) => ({
      reqType: attest.ZAttestReqType.ATTEST_REQ_CERT,
      certs: [{ hashAlgo: 1, certHash: zcertHash16(pem), type, cert: new Uint8Array(Buffer.from(pem)) }],
    });
    const rc = read(await send(certsReq(a.attestCertPem, 11)));
    expect(rc.respType).toBe(attest.ZAttestRespType.ATTEST_RESP_CERT);
    expect(read(await send(certsReq(a.attestCertPem, 11))).respType).toBe(attest.ZAttestRespType.ATTEST_RESP_CERT); // identical re-post
    const refused = await send(certsReq(b.attestCertPem, 11)); // different cert, stored one not mutable
    expect(refused.status).toBe(403);
    expect(refused.body.toString()).toMatch(/not mutable/);
    read(await send(certsReq(a.ecdhCertPem, 13)));

    const n = read(await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_NONCE }));
    expect(n.respType).toBe(attest.ZAttestRespType.ATTEST_RESP_NONCE);
    expect(n.nonce?.nonce?.length).toBe(32);

    // A quote with PCR values goes to the verifier (placeholder: QUOTE_FAILED), consuming the nonce.
    const qf = read(
      await send({
        reqType: attest.ZAttestReqType.ATTEST_REQ_QUOTE,
        quote: { attestData: new Uint8Array([1, 2, 3]), signature: new Uint8Array([4]), pcr_values: [{ index: 0, hash_algo: 2, value: new Uint8Array(32) }] },
      }),
    );
    expect(qf.quoteResp?.response).toBe(attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);

    read(await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_NONCE }));
    const q = read(
      await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_QUOTE, quote: { versions: [{ version_type: 1, version: '14.5.2-kvm-amd64' }] } }),
    );
    expect(q.respType).toBe(attest.ZAttestRespType.ATTEST_RESP_QUOTE_RESP);
    expect(q.quoteResp?.response).toBe(attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_SUCCESS);
    tokenA = q.quoteResp!.integrity_token!;
    expect(tokenA.length).toBe(32);

    // The nonce is single use: a second quote without a new nonce fails.
    const again = read(await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_QUOTE, quote: {} }));
    expect(again.quoteResp?.response).toBe(attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_NONCE_MISMATCH);
    // ... and a failed quote withdraws the token: attest once more.
    read(await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_NONCE }));
    tokenA = read(await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_QUOTE, quote: {} })).quoteResp!.integrity_token!;

    const key = { key_type: 1, key: new Uint8Array([9, 9, 9]) };
    const bad = read(await send({ reqType: attest.ZAttestReqType.Z_ATTEST_REQ_TYPE_STORE_KEYS, storage_keys: { integrity_token: new Uint8Array(32), keys: [key] } }));
    expect(bad.storage_keys_resp?.response).toBe(attest.AttestStorageKeysResponseCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_ITOKEN_MISMATCH);
    const good = read(await send({ reqType: attest.ZAttestReqType.Z_ATTEST_REQ_TYPE_STORE_KEYS, storage_keys: { integrity_token: tokenA, keys: [key] } }));
    expect(good.storage_keys_resp?.response).toBe(attest.AttestStorageKeysResponseCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_SUCCESS);

    // The next successful quote returns the escrowed keys with the same token.
    read(await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_NONCE }));
    const q2 = read(await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_QUOTE }));
    expect(Buffer.from(q2.quoteResp!.integrity_token!)).toEqual(Buffer.from(tokenA));
    expect(q2.quoteResp!.keys?.map((k) => Buffer.from(k.key!))).toEqual([Buffer.from([9, 9, 9])]);

    // Unprocessable attest bodies.
    expect((await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_NONE })).status).toBe(422);
    expect((await send({ reqType: attest.ZAttestReqType.ATTEST_REQ_CERT, certs: [] })).status).toBe(422);
  });

  it('serves config with the token: hash, content from the group, 304 when unchanged, 403 on a wrong token', async () => {
    const path = `${P}/id/${uuidA}/config`;
    const wrong = await deviceRequest(a, 'config', path, Msg.ConfigRequest.encode({ integrity_token: new Uint8Array(32).fill(1) }));
    expect(wrong.status).toBe(403);
    expect(wrong.body.toString()).toMatch(/integrity_token mismatch/);

    const res = await deviceRequest(a, 'config', path, Msg.ConfigRequest.encode({ integrity_token: tokenA }));
    expect(res.status).toBe(200);
    const cr = open<config.ConfigResponse>(res, Msg.ConfigResponse);
    expect(cr.configHash).toMatch(/^[A-Za-z0-9_-]{43}=$/);
    const cfg = cr.config!;
    expect(cfg.id?.uuid).toBe(uuidA);
    expect(cfg.apps?.map((x) => [x.displayname, x.activate, x.uuidandversion?.uuid])).toEqual([
      ['nginx-gateway', true, appObjectUuids(uuidA, 'nginx-gateway').app],
      ['modbus-collector', false, appObjectUuids(uuidA, 'modbus-collector').app],
    ]);
    expect(cfg.apps?.[1]?.profile_list).toEqual(['lab']);
    expect(cfg.volumes?.length).toBe(2);
    expect(cfg.contentInfo?.length).toBe(2);
    expect(cfg.networkInstances?.length).toBe(1);
    expect(cfg.configItems).toEqual([
      { key: 'timer.config.interval', value: '60' },
      { key: 'timer.metric.interval', value: '30' },
    ]);
    expect(cfg.global_profile).toBe('prod');
    expect(cfg.device_name).toBe(a.serial);
    expect(cfg.project_name).toBe('edge');
    expect(cfg.enterprise_name).toBe('evesim');
    expect(cfg.controllercert_confighash).toMatch(/^[A-Za-z0-9_-]+=*$/);
    // Apps of another device have other UUIDs.
    expect(appObjectUuids(uuidB, 'nginx-gateway').app).not.toBe(appObjectUuids(uuidA, 'nginx-gateway').app);

    const same = await deviceRequest(a, 'config', path, Msg.ConfigRequest.encode({ configHash: cr.configHash!, integrity_token: tokenA }));
    expect(same.status).toBe(304);
    expect(same.body.length).toBe(0);
    // A stale hash gets the full config again.
    const stale = await deviceRequest(a, 'config', path, Msg.ConfigRequest.encode({ configHash: 'stale', integrity_token: tokenA }));
    expect(stale.status).toBe(200);
    expect(open<config.ConfigResponse>(stale, Msg.ConfigResponse).configHash).toBe(cr.configHash);
  });

  it('changes a running device config through the admin API: new hash, new content', async () => {
    const path = `${P}/id/${uuidA}/config`;
    const before = (await admin.deviceConfig(uuidA)).configHash;
    const patched = await admin.patchDevice(uuidA, {
      configItems: { 'timer.config.interval': '10', 'debug.enable.ssh': 'true' },
      apps: { 'modbus-collector': { activate: true, restart: true } },
      reboot: true,
      controllerEpoch: true,
    });
    expect(patched.configHash).not.toBe(before);
    const res = await deviceRequest(a, 'config', path, Msg.ConfigRequest.encode({ configHash: before, integrity_token: tokenA }));
    expect(res.status).toBe(200);
    const cr = open<config.ConfigResponse>(res, Msg.ConfigResponse);
    expect(cr.configHash).toBe(patched.configHash);
    const cfg = cr.config!;
    expect(cfg.configItems).toEqual([
      { key: 'debug.enable.ssh', value: 'true' },
      { key: 'timer.config.interval', value: '10' },
      { key: 'timer.metric.interval', value: '30' },
    ]);
    expect(cfg.apps?.[1]?.activate).toBe(true);
    expect(cfg.apps?.[1]?.restart?.counter).toBe(1);
    expect(cfg.reboot?.counter).toBe(1);
    expect(cfg.controller_epoch).toBe(1);

    // Group-wide change reaches the device too.
    await admin.patchGroup('edge', { configItems: { 'timer.metric.interval': null }, globalProfile: 'lab' });
    const after = await deviceRequest(a, 'config', path, Msg.ConfigRequest.encode({ configHash: cr.configHash!, integrity_token: tokenA }));
    const cfg2 = open<config.ConfigResponse>(after, Msg.ConfigResponse).config!;
    expect(cfg2.configItems?.map((i) => i.key)).toEqual(['debug.enable.ssh', 'timer.config.interval']);
    expect(cfg2.global_profile).toBe('lab');

    await expect(admin.patchDevice(uuidA, { apps: { nope: { activate: true } } })).rejects.toMatchObject({ status: 400, field: 'apps.nope' });
    await expect(admin.patchDevice(uuidA, { reboot: 'yes' } as never)).rejects.toMatchObject({ status: 400, field: 'reboot' });
    await expect(admin.patchDevice('no-such-device', { reboot: true })).rejects.toMatchObject({ status: 404 });
  });

  it('accepts info, metrics, logs and flowlog (201) and refuses undecodable ones (422)', async () => {
    const info = Msg.ZInfoMsg.encode({ ztype: 1, devId: uuidA, dinfo: { ncpu: 4 }, atTimeStamp: { seconds: 1_700_000_000 } });
    expect((await deviceRequest(a, 'info', `${P}/id/${uuidA}/info`, info)).status).toBe(201);
    const appInfo = Msg.ZInfoMsg.encode({ ztype: 3, devId: uuidA, ainfo: { AppID: appObjectUuids(uuidA, 'nginx-gateway').app, state: 7 } });
    expect((await deviceRequest(a, 'info', `/api/v2/edgeDevice/id/${uuidA}/info`, appInfo)).status).toBe(201);
    const mismatched = Msg.ZInfoMsg.encode({ ztype: 3, devId: uuidA, dinfo: { ncpu: 1 } });
    expect((await deviceRequest(a, 'info', `${P}/id/${uuidA}/info`, mismatched)).status).toBe(422);
    const otherDevId = Msg.ZInfoMsg.encode({ ztype: 1, devId: uuidB, dinfo: {} });
    expect((await deviceRequest(a, 'info', `${P}/id/${uuidA}/info`, otherDevId)).status).toBe(422);

    expect((await deviceRequest(a, 'metrics', `${P}/id/${uuidA}/metrics`, Msg.ZMetricMsg.encode({ devID: uuidA, dm: { memory: { usedMem: 5 } } }))).status).toBe(201);
    const logs = Msg.LogBundle.encode({ devID: uuidA, log: [{ content: 'one' }, { content: 'two' }, { content: 'three' }] });
    expect((await deviceRequest(a, 'logs', `${P}/id/${uuidA}/logs`, logs)).status).toBe(201);
    const app = appObjectUuids(uuidA, 'nginx-gateway').app;
    const appLogs = Msg.AppInstanceLogBundle.encode({ log: [{ content: 'x' }, { content: 'y' }] });
    expect((await deviceRequest(a, 'applogs', `${P}/id/${uuidA}/apps/instances/id/${app}/logs`, appLogs)).status).toBe(201);
    expect((await deviceRequest(a, 'applogs', `${P}/apps/instanceid/${app}/logs`, appLogs)).status).toBe(201);
    const flows = Msg.FlowMessage.encode({ devId: uuidA, flows: [{ flow: { src: '10.0.0.1', dest: '10.0.0.2', protocol: 6 }, txBytes: 100 }] });
    expect((await deviceRequest(a, 'flowlog', `${P}/id/${uuidA}/flowlog`, flows)).status).toBe(201);

    const garbage = new Uint8Array([0x0a, 0x80, 0x80, 0x80]); // truncated length-delimited field
    for (const ep of ['info', 'metrics', 'logs', 'flowlog']) {
      const r = await deviceRequest(a, ep, `${P}/id/${uuidA}/${ep}`, garbage);
      expect(r.status, ep).toBe(422);
    }
    expect((await client.send('info', 'POST', `${P}/id/${uuidA}/info`, new Uint8Array(0))).status).toBe(422);
    expect((await client.send('metrics', 'POST', `${P}/id/${uuidA}/metrics`, Buffer.from('garbage, not an AuthContainer'))).status).toBe(422);
  });

  it('answers 400 for unknown devices and app instances, 401 for bad credentials, 403 for another device', async () => {
    const ghost = '00000000-0000-4000-8000-000000000000';
    for (const ep of ['config', 'attest', 'info', 'metrics', 'logs', 'newlogs', 'flowlog']) {
      const r = await deviceRequest(a, ep, `${P}/id/${ghost}/${ep}`, new Uint8Array(0));
      expect(r.status, ep).toBe(400);
    }
    const ghostApp = appObjectUuids(uuidB, 'nginx-gateway').app; // exists, but for device B
    expect((await deviceRequest(a, 'applogs', `${P}/apps/instanceid/${ghostApp}/logs`, Msg.AppInstanceLogBundle.encode({}))).status).toBe(400);
    const nl = writeNewlogsFile({ kind: 'app', appName: 'nginx-gateway' }, [encodeNewlogLine({ content: 'hi' })], 1_700_000_000);
    expect((await deviceRequest(a, 'appnewlogs', `${P}/id/${uuidA}/apps/instanceid/${ghostApp}/newlogs`, nl)).status).toBe(400);

    // Bad signature with a known certificate.
    const c = Msg.AuthContainer.decode(sealRequest(Msg.ZMetricMsg.encode({}), signer(a)));
    c.signatureHash = Uint8Array.from(c.signatureHash!, (x) => x ^ 0xff);
    expect((await client.send('metrics', 'POST', `${P}/id/${uuidA}/metrics`, Msg.AuthContainer.encode(c))).status).toBe(401);
    // Unknown certificate hash, and an envelope with no hash at all.
    const stranger = device(ca, 5);
    expect((await deviceRequest(stranger, 'metrics', `${P}/id/${uuidA}/metrics`, Msg.ZMetricMsg.encode({}))).status).toBe(401);
    const noHash = Msg.AuthContainer.encode({ protectedPayload: { payload: new Uint8Array(0) }, algo: 2 });
    expect((await client.send('metrics', 'POST', `${P}/id/${uuidA}/metrics`, noHash)).status).toBe(401);
    // Device A posting as device B.
    expect((await deviceRequest(a, 'metrics', `${P}/id/${uuidB}/metrics`, Msg.ZMetricMsg.encode({}))).status).toBe(403);
  });

  it('checks newlogs gzip files: header, every line; 201 with ServerMetrics for device logs', async () => {
    const lines = [
      encodeNewlogLine({ severity: 'info', source: 'zedagent', content: 'hello', msgid: 1, timestamp: { seconds: 1_700_000_000, nanos: 5 } }),
      encodeNewlogLine({ severity: 'warning', source: 'nim', content: 'world', msgid: 2, timestamp: { seconds: 1_700_000_001 } }),
    ];
    const file = writeNewlogsFile({ kind: 'device', meta: { devID: uuidA, image: 'IMGA', eveVersion: '14.5.2' } }, lines, 1_700_000_002);
    const ok = await deviceRequest(a, 'newlogs', `${P}/id/${uuidA}/newlogs`, file);
    expect(ok.status).toBe(201);
    expect(ok.contentType).toBe('application/json');
    const sm = JSON.parse(ok.body.toString()) as Record<string, unknown>;
    expect(Object.keys(sm).sort()).toEqual(['cpu_percentage', 'log_process_delay_msec']);

    const badLine = writeNewlogsFile({ kind: 'device', meta: { devID: uuidA } }, [lines[0]!, '{"msgid":"seven"}'], 1_700_000_003);
    const r1 = await deviceRequest(a, 'newlogs', `${P}/id/${uuidA}/newlogs`, badLine);
    expect(r1.status).toBe(422);
    expect(r1.body.toString()).toMatch(/line 2/);
    const noComment = gzipSync(Buffer.from(lines.join('\n') + '\n'));
    expect((await deviceRequest(a, 'newlogs', `${P}/id/${uuidA}/newlogs`, noComment)).status).toBe(422);
    const notGzip = Buffer.from(lines.join('\n'));
    expect((await deviceRequest(a, 'newlogs', `${P}/id/${uuidA}/newlogs`, notGzip)).status).toBe(422);

    const app = appObjectUuids(uuidA, 'modbus-collector').app;
    const appFile = writeNewlogsFile({ kind: 'app', appName: 'modbus-collector' }, lines, 1_700_000_004);
    const r2 = await deviceRequest(a, 'appnewlogs', `${P}/id/${uuidA}/apps/instanceid/${app}/newlogs`, appFile);
    expect(r2.status).toBe(201);
    expect(r2.body.length).toBe(0);
    expect((await deviceRequest(a, 'appnewlogs', `/api/v2/edgeDevice/apps/instanceid/${app}/newlogs`, appFile)).status).toBe(201);
  });

  it('answers 404 on /certs while certificates are withheld', async () => {
    await admin.setServeCerts(false);
    expect((await client.send('certs', 'GET', `${P}/certs`)).status).toBe(404);
    await admin.setServeCerts(true);
    expect((await client.send('certs', 'GET', `${P}/certs`)).status).toBe(200);
  });

  it('answers 503 on every endpoint in maintenance', async () => {
    await admin.setMaintenance(true);
    const calls: [string, 'GET' | 'POST', string][] = [
      ['ping', 'GET', `${P}/ping`],
      ['certs', 'GET', `${P}/certs`],
      ['register', 'POST', `${P}/register`],
      ['uuid', 'POST', `${P}/uuid`],
      ['config', 'POST', `${P}/id/${uuidA}/config`],
      ['attest', 'POST', `${P}/id/${uuidA}/attest`],
      ['info', 'POST', `${P}/id/${uuidA}/info`],
      ['metrics', 'POST', `${P}/id/${uuidA}/metrics`],
      ['logs', 'POST', `${P}/id/${uuidA}/logs`],
      ['newlogs', 'POST', `${P}/id/${uuidA}/newlogs`],
      ['flowlog', 'POST', `${P}/id/${uuidA}/flowlog`],
      ['applogs', 'POST', `/api/v2/edgeDevice/apps/instanceid/${uuidA}/logs`],
      ['appnewlogs', 'POST', `${P}/id/${uuidA}/apps/instanceid/${uuidA}/newlogs`],
    ];
    for (const [ep, method, path] of calls) {
      expect((await client.send(ep, method, path, method === 'POST' ? new Uint8Array([1]) : undefined)).status, ep).toBe(503);
    }
    await admin.setMaintenance(false);
    expect((await client.send('ping', 'GET', `${P}/ping`)).status).toBe(200);
  });

  it('counts per endpoint and status exactly what was sent, and per device', async () => {
    const stats = (await admin.stats()) as { endpoints: Record<string, { requests: number; byStatus: Record<string, number>; logLines: number; undecodable: number }> };
    const expected: Record<string, Record<string, number>> = {};
    for (const [ep, m] of client.sent) expected[ep] = Object.fromEntries([...m].map(([s, n]) => [String(s), n]));
    const actual = Object.fromEntries(Object.entries(stats.endpoints).map(([ep, t]) => [ep, t.byStatus]));
    expect(actual).toEqual(expected);
    // Accepted log lines: 3 (LogBundle) and 2 + 2 (app bundles), 2 newlogs lines, 2 + 2 app newlogs lines.
    expect(stats.endpoints.logs!.logLines).toBe(3);
    expect(stats.endpoints.applogs!.logLines).toBe(4);
    expect(stats.endpoints.newlogs!.logLines).toBe(2);
    expect(stats.endpoints.appnewlogs!.logLines).toBe(4);
    expect(stats.endpoints.info!.undecodable).toBe(4); // garbage, empty body, wrong oneof, foreign devId

    const dev = (await admin.device(uuidA)) as { attested: boolean; counts: { endpoints: Record<string, { requests: number }>; infoByType: Record<string, number>; logLines: number } };
    expect(dev.attested).toBe(true);
    expect(dev.counts.infoByType).toEqual({ '1': 1, '3': 1 });
    expect(dev.counts.logLines).toBe(3 + 4 + 2 + 4);
    const list = await admin.devices();
    expect(list.total).toBe(2);
    expect(list.devices.map((d) => d.serial).sort()).toEqual([a.serial, b.serial].sort());
  });
});

describe('embedded controller options', () => {
  let stateDir: string;
  beforeAll(() => {
    stateDir = mkdtempSync(join(tmpdir(), 'evesim-ctl-opt-'));
  });
  afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

  it('requires pre-registration when asked: unknown serial 403, listed serial 201, device-cert pre-registration 200', async () => {
    const ca = createFleetCa(SEED, NOW);
    const listed = device(ca, 10);
    const certOnly = device(ca, 11);
    const stranger = device(ca, 12);
    const server = await createControllerServer({
      stateDir: join(stateDir, 'pki'),
      onboardingCaPems: [ca.certPem],
      requirePreRegistration: true,
      fleet: {
        groups: [GROUP],
        devices: [
          { serial: listed.serial, group: 'edge' },
          { serial: certOnly.serial, group: 'edge', deviceCertPem: certOnly.deviceCertPem },
        ],
      },
      unchangedConfigReply: 'hash-only',
    });
    const client = new Client(server);
    try {
      expect((await client.send('register', 'POST', `${P}/register`, registerBody(stranger))).status).toBe(403);
      expect((await client.send('register', 'POST', `${P}/register`, registerBody(listed))).status).toBe(201);
      // Pre-registered by device certificate: /uuid works without /register, and register is a repeat.
      const u = await client.send('uuid', 'POST', `${P}/uuid`, sealRequest(new Uint8Array(0), signer(certOnly)));
      expect(u.status).toBe(200);
      expect((await client.send('register', 'POST', `${P}/register`, registerBody(certOnly))).status).toBe(200);

      // 'hash-only': an unchanged config is a 200 carrying only the hash (the document's form).
      const certsRes = await client.send('certs', 'GET', `${P}/certs`);
      const trust = verifyControllerCerts(Msg.ZControllerCert.decode(openUnverified(certsRes.body).payload), parseTrustedRoots(server.rootCaPem), Date.now());
      const id = Msg.UuidResponse.decode(openResponse(u.body, trust).payload).uuid!;
      const attestPath = `${P}/id/${id}/attest`;
      const att = (r: attest.ZAttestReq) => client.send('attest', 'POST', attestPath, sealRequest(Msg.ZAttestReq.encode(r), signer(certOnly)));
      await att({ reqType: attest.ZAttestReqType.ATTEST_REQ_NONCE });
      const q = Msg.ZAttestResponse.decode(openResponse((await att({ reqType: attest.ZAttestReqType.ATTEST_REQ_QUOTE })).body, trust).payload);
      const token = q.quoteResp!.integrity_token!;
      const cfg = (hash?: string) =>
        client.send('config', 'POST', `${P}/id/${id}/config`, sealRequest(Msg.ConfigRequest.encode({ integrity_token: token, ...(hash ? { configHash: hash } : {}) }), signer(certOnly)));
      const first = Msg.ConfigResponse.decode(openResponse((await cfg()).body, trust).payload);
      const second = await cfg(first.configHash);
      expect(second.status).toBe(200);
      const r = Msg.ConfigResponse.decode(openResponse(second.body, trust).payload);
      expect(r.configHash).toBe(first.configHash);
      expect(r.config).toBeFalsy();
    } finally {
      await client.close();
      await server.stop();
    }
  });

  it('names the field of a bad fleet body and keeps the previous fleet', async () => {
    const server = await createControllerServer({ stateDir: join(stateDir, 'pki') });
    const admin = new ControllerAdminClient(server.adminUrl);
    try {
      await admin.setFleet({ groups: [GROUP], devices: [{ serial: 'S1', group: 'edge' }] });
      await expect(admin.setFleet({ groups: [GROUP], devices: [{ serial: 'S2', group: 'nope' }] })).rejects.toMatchObject({ status: 400, field: 'devices[0].group' });
      await expect(
        admin.setFleet({ groups: [{ ...GROUP, apps: [{ name: 'x', activate: 'yes' } as never] }], devices: [] }),
      ).rejects.toMatchObject({ status: 400, field: 'groups[0].apps[0].activate' });
      await expect(admin.setFleet({ groups: [GROUP], devices: [{ serial: 'S3', group: 'edge', deviceCertPem: 'not a cert' }] })).rejects.toMatchObject({
        field: 'devices[0].deviceCertPem',
      });
      expect((await admin.fleet()).groups.map((g) => g.name)).toEqual(['edge']);
    } finally {
      await admin.close();
      await server.stop();
    }
  });
});
