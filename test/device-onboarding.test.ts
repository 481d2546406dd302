import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openRegisterRequest, openRequest } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import { certificateDer } from '../src/protocol/pem.js';
import { T0, rig } from './device-harness.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('virtual device onboarding (§2.2, §13.1, §14)', () => {
  it('fetches certs, pings, registers with the onboarding key, then learns its UUID with the device key', async () => {
    const r = rig();
    r.device.start();
    await r.time.advance(0);
    const [certs, ping, register, uuid] = r.controller.requests;
    expect(r.controller.sequence().slice(0, 4)).toEqual(['certs', 'ping', 'register', 'uuid']);

    // GETs: no body, no envelope, no Content-Type.
    expect(certs).toMatchObject({ method: 'GET', path: '/api/v2/edgedevice/certs', body: undefined, dueAt: T0, deviceIndex: 0 });
    expect(certs!.headers['Content-Type']).toBeUndefined();
    expect(ping).toMatchObject({ method: 'GET', path: '/api/v2/edgedevice/ping', body: undefined });

    // Serial headers while the UUID is unknown, a fresh random v4 X-Request-Id on each request.
    const id = r.controller.identity;
    for (const q of [certs!, ping!, register!, uuid!]) {
      expect(q.headers['X-Serial-Number']).toBe(id.serial);
      expect(q.headers['X-Soft-Serial']).toBe(id.softSerial);
      expect(q.headers['X-Request-Id']).toMatch(UUID_V4);
    }
    expect(new Set(r.controller.requests.map((q) => q.headers['X-Request-Id'])).size).toBe(r.controller.requests.length);

    // Register: onboarding envelope, senderCert = base64(onboarding PEM), pemCert = base64(device PEM).
    expect(register).toMatchObject({ method: 'POST', path: '/api/v2/edgedevice/register' });
    expect(register!.headers['Content-Type']).toBe('application/x-proto-binary');
    const env = openRegisterRequest(register!.body!);
    expect(env.onboardCertPem).toBe(id.onboardCertPem);
    expect(Buffer.from(env.container.senderCertHash!)).toEqual(createHash('sha256').update(certificateDer(id.onboardCertPem)).digest());
    expect(Buffer.from(env.container.senderCert!).toString('latin1')).toBe(Buffer.from(id.onboardCertPem).toString('base64'));
    expect(env.container.signatureHash).toHaveLength(64); // raw r||s
    const reg = Msg.ZRegisterMsg.decode(env.payload);
    expect(Buffer.from(reg.pemCert!).toString('latin1')).toBe(Buffer.from(id.deviceCertPem).toString('base64'));
    expect(reg.serial).toBe(id.serial);
    expect(reg.softSerial).toBe(id.softSerial);

    // UUID: device envelope over an empty payload, no senderCert.
    expect(uuid).toMatchObject({ method: 'POST', path: '/api/v2/edgedevice/uuid' });
    const u = openRequest(uuid!.body!, (h) => (Buffer.from(h).equals(Buffer.from(id.deviceCertHash)) ? { publicKey: id.deviceKey } : undefined));
    expect(u.payload).toHaveLength(0);
    expect(u.container.senderCert ?? new Uint8Array(0)).toHaveLength(0);
    expect(Buffer.from(u.container.senderCertHash!)).toEqual(createHash('sha256').update(certificateDer(id.deviceCertPem)).digest());

    // Then the device-scoped calls, without serial headers.
    expect(r.device.uuid).toBe(r.controller.deviceUuid);
    const after = r.controller.requests.slice(4);
    expect(after.length).toBeGreaterThan(0);
    for (const q of after) {
      expect(q.path.startsWith(`/api/v2/edgedevice/id/${r.controller.deviceUuid}/`) || q.path === '/api/v2/edgedevice/certs').toBe(true);
      expect(q.headers['X-Serial-Number']).toBeUndefined();
      expect(q.headers['X-Soft-Serial']).toBeUndefined();
    }
    expect(r.lifecycle.slice(0, 4)).toEqual(['fetching-certs', 'registering', 'uuid', 'attesting']);
  });

  it('goes on to /uuid whatever /register answers, and counts the statuses', async () => {
    for (const status of [200, 201, 400, 403, 409, 500]) {
      const r = rig();
      r.controller.hook = (q) => (q.endpoint === 'register' ? { status, headers: {}, body: new Uint8Array(0) } : undefined);
      r.device.start();
      await r.time.advance(0);
      expect(r.controller.sequence().slice(0, 4)).toEqual(['certs', 'ping', 'register', 'uuid']);
      expect(r.device.uuid).toBe(r.controller.deviceUuid);
      const reg = r.device.stats().endpoints.register!;
      expect(reg.sent).toBe(1);
      if (status >= 400 && status < 500) expect(reg.clientError).toBe(1);
      // 500 is not a documented /register answer: a finding, survived.
      expect(r.findings.some((f) => f.endpoint === 'register' && f.kind === 'undocumented-status')).toBe(status === 500);
    }
  });

  it('skips /register when pre-registered', async () => {
    const r = rig({ behaviour: { preRegistered: true } });
    r.device.start();
    await r.time.advance(0);
    expect(r.controller.sequence().slice(0, 3)).toEqual(['certs', 'ping', 'uuid']);
    expect(r.controller.of('register')).toHaveLength(0);
    expect(r.device.uuid).toBe(r.controller.deviceUuid);
  });

  it('backs off 1 s, 2 s, 4 s on transport errors and resumes where it failed', async () => {
    const r = rig();
    let failRegister = 3;
    r.controller.hook = (q) => (q.endpoint === 'register' && failRegister-- > 0 ? 'transport-error' : undefined);
    r.device.start();
    await r.time.advance(20_000);
    const registers = r.controller.of('register').map((q) => q.at - T0);
    expect(registers).toEqual([0, 1_000, 3_000, 7_000]);
    // Certs were fetched once: later rounds start at ping.
    expect(r.controller.of('certs').filter((q) => q.at < T0 + 7_000)).toHaveLength(1);
    expect(r.controller.of('uuid')[0]!.at - T0).toBe(7_000);
    expect(r.device.stats().endpoints.register!.transportError).toBe(3);
    // Every retry round is due when the ticker fired (open-model timing).
    expect(r.controller.of('ping').map((q) => q.dueAt - T0)).toEqual([0, 1_000, 3_000, 7_000]);
  });

  it('keeps retrying /certs while the certificates do not verify, reporting each as a finding', async () => {
    const r = rig();
    let bad = 2;
    r.controller.hook = (q) => (q.endpoint === 'certs' && bad-- > 0 ? { status: 200, headers: {}, body: new Uint8Array([0x0a, 0x03, 1, 2, 3]) } : undefined);
    r.device.start();
    await r.time.advance(10_000);
    expect(r.controller.of('certs').map((q) => q.at - T0).slice(0, 3)).toEqual([0, 1_000, 3_000]);
    expect(r.findings.filter((f) => f.kind === 'bad-certs')).toHaveLength(2);
    expect(r.device.uuid).toBe(r.controller.deviceUuid);
    expect(r.device.stats().endpoints.certs!.rejected).toBe(2);
  });

  it('rejects a /uuid answer signed by an unknown certificate and refetches /certs', async () => {
    const r = rig();
    let forged = 1;
    r.controller.hook = (q) => {
      if (q.endpoint !== 'uuid' || forged-- <= 0) return undefined;
      // Signed with the ECDH key but naming the signing cert: signature does not verify.
      const body = Msg.AuthContainer.encode({
        protectedPayload: { payload: Msg.UuidResponse.encode({ uuid: r.controller.deviceUuid }) },
        algo: 2,
        senderCertHash: r.controller.signingCertPemHash,
        signatureHash: new Uint8Array(64).fill(7),
      });
      return { status: 200, headers: {}, body };
    };
    r.device.start();
    await r.time.advance(0);
    expect(r.device.uuid).toBe('');
    expect(r.findings.map((f) => f.kind)).toContain('bad-signature');
    await r.time.advance(1_000);
    expect(r.device.uuid).toBe(r.controller.deviceUuid);
  });
});
