import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { info, profile } from '../src/gen/eve-types.js';
import { Msg } from '../src/protocol/messages.js';
import { DEFAULT_DEVICE_TIMERS } from '../src/device/core/eve-timers.js';
import { LpsAgent, type LpsDeviceView } from '../src/device/lps/lps-agent.js';
import type { LpsAppView } from '../src/device/lps/lps-app-commands.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import type { Transport, TransportRequest, TransportResponse } from '../src/device/ports.js';
import { ControllerTransport } from '../src/transport/controller-transport.js';
import { createLpsServer, deviceLpsAddress, runLpsForeground, startLpsInThread, type LpsServer } from '../src/servers/lps/index.js';
import { ManualClock, ManualScheduler } from './lps-test-fakes.js';

const DEV_A = 'aaaaaaaa-0000-4000-8000-000000000001';
const DEV_B = 'bbbbbbbb-0000-4000-8000-000000000002';
const APP = 'c0ffee00-1111-4222-8333-444455556666';
const MIME = 'application/x-proto-binary';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'evesim-lps-'));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function server(opts: Parameters<typeof createLpsServer>[0] = {}): Promise<LpsServer> {
  const s = await createLpsServer({ token: 'site-token', ...opts });
  cleanups.push(() => s.stop());
  return s;
}

async function call(s: LpsServer, method: 'GET' | 'POST', path: string, body?: Uint8Array, headers: Record<string, string> = {}) {
  const res = await request(s.url + path, {
    method,
    body: body === undefined ? undefined : Buffer.from(body),
    headers: { ...(body !== undefined ? { 'content-type': MIME } : {}), ...headers },
  });
  const buf = new Uint8Array(await res.body.arrayBuffer());
  return { status: res.statusCode, type: res.headers['content-type'] as string | undefined, body: buf };
}

async function admin(s: LpsServer, method: string, path: string, json?: unknown) {
  const res = await request(s.adminUrl + path, {
    method: method as 'GET',
    body: json === undefined ? undefined : JSON.stringify(json),
    headers: json === undefined ? {} : { 'content-type': 'application/json' },
  });
  return { status: res.statusCode, json: (await res.body.json()) as Record<string, any> };
}

const devinfo = (uuid: string, last = 0) => Msg.LocalDevInfo.encode({ device_uuid: uuid, state: info.ZDeviceState.ZDEVICE_STATE_ONLINE, last_cmd_timestamp: last });
const appinfo = (last = 0) => Msg.LocalAppInfoList.encode({ apps_info: [{ id: APP, name: 'web', state: info.ZSwState.RUNNING, last_cmd_timestamp: last }] });

describe('embedded LPS: device API over HTTP', () => {
  it('serves every endpoint, with the server_token in every reply that has a body', async () => {
    const s = await server({ profile: 'site-profile' });
    const host = { host: deviceLpsAddress(DEV_A, 8888) };

    const lp = await call(s, 'GET', '/api/v1/local_profile', undefined, host);
    expect(lp.status).toBe(200);
    expect(lp.type).toBe(MIME);
    expect(Msg.LocalProfile.decode(lp.body)).toEqual({ local_profile: 'site-profile', server_token: 'site-token' });

    expect((await call(s, 'POST', '/api/v1/radio', Msg.RadioStatus.encode({}), host)).status).toBe(204);
    expect((await call(s, 'POST', '/api/v1/appinfo', appinfo(), host)).status).toBe(204);
    expect((await call(s, 'POST', '/api/v1/devinfo', devinfo(DEV_A), host)).status).toBe(204);
    const loc = await call(s, 'POST', '/api/v1/location', Msg.ZInfoLocation.encode({ latitude: 1, longitude: 2 }), host);
    expect(loc.status).toBe(200);
    expect(loc.body.length).toBe(0);
    expect((await call(s, 'POST', '/api/v1/appbootinfo', Msg.AppBootInfoList.encode({}), host)).status).toBe(204);
    expect((await call(s, 'POST', '/api/v1/network', Msg.NetworkInfo.encode({}), host)).status).toBe(204);

    expect((await admin(s, 'PUT', '/admin/radio', { radioSilence: true, devices: [DEV_A] })).status).toBe(200);
    expect((await admin(s, 'POST', '/admin/app-commands', { devices: [DEV_A], app: { name: 'web' }, command: 'restart' })).status).toBe(200);
    expect((await admin(s, 'POST', '/admin/device-commands', { devices: [DEV_A], command: 'poweroff' })).status).toBe(200);

    const radio = await call(s, 'POST', '/api/v1/radio', Msg.RadioStatus.encode({}), host);
    expect(radio.status).toBe(200);
    expect(Msg.RadioConfig.decode(radio.body)).toEqual({ server_token: 'site-token', radio_silence: true });
    const cmds = Msg.LocalAppCmdList.decode((await call(s, 'POST', '/api/v1/appinfo', appinfo(), host)).body);
    expect(cmds.server_token).toBe('site-token');
    expect(cmds.app_commands).toEqual([{ displayname: 'web', timestamp: expect.any(Number), command: profile.AppCommand.Command.COMMAND_RESTART }]);
    const dc = Msg.LocalDevCmd.decode((await call(s, 'POST', '/api/v1/devinfo', devinfo(DEV_A), host)).body);
    expect(dc).toEqual({ server_token: 'site-token', timestamp: expect.any(Number), command: profile.LocalDevCmd.Command.COMMAND_GRACEFUL_POWEROFF });
    // Distinct timestamps for distinct requests.
    expect(dc.timestamp).not.toBe(cmds.app_commands![0]!.timestamp);
  });

  it('answers bad requests with a status and a text naming the problem, and throttles by 404', async () => {
    const s = await server();
    const h = { host: '10.1.0.2:8888' };
    const unknown = await call(s, 'GET', '/api/v1/nosuch', undefined, h);
    expect(unknown.status).toBe(404);
    expect(Buffer.from(unknown.body).toString()).toMatch(/no LPS endpoint \/api\/v1\/nosuch/);
    expect((await call(s, 'POST', '/api/v1/local_profile', new Uint8Array(0), h)).status).toBe(405);
    const noMime = await call(s, 'POST', '/api/v1/radio', new Uint8Array(0), { ...h, 'content-type': 'application/json' });
    expect(noMime.status).toBe(415);
    const garbage = await call(s, 'POST', '/api/v1/devinfo', new Uint8Array([0xff, 0xff, 0xff, 0xff]), h);
    expect(garbage.status).toBe(400);
    expect(Buffer.from(garbage.body).toString()).toMatch(/cannot decode org\.lfedge\.eve\.profile\.LocalDevInfo/);

    expect((await admin(s, 'PUT', '/admin/throttle', { endpoints: ['appinfo', 'location'] })).status).toBe(200);
    expect((await call(s, 'POST', '/api/v1/appinfo', appinfo(), h)).status).toBe(404);
    expect((await call(s, 'POST', '/api/v1/location', Msg.ZInfoLocation.encode({}), h)).status).toBe(404);
    expect((await call(s, 'POST', '/api/v1/devinfo', devinfo(DEV_B), h)).status).toBe(204);
    // A device override replaces the site list.
    await admin(s, 'PUT', '/admin/throttle', { endpoints: [], devices: [DEV_B] });
    expect((await call(s, 'POST', '/api/v1/appinfo', appinfo(), h)).status).toBe(204);
    const stats = await admin(s, 'GET', '/admin/stats');
    expect(stats.json.answers.appinfo).toEqual({ 404: 1, 204: 1 });
    expect(stats.json.answers.unknown).toEqual({ 404: 1 });
  });

  it('tells devices apart by Host and source address, bound to the UUID from devinfo', async () => {
    const s = await server();
    const a = { host: '10.1.0.2:8888' };
    const b = { host: '10.1.0.3:8888' };
    // Commands queued for both before either called.
    await admin(s, 'POST', '/admin/device-commands', { devices: [DEV_A], command: 'reboot' });
    await admin(s, 'PUT', '/admin/profile', { profile: 'only-b', devices: [DEV_B] });
    // Before devinfo the peers are anonymous.
    expect(Msg.LocalProfile.decode((await call(s, 'GET', '/api/v1/local_profile', undefined, b)).body).local_profile).toBe('');
    await call(s, 'POST', '/api/v1/radio', Msg.RadioStatus.encode({ radio_silence: false }), a);
    let list = await admin(s, 'GET', '/admin/devices');
    expect(list.json.devices.map((d: { key: string }) => d.key).sort()).toEqual([DEV_A, DEV_B, 'peer:10.1.0.2:8888|127.0.0.1', 'peer:10.1.0.3:8888|127.0.0.1'].sort());
    // devinfo binds: the reboot goes to A only, the profile to B only.
    const ra = Msg.LocalDevCmd.decode((await call(s, 'POST', '/api/v1/devinfo', devinfo(DEV_A), a)).body);
    expect(ra.command).toBe(profile.LocalDevCmd.Command.COMMAND_GRACEFUL_REBOOT);
    expect((await call(s, 'POST', '/api/v1/devinfo', devinfo(DEV_B), b)).status).toBe(204);
    expect(Msg.LocalProfile.decode((await call(s, 'GET', '/api/v1/local_profile', undefined, b)).body).local_profile).toBe('only-b');
    expect(Msg.LocalProfile.decode((await call(s, 'GET', '/api/v1/local_profile', undefined, a)).body).local_profile).toBe('');
    // The anonymous records were folded into the devices.
    list = await admin(s, 'GET', '/admin/devices');
    expect(list.json.devices.map((d: { key: string }) => d.key).sort()).toEqual([DEV_A, DEV_B]);
    const detailA = await admin(s, 'GET', `/admin/devices/${DEV_A}`);
    expect(detailA.json.posts.radio.count).toBe(1);
    expect(detailA.json.posts.devinfo.count).toBe(1);
    expect(detailA.json.peer).toBe('10.1.0.2:8888|127.0.0.1');
  });
});

describe('embedded LPS: admin API', () => {
  it('validates input and names the field', async () => {
    const s = await server();
    const cases: [string, string, unknown, number, string | undefined][] = [
      ['POST', '/admin/app-commands', { devices: [DEV_A], app: {}, command: 'restart' }, 400, 'app'],
      ['POST', '/admin/app-commands', { devices: [DEV_A], app: { id: 'x' }, command: 'restart' }, 400, 'app.id'],
      ['POST', '/admin/app-commands', { devices: [DEV_A], app: { name: 'web' }, command: 'explode' }, 400, 'command'],
      ['POST', '/admin/app-commands', { devices: [], app: { name: 'web' }, command: 'restart' }, 400, 'devices'],
      ['POST', '/admin/device-commands', { devices: ['nobody'], command: 'reboot' }, 404, 'devices[0]'],
      ['POST', '/admin/device-commands', { devices: [DEV_A], command: 'format' }, 400, 'command'],
      ['PUT', '/admin/radio', { radioSilence: 'yes' }, 400, 'radioSilence'],
      ['PUT', '/admin/throttle', { endpoints: ['radio', 'bogus'] }, 400, 'endpoints[1]'],
      ['PUT', '/admin/profile', { profile: 3 }, 400, 'profile'],
      ['GET', '/admin/nosuch', undefined, 404, undefined],
      ['GET', '/admin/profile', undefined, 405, undefined],
    ];
    for (const [m, p, body, status, field] of cases) {
      const r = await admin(s, m, p, body);
      expect(r.status, `${m} ${p} ${JSON.stringify(body)}`).toBe(status);
      expect(typeof r.json.error).toBe('string');
      expect(r.json.field).toBe(field);
    }
  });

  it('records posts with the last body decoded, and each command with issue and completion time', async () => {
    let t = 1_000_000;
    const s = await createLpsServer({ token: 'tk' }, { now: () => t });
    cleanups.push(() => s.stop());
    const h = { host: deviceLpsAddress(DEV_A, 8888) };
    await call(s, 'POST', '/api/v1/location', Msg.ZInfoLocation.encode({ latitude: 48.5, longitude: 11.25, logicallabel: 'wwan0' }), h);
    await call(s, 'POST', '/api/v1/location', Msg.ZInfoLocation.encode({ latitude: 48.6, longitude: 11.25, logicallabel: 'wwan0' }), h);
    const issuedApp = await admin(s, 'POST', '/admin/app-commands', { devices: [DEV_A], app: { id: APP }, command: 'purge' });
    const tsApp = issuedApp.json.issued[0].timestamp as number;
    const issuedDev = await admin(s, 'POST', '/admin/device-commands', { devices: 'all', command: 'shutdown' });
    expect(issuedDev.json.issued.map((i: { device: string }) => i.device)).toEqual([DEV_A]);
    const tsDev = issuedDev.json.issued[0].timestamp as number;
    expect(tsDev).toBeGreaterThan(tsApp);
    let pending = await admin(s, 'GET', '/admin/commands?pending=1');
    expect(pending.json.commands).toHaveLength(2);
    t += 4000;
    await call(s, 'POST', '/api/v1/appinfo', appinfo(tsApp), h);
    t += 3000;
    await call(s, 'POST', '/api/v1/devinfo', devinfo(DEV_A, tsDev), h);
    const all = await admin(s, 'GET', `/admin/commands?device=${DEV_A}`);
    expect(all.json.commands).toEqual([
      { device: DEV_A, kind: 'app', app: { id: APP }, command: 'purge', timestamp: tsApp, issuedAt: 1_000_000, completedAt: 1_004_000 },
      { device: DEV_A, kind: 'device', command: 'shutdown', timestamp: tsDev, issuedAt: 1_000_000, completedAt: 1_007_000 },
    ]);
    pending = await admin(s, 'GET', '/admin/commands?pending=1');
    expect(pending.json.commands).toHaveLength(0);
    const d = await admin(s, 'GET', `/admin/devices/${DEV_A}`);
    expect(d.json.posts.location).toMatchObject({ count: 2, lastAt: 1_000_000, last: { latitude: 48.6, longitude: 11.25, logicallabel: 'wwan0' } });
    expect(d.json.posts.appinfo.last.apps_info[0]).toMatchObject({ id: APP, name: 'web', state: 'RUNNING', last_cmd_timestamp: String(tsApp) });
    const site = await admin(s, 'GET', '/admin/site');
    expect(site.json).toMatchObject({ token: 'tk', devices: 1, identifiedDevices: 1, appCommands: { issued: 1, completed: 1 }, deviceCommands: { issued: 1, completed: 1 } });
  });

  it('streams signals to a device when the admin changes something for it', async () => {
    const s = await server();
    const res = await request(`${s.url}/api/v1/signal`, { method: 'GET', headers: { host: deviceLpsAddress(DEV_A, 8888) } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    const lines: string[] = [];
    const got = new Promise<void>((resolve) => {
      res.body.on('data', (c: Buffer) => {
        lines.push(...c.toString().split('\n').filter(Boolean));
        if (lines.length >= 2) resolve();
      });
    });
    await admin(s, 'PUT', '/admin/radio', { radioSilence: true, devices: [DEV_A] });
    await admin(s, 'POST', '/admin/app-commands', { devices: [DEV_B], app: { name: 'x' }, command: 'restart' }); // not for A
    await admin(s, 'POST', '/admin/device-commands', { devices: [DEV_A], command: 'collect-info' });
    await got;
    expect(lines.map((l) => JSON.parse(l))).toEqual([{ pendingChanges: ['CONFIG_ENDPOINT_RADIO'] }, { pendingChanges: ['CONFIG_ENDPOINT_DEV_INFO'] }]);
    res.body.destroy();
  });
});

/** A transport that counts requests in flight, so a test can wait for real HTTP answers. */
class CountingTransport implements Transport {
  inFlight = 0;
  constructor(public inner: Transport) {}
  async request(req: TransportRequest): Promise<TransportResponse> {
    this.inFlight++;
    try {
      return await this.inner.request(req);
    } finally {
      this.inFlight--;
    }
  }
  /** Waits for every request in flight to be answered (30 s at most: real HTTP on a loaded machine). */
  async idle(): Promise<void> {
    const end = Date.now() + 30_000;
    while (this.inFlight > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    if (this.inFlight > 0) throw new Error(`${this.inFlight} LPS request(s) still unanswered after 30 s`);
    await new Promise((r) => setImmediate(r));
  }
}

describe('embedded LPS with the device agent', () => {
  it('loses no command when it restarts between the request and its delivery', async () => {
    const dir = tempDir();
    const stateFile = join(dir, 'lps-state.json');
    let s = await createLpsServer({ stateFile });
    const port = Number(new URL(s.url).port);
    const token = s.token;
    // The admin issues a restart; the LPS goes down before any device asked for it.
    const issued = await admin(s, 'POST', '/admin/app-commands', { devices: [DEV_A], app: { name: 'web' }, command: 'restart' });
    const ts = issued.json.issued[0].timestamp as number;
    await s.stop();
    expect(statSync(stateFile).mode & 0o777).toBe(0o600);
    s = await createLpsServer({ stateFile, port });
    cleanups.push(() => s.stop());
    expect(s.token).toBe(token);

    // A virtual device (the agent) talks to it over real HTTP.
    const clock = new ManualClock();
    const sched = new ManualScheduler(clock);
    const http = new ControllerTransport({ baseUrl: s.url, connections: 2 });
    cleanups.push(() => http.close());
    const transport = new CountingTransport(http);
    const apps: LpsAppView[] = [{ id: APP, name: 'web', state: info.ZSwState.RUNNING }];
    const started: number[] = [];
    const view: LpsDeviceView = {
      deviceUuid: DEV_A,
      apps: () => apps,
      deviceState: () => info.ZDeviceState.ZDEVICE_STATE_ONLINE,
      bootTime: () => 0,
      lastBootReason: () => info.BootReason.BOOT_REASON_FIRST,
      radioStatus: () => ({}),
      location: () => undefined,
    };
    const agent = new LpsAgent({
      deviceIndex: 0,
      clock,
      scheduler: sched,
      rng: SeededRng.create(1, 0, 'lps'),
      transportFor: () => transport,
      view,
      host: {
        onLocalProfile: () => {},
        onAppCommand: (_id, _kind, t) => started.push(t),
        onDeviceCommand: () => true,
        onRadioSilence: () => {},
      },
    });
    agent.configure(deviceLpsAddress(DEV_A, port), token, DEFAULT_DEVICE_TIMERS);
    await sched.advance(0);
    await transport.idle();
    expect(started).toEqual([ts]);
    expect(agent.stats.tokenRejected).toBe(0);
    agent.appCommandDone(APP);
    await sched.advance(70_000);
    await transport.idle();
    const cmds = await admin(s, 'GET', `/admin/commands?device=${DEV_A}`);
    expect(cmds.json.commands).toEqual([expect.objectContaining({ kind: 'app', command: 'restart', timestamp: ts, completedAt: expect.any(Number) })]);
    agent.halt();
  });
});

describe('embedded LPS: thread and foreground', () => {
  it('runs in a thread of its own', async () => {
    const lps = await startLpsInThread({ token: 'thread-token', siteName: 'threaded' });
    cleanups.push(() => lps.stop());
    expect(lps.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(lps.token).toBe('thread-token');
    const res = await request(`${lps.url}/api/v1/local_profile`);
    expect(Msg.LocalProfile.decode(new Uint8Array(await res.body.arrayBuffer())).server_token).toBe('thread-token');
    const site = await request(`${lps.adminUrl}/admin/site`);
    expect(((await site.body.json()) as { token: string }).token).toBe('thread-token');
  });

  it('runs in the foreground until told to stop', async () => {
    let stop!: () => void;
    const until = new Promise<void>((r) => (stop = r));
    let out = '';
    const done = runLpsForeground({ port: 0, token: 'fg', out: { write: (s: string) => (out += s) }, until });
    const end = Date.now() + 30_000;
    while (!out.includes('token') && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(out).toMatch(/device API {3}http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toMatch(/token {8}fg/);
    stop();
    await done;
    expect(out).toMatch(/stopped/);
  });
});
