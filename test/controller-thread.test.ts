// The embedded controller in a thread of its own, as the runner starts it: it reports its URLs and
// root CA, serves devices over HTTPS, answers the admin client, and stops cleanly.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeviceIdentity } from '../src/identity/device-identity.js';
import { createFleetCa, type FleetCa } from '../src/identity/fleet-ca.js';
import { sealRequest } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import { startControllerInThread, type ControllerThread } from '../src/servers/controller/controller-thread.js';

describe('controller in its own thread', () => {
  let dir: string;
  let ctl: ControllerThread;
  let agent: Agent;
  let ca: FleetCa;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'evesim-ctl-thread-'));
    ca = createFleetCa('thread-test', Date.now());
    ctl = await startControllerInThread({ stateDir: join(dir, 'pki'), onboardingCaPems: [ca.certPem] });
    agent = new Agent({ connect: { ca: ctl.rootCaPem } });
  });

  afterAll(async () => {
    await agent?.close();
    await ctl?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves register over HTTPS and reports through the admin client from another thread', async () => {
    expect(ctl.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(ctl.rootCaPem).toContain('BEGIN CERTIFICATE');
    await ctl.admin.setFleet({ groups: [{ name: 'g' } as never], devices: [] });
    const d = createDeviceIdentity(ca, 'thread-test', 0, Date.now()).identity;
    const body = sealRequest(
      Msg.ZRegisterMsg.encode({ pemCert: new Uint8Array(Buffer.from(Buffer.from(d.deviceCertPem).toString('base64'))), serial: d.serial }),
      { key: d.onboardKey, certDerHash: d.onboardCertHash, senderCertB64Pem: d.onboardCertB64Pem },
    );
    const res = await request(`${ctl.url}/api/v2/edgedevice/register`, { method: 'POST', body: Buffer.from(body), dispatcher: agent });
    await res.body.dump();
    expect(res.statusCode).toBe(201);
    const stats = (await ctl.admin.stats()) as { threadId: number; devices: number; endpoints: Record<string, { byStatus: Record<string, number> }> };
    expect(stats.threadId).not.toBe(threadId);
    expect(stats.devices).toBe(1);
    expect(stats.endpoints.register!.byStatus).toEqual({ '201': 1 });
    expect((await ctl.admin.device(d.serial)).group).toBe('g');
  });

  it('stops: the port no longer answers', async () => {
    const url = ctl.url;
    await ctl.stop();
    await expect(request(`${url}/api/v2/edgedevice/ping`, { dispatcher: new Agent({ connect: { ca: ctl.rootCaPem } }) })).rejects.toThrow();
  });
});
