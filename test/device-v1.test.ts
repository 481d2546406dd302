// One API v1 virtual device against the embedded controller over real mutual TLS: it onboards
// (ping and register with the onboarding certificate, /certs and the first configuration with the
// device certificate, its UUID from that configuration), and a device that presents the wrong
// certificate gets 401 (a device certificate the controller does not know) or 403 (the onboarding
// certificate on device endpoints), is counted, and never onboards.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceBehaviour, DeviceLifecycle } from '../src/device/device-options.js';
import type { Transport, TransportRequest, TransportResponse } from '../src/device/ports.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import { VirtualDevice } from '../src/device/virtual-device.js';
import { Msg } from '../src/protocol/messages.js';
import { HeapScheduler } from '../src/fleet/heap-scheduler.js';
import { realClock } from '../src/fleet/shard-runner.js';
import { createDeviceIdentity, type DeviceIdentity } from '../src/identity/device-identity.js';
import { createFleetCa, type FleetCa } from '../src/identity/fleet-ca.js';
import type { GroupSpec } from '../src/scenario/scenario-types.js';
import { ControllerAdminClient } from '../src/servers/controller/controller-admin-client.js';
import { createControllerServer, type ControllerServer } from '../src/servers/controller/controller-server.js';
import { PerDeviceTransport } from '../src/transport/mtls-transport.js';
import { testGroup } from './fixtures/test-group.js';

const SEED = 'device-v1-test';

const BEHAVIOUR: DeviceBehaviour = {
  eveVersion: '9.4.0-kvm-amd64',
  logFormat: 'legacy',
  logLinesPerSec: 1,
  flowlogIntervalMs: 120_000,
  preRegistered: false,
  api: 'v1',
  appStepMs: 100,
  hardware: { ncpu: 2, memoryMB: 2048, storageMB: 8192, model: 'OldBox', manufacturer: 'evesim' },
};

const GROUP: GroupSpec = testGroup('old', 3, {
  api: 'v1',
  eveVersion: '9.4.0-kvm-amd64',
  logFormat: 'legacy',
  logLinesPerSec: 1,
  hardware: BEHAVIOUR.hardware,
});

/** Notes every POST /config: the hash it carried and the status it got. */
class ConfigWatch implements Transport {
  readonly polls: { configHash: string; status: number }[] = [];
  constructor(private readonly inner: Transport) {}
  async request(req: TransportRequest): Promise<TransportResponse> {
    const res = await this.inner.request(req);
    if (req.endpoint === 'config' && req.method === 'POST') {
      // v1 bodies are the bare message, no envelope.
      this.polls.push({ configHash: Msg.ConfigRequest.decode(req.body!).configHash ?? '', status: res.status });
    }
    return res;
  }
}

/** Rewrites the client certificate of every request that asks for the device certificate. */
class WrongCertificate implements Transport {
  constructor(private readonly inner: Transport) {}
  request(req: TransportRequest): Promise<TransportResponse> {
    return this.inner.request(req.clientCert === 'device' ? { ...req, clientCert: 'onboarding' } : req);
  }
}

describe('API v1 virtual device (mutual TLS) against the embedded controller', () => {
  let dir: string;
  let server: ControllerServer;
  let admin: ControllerAdminClient;
  let ca: FleetCa;
  let scheduler: HeapScheduler;
  let transport: PerDeviceTransport;
  const ids: DeviceIdentity[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'evesim-dev-v1-'));
    ca = createFleetCa(SEED, Date.now());
    for (let i = 0; i < 5; i++) ids.push(createDeviceIdentity(ca, SEED, i, Date.now()).identity);
    server = await createControllerServer({ stateDir: join(dir, 'pki'), onboardingCaPems: [ca.certPem] });
    admin = new ControllerAdminClient(server.adminUrl);
    await admin.setFleet({ groups: [GROUP], devices: ids.map((d) => ({ serial: d.serial, group: 'old' })) });
    scheduler = new HeapScheduler(realClock);
    scheduler.start();
    transport = new PerDeviceTransport({ baseUrl: server.v1Url!, caPem: server.rootCaPem, identityOf: (i) => ids[i], connectJitterMs: 0 });
  });

  afterAll(async () => {
    scheduler.stop();
    await transport.destroy();
    await admin.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  function device(index: number, t: Transport = transport, behaviour: Partial<DeviceBehaviour> = {}): { dev: VirtualDevice; states: DeviceLifecycle[] } {
    const states: DeviceLifecycle[] = [];
    const dev = new VirtualDevice({
      index,
      identity: ids[index]!,
      behaviour: { ...BEHAVIOUR, ...behaviour },
      rootCertPem: server.rootCaPem,
      clock: realClock,
      scheduler,
      transport: t,
      rng: SeededRng.create(1, index, 'device'),
      onStateChange: (_from, to) => states.push(to),
    });
    return { dev, states };
  }

  /** Waits until `cond` holds, at most `ms`; says whether it held. */
  async function until(cond: () => boolean, ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
    return cond();
  }
  /** Generous, but below the test's 60 s limit so that a miss fails with its own message. */
  const BOUND_MS = 45_000;

  it('onboards: registers with the onboarding certificate and learns its UUID from the first configuration', async () => {
    const { dev, states } = device(0);
    dev.start();
    expect(await until(() => dev.lifecycle === 'onboarded' && (dev.stats().endpoints.config?.ok ?? 0) >= 2, BOUND_MS), 'onboarded with two config answers within 45 s').toBe(true);
    const hash = dev.configHash; // forgotten at stop, as at a reboot
    dev.stop();
    expect(states).toContain('onboarded');
    const record = await admin.device(ids[0]!.serial);
    expect(dev.uuid).toBe(record.uuid);
    expect(record.api).toBe('v1');
    expect(hash).toBe((await admin.deviceConfig(ids[0]!.serial)).configHash);
    const s = dev.stats().endpoints;
    expect(s.register).toMatchObject({ sent: 1, ok: 1 });
    expect(s.uuid).toBeUndefined();
    expect(s.certs?.ok).toBeGreaterThanOrEqual(1);
    expect(s.config?.ok).toBeGreaterThanOrEqual(2); // the UUID lookup and the first poll
    expect(dev.stats().findings).toBe(0);
  });

  it('carries the hash of the configuration that named it into its first poll, which gets a 304', async () => {
    const watch = new ConfigWatch(transport);
    const { dev } = device(4, watch);
    dev.start();
    expect(await until(() => watch.polls.length >= 2, BOUND_MS), 'two config polls within 45 s').toBe(true);
    const hash = dev.configHash;
    dev.stop();
    const expected = (await admin.deviceConfig(ids[4]!.serial)).configHash;
    // The UUID lookup asks without a hash and gets the whole configuration ...
    expect(watch.polls[0]).toEqual({ configHash: '', status: 200 });
    // ... which the device applies and remembers, so the regular poll right after is a 304.
    expect(watch.polls[1]).toEqual({ configHash: expected, status: 304 });
    expect(hash).toBe(expected);
    expect(dev.stats().findings).toBe(0);
  });

  it('a device certificate the controller does not know gets 401 and the device never onboards', async () => {
    // Claims to be pre-registered, but the controller has no certificate for it.
    const { dev, states } = device(1, transport, { preRegistered: true });
    dev.start();
    expect(await until(() => (dev.stats().endpoints.config?.clientError ?? 0) >= 1, BOUND_MS), 'a refused config poll within 45 s').toBe(true);
    dev.stop();
    expect(states).not.toContain('onboarded');
    expect(dev.stats().endpoints.config?.clientError).toBeGreaterThanOrEqual(1);
    const stats = (await admin.stats()) as { byApi: { v1: { endpoints: Record<string, { byStatus: Record<string, number> }> } } };
    expect(stats.byApi.v1.endpoints.config!.byStatus['401']).toBeGreaterThanOrEqual(1);
  });

  it('the onboarding certificate on device endpoints gets 403 and the device never onboards', async () => {
    const { dev, states } = device(2, new WrongCertificate(transport));
    dev.start();
    expect(await until(() => (dev.stats().endpoints.config?.clientError ?? 0) >= 1, BOUND_MS), 'a refused config poll within 45 s').toBe(true);
    dev.stop();
    expect(states).not.toContain('onboarded');
    expect(dev.stats().endpoints.register).toMatchObject({ ok: 1 });
    const stats = (await admin.stats()) as { byApi: { v1: { endpoints: Record<string, { byStatus: Record<string, number> }> } } };
    expect(stats.byApi.v1.endpoints.config!.byStatus['403']).toBeGreaterThanOrEqual(1);
    expect(stats.byApi.v1.endpoints.certs!.byStatus['403']).toBeGreaterThanOrEqual(1);
  });

  it('the deprecated GET /config onboards too, with the configuration hash computed on the device', async () => {
    const { dev } = device(3, transport, { v1ConfigMethod: 'GET' });
    dev.start();
    expect(await until(() => dev.lifecycle === 'onboarded' && dev.configHash !== '', BOUND_MS), 'onboarded with a configuration within 45 s').toBe(true);
    const first = dev.configHash;
    dev.stop();
    expect(dev.uuid).toBe((await admin.device(ids[3]!.serial)).uuid);
    // The GET form carries no hash: the device computed one over the same bytes the controller hashes.
    expect(first).toBe((await admin.deviceConfig(ids[3]!.serial)).configHash);
    expect(dev.stats().findings).toBe(0);
  });
});
