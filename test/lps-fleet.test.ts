// Integration: a few virtual devices, the embedded controller (its core in process, answering on
// the fake clock) and embedded LPSs (real HTTP servers on 127.0.0.1 with state files, reached
// through the fleet's LPS transports, undici with the '<uuid>.lps.invalid' Host header). The
// controller puts each device's LPS address and token into its configuration; the LPS admin API
// switches profiles and issues commands. Between fake-clock steps the test waits for real I/O.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { info } from '../src/gen/eve-types.js';
import type { DeviceOptions } from '../src/device/device-options.js';
import type { Transport, TransportRequest, TransportResponse } from '../src/device/ports.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import { REBOOT_DOWNTIME_MS, VirtualDevice } from '../src/device/virtual-device.js';
import { behaviourOf, FleetLayout } from '../src/fleet/fleet-layout.js';
import { LpsFleet } from '../src/fleet/lps-fleet.js';
import { loadOrCreateControllerPki } from '../src/identity/controller-pki.js';
import { createDeviceIdentity } from '../src/identity/device-identity.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import { openRequest } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import type { GroupSpec, Scenario } from '../src/scenario/scenario-types.js';
import { ControllerCore } from '../src/servers/controller/controller-core.js';
import { resolveControllerOptions } from '../src/servers/controller/controller-options.js';
import { DEFAULT_GROUP } from '../src/servers/controller/fleet-spec.js';
import { createLpsServer, type LpsServer } from '../src/servers/lps/lps-server.js';
import { BEHAVIOUR, FakeTime } from './device-harness.js';

const S = info.ZSwState;
const dir = mkdtempSync(join(tmpdir(), 'evesim-lps-fleet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const NOW = Date.now();
const ca = createFleetCa('lps-fleet', NOW);
const pki = loadOrCreateControllerPki(join(dir, 'controller'));

const FAST_LPS: Record<string, string> = {
  'timer.config.interval': '10',
  'timer.lps.profile.interval': '5',
  'timer.lps.radio.interval': '5',
  'timer.lps.appinfo.interval': '10',
  'timer.lps.devinfo.interval': '10',
  'timer.location.app.interval': '10',
};

/** Waits until no request to the LPS is in flight (and the answers' continuations have run). */
class CountingTransport implements Transport {
  pending = 0;
  constructor(private readonly inner: Transport) {}
  async request(req: TransportRequest): Promise<TransportResponse> {
    this.pending++;
    try {
      return await this.inner.request(req);
    } finally {
      this.pending--;
    }
  }
}

interface Fleet {
  time: FakeTime;
  core: ControllerCore;
  devices: VirtualDevice[];
  lpsFleet: LpsFleet;
  /** ZInfoMsg the controller received, by device. */
  infos(i: number): info.ZInfoMsg[];
  step(ms: number): Promise<void>;
}

async function fleetOf(time: FakeTime, n: number, group: Partial<GroupSpec>, name: string): Promise<Fleet> {
  const spec: GroupSpec = {
    ...DEFAULT_GROUP,
    name,
    count: n,
    eveVersion: BEHAVIOUR.eveVersion,
    appStepMs: 1000,
    apps: [
      { name: 'web', activate: true, profiles: ['normal'], logLinesPerSec: 0, flowsPerMessage: 0 },
      { name: 'backup', activate: true, profiles: ['maintenance'], logLinesPerSec: 0, flowsPerMessage: 0 },
      { name: 'db', activate: true, profiles: [], logLinesPerSec: 0, flowsPerMessage: 0 },
    ],
    globalProfile: 'normal',
    configItems: FAST_LPS,
    ...group,
  };
  const core = new ControllerCore(resolveControllerOptions({ stateDir: join(dir, 'controller'), onboardingCaPems: [ca.certPem] }), pki);
  const identities = Array.from({ length: n }, (_, i) => createDeviceIdentity(ca, name, i, NOW).identity);
  core.registry.setFleet({ groups: [spec], devices: identities.map((id) => ({ serial: id.serial, group: name })) });
  const received = new Map<number, Uint8Array[]>();
  const scenario: Pick<Scenario, 'seed' | 'groups' | 'sites'> = { seed: 5, groups: [spec] };
  const lpsFleet = new LpsFleet(scenario, FleetLayout.of(scenario), time, []);
  const counted = new Map<string, CountingTransport>();
  const transports: CountingTransport[] = [];
  const devices = identities.map((identity, index) => {
    const controller: Transport = {
      async request(req) {
        if (req.endpoint === 'info' && req.body) (received.get(index) ?? received.set(index, []).get(index)!).push(req.body);
        const r = core.handle(req.method, req.path, req.body ?? new Uint8Array(0), time.now());
        return { status: r.status, headers: r.contentType ? { 'content-type': r.contentType } : {}, body: r.body ?? new Uint8Array(0) };
      },
    };
    const ports = lpsFleet.portsFor(index);
    const opts: DeviceOptions = {
      index,
      identity,
      behaviour: behaviourOf(spec),
      rootCertPem: pki.root.certPem,
      clock: time,
      scheduler: time,
      transport: controller,
      rng: SeededRng.create(5, index, 'device'),
      lps: {
        ...ports,
        transportFor: (a) => {
          let t = counted.get(a.baseUrl);
          if (t === undefined) {
            counted.set(a.baseUrl, (t = new CountingTransport(ports.transportFor(a))));
            transports.push(t);
          }
          return t;
        },
      },
    };
    return new VirtualDevice(opts);
  });
  const ioIdle = async () => {
    for (let quiet = 0; quiet < 3; ) {
      await new Promise<void>((r) => setImmediate(r));
      if (transports.some((t) => t.pending > 0)) {
        quiet = 0;
        await new Promise<void>((r) => setTimeout(r, 1));
      } else quiet++;
    }
  };
  const f: Fleet = {
    time,
    core,
    devices,
    lpsFleet,
    infos: (i) =>
      (received.get(i) ?? []).map((b) => Msg.ZInfoMsg.decode(openRequest(b, () => ({ publicKey: identities[i]!.deviceKey })).payload)),
    step: async (ms) => {
      const end = time.now() + ms;
      while (time.now() < end) {
        await time.advance(Math.min(500, end - time.now()));
        await ioIdle();
      }
    },
  };
  for (const d of devices) d.start();
  return f;
}

async function admin<T>(server: LpsServer, method: 'GET' | 'PUT' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await request(`${server.adminUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.body.json()) as T;
  expect(res.statusCode, JSON.stringify(json)).toBe(200);
  return json;
}

type Commands = { commands: { device: string; command: string; issuedAt: number; completedAt: number | null }[] };

async function lpsFor(time: FakeTime, name: string, port = 0): Promise<LpsServer> {
  return createLpsServer({ port, siteName: name, token: `${name}-token`, stateFile: join(dir, `${name}.json`), persistDelayMs: 0 }, { now: () => time.now() });
}

const stateOf = (d: VirtualDevice, name: string) => d.appStates().find((a) => a.name === name)?.state;

describe('devices, embedded controller and embedded LPS together', () => {
  it('profile switch stops and starts apps (ZiApp, ZInfoDevice.local_profile); app restarts complete and are timed', async () => {
    const time = new FakeTime(NOW);
    const lps = await lpsFor(time, 'site-p');
    try {
      const port = Number(lps.address.split(':').pop());
      const f = await fleetOf(time, 3, { lps: { port, token: lps.token, share: 1 } }, 'p');
      await f.step(90_000);
      expect(f.devices.map((d) => d.lifecycle)).toEqual(['onboarded', 'onboarded', 'onboarded']);
      expect(f.devices.map((d) => [stateOf(d, 'web'), stateOf(d, 'backup')])).toEqual(Array(3).fill([S.RUNNING, S.HALTED]));
      // The LPS knows every device by the UUID in its Host header.
      const listed = await admin<{ devices: { uuid: string | null }[] }>(lps, 'GET', '/admin/devices');
      expect(listed.devices.map((d) => d.uuid).sort()).toEqual(f.devices.map((d) => d.uuid).sort());

      await admin(lps, 'PUT', '/admin/profile', { profile: 'maintenance' });
      await f.step(20_000);
      for (let i = 0; i < 3; i++) {
        const d = f.devices[i]!;
        expect([stateOf(d, 'web'), stateOf(d, 'backup'), stateOf(d, 'db')]).toEqual([S.HALTED, S.RUNNING, S.RUNNING]);
        const infos = f.infos(i);
        const web = d.appStates().find((a) => a.name === 'web')!.uuid;
        expect(infos.filter((m) => m.ainfo?.AppID === web).map((m) => m.ainfo!.state).slice(-2)).toEqual([S.HALTING, S.HALTED]);
        expect(infos.filter((m) => m.dinfo).pop()!.dinfo!.local_profile).toBe('maintenance');
      }

      await admin(lps, 'POST', '/admin/app-commands', { devices: 'all', app: { name: 'db' }, command: 'restart' });
      await f.step(40_000);
      const cmds = (await admin<Commands>(lps, 'GET', '/admin/commands')).commands;
      expect(cmds).toHaveLength(3);
      for (const c of cmds) {
        expect(c.completedAt).not.toBeNull();
        // Accepted at an appinfo poll (≤ 11 s), restarted in 3 steps, reported at the next poll.
        expect(c.completedAt! - c.issuedAt).toBeGreaterThan(3_000);
        expect(c.completedAt! - c.issuedAt).toBeLessThan(30_000);
      }
      // The fleet's LPS figures: requests per endpoint, no token trouble, radios counted.
      const fig = f.lpsFleet.figures(f.devices, f.time.now())!;
      expect(fig.agent.appCommandsCompleted).toBe(3);
      expect(fig.tokenRejected).toEqual({});
      expect(Object.values(fig.radio).reduce((a, b) => a + b, 0)).toBe(3);
      for (const d of f.devices) d.stop();
      await f.lpsFleet.destroy();
    } finally {
      await lps.stop();
    }
  });

  it('a device whose token does not match ignores its LPS', async () => {
    const time = new FakeTime(NOW);
    const lps = await lpsFor(time, 'site-t');
    try {
      const port = Number(lps.address.split(':').pop());
      const f = await fleetOf(time, 2, { lps: { port, token: 'some-other-token', share: 1 } }, 't');
      await f.step(60_000);
      await admin(lps, 'PUT', '/admin/profile', { profile: 'maintenance' });
      await admin(lps, 'POST', '/admin/device-commands', { devices: f.devices.map((d) => d.uuid), command: 'shutdown' });
      await f.step(30_000);
      for (const d of f.devices) expect([stateOf(d, 'web'), stateOf(d, 'backup')]).toEqual([S.RUNNING, S.HALTED]);
      const cmds = (await admin<Commands>(lps, 'GET', '/admin/commands')).commands;
      expect(cmds.every((c) => c.completedAt === null)).toBe(true);
      const fig = f.lpsFleet.figures(f.devices, f.time.now())!;
      expect(fig.tokenRejected['lps.local_profile']).toBeGreaterThan(0);
      expect(fig.tokenRejected['lps.devinfo']).toBeGreaterThan(0);
      for (const d of f.devices) d.stop();
      await f.lpsFleet.destroy();
    } finally {
      await lps.stop();
    }
  });

  it('a device that reboots in the middle of an app command finishes it after the restart', async () => {
    const time = new FakeTime(NOW);
    const lps = await lpsFor(time, 'site-r');
    try {
      const port = Number(lps.address.split(':').pop());
      const f = await fleetOf(time, 1, { lps: { port, token: lps.token, share: 1 }, appStepMs: 4000 }, 'r');
      await f.step(90_000);
      const d = f.devices[0]!;
      const db = d.appStates().find((a) => a.name === 'db')!.uuid;
      await admin(lps, 'POST', '/admin/app-commands', { devices: [d.uuid], app: { name: 'db' }, command: 'restart' });
      for (let i = 0; i < 40 && d.lps!.agent.appCommand(db) === undefined; i++) await f.step(500);
      expect(d.lps!.agent.appCommand(db)).toMatchObject({ completed: false });
      d.rebootNow();
      await f.step(5_000);
      expect((await admin<Commands>(lps, 'GET', '/admin/commands')).commands[0]!.completedAt).toBeNull();
      await f.step(REBOOT_DOWNTIME_MS + 120_000);
      const [c] = (await admin<Commands>(lps, 'GET', '/admin/commands')).commands;
      expect(c!.completedAt).not.toBeNull();
      expect(f.infos(0).filter((m) => m.dinfo).pop()!.dinfo!.last_boot_reason).toBe(info.BootReason.BOOT_REASON_POWER_FAIL);
      d.stop();
      await f.lpsFleet.destroy();
    } finally {
      await lps.stop();
    }
  });

  it('an LPS restarted between the request and its delivery still delivers the command (persisted)', async () => {
    const time = new FakeTime(NOW);
    let lps = await lpsFor(time, 'site-s');
    const port = Number(lps.address.split(':').pop());
    try {
      const f = await fleetOf(time, 2, { lps: { port, token: lps.token, share: 1 } }, 's');
      await f.step(90_000);
      const uuids = f.devices.map((d) => d.uuid);
      const issued = await admin<{ issued: { timestamp: number }[] }>(lps, 'POST', '/admin/device-commands', { devices: uuids, command: 'shutdown' });
      // The LPS goes down before any device polled devinfo again, and comes back on the same port.
      await lps.stop();
      await f.step(15_000);
      lps = await lpsFor(time, 'site-s', port);
      await f.step(30_000);
      const cmds = (await admin<Commands>(lps, 'GET', '/admin/commands')).commands;
      expect(cmds.map((c) => c.command)).toEqual(['shutdown', 'shutdown']);
      expect(cmds.every((c) => c.completedAt !== null)).toBe(true);
      for (const d of f.devices) {
        expect([stateOf(d, 'web'), stateOf(d, 'db')]).toEqual([S.HALTED, S.HALTED]);
        expect(d.deviceState).toBe(info.ZDeviceState.ZDEVICE_STATE_PREPARED_POWEROFF);
        expect(d.lps!.agent.lastDeviceCommandTimestamp).toBe(issued.issued[f.devices.indexOf(d)]!.timestamp);
      }
      // While the LPS was down the devices got no answer: transport errors, counted, not fatal.
      expect(f.lpsFleet.stats.endpoints['lps.devinfo'].transportErrors + f.lpsFleet.stats.endpoints['lps.radio'].transportErrors).toBeGreaterThan(0);
      for (const d of f.devices) d.stop();
      await f.lpsFleet.destroy();
    } finally {
      await lps.stop();
    }
  });
});
