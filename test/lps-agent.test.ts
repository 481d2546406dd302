import { describe, expect, it } from 'vitest';
import { info, profile } from '../src/gen/eve-types.js';
import { Msg } from '../src/protocol/messages.js';
import { DEFAULT_DEVICE_TIMERS } from '../src/device/core/eve-timers.js';
import { LpsAgent, LOCATION_THROTTLED_MS, type LpsAgentHost, type LpsDeviceCommand, type LpsDeviceView } from '../src/device/lps/lps-agent.js';
import type { LpsThrottleRule } from '../src/device/lps/lps-ports.js';
import type { LpsAddress } from '../src/device/lps/lps-address.js';
import type { LpsAppView } from '../src/device/lps/lps-app-commands.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import type { TransportRequest } from '../src/device/ports.js';
import { FakeTransport, ManualClock, ManualScheduler, NOT_FOUND, NO_CONTENT, protoReply, type Answer } from './lps-test-fakes.js';

const DEV = '6f1b7c2e-0d1a-4c55-9a39-1b2c3d4e5f60';
const APP1 = '11111111-2222-4333-8444-555555555555';
const APP2 = '99999999-8888-4777-8666-555555555555';
const TIMERS = DEFAULT_DEVICE_TIMERS;
const RC = profile.AppCommand.Command;
const DC = profile.LocalDevCmd.Command;

interface FakeLps {
  token: string;
  profile: string;
  radio: boolean | undefined;
  appCommands: profile.AppCommand[];
  devCmd: profile.LocalDevCmd | undefined;
  /** Forced status per endpoint key. */
  status: Partial<Record<string, number>>;
}

function harness(o: { throttleRule?: LpsThrottleRule; withGnss?: boolean; extras?: boolean; acceptDeviceCommands?: () => boolean; radioFail?: string; radioDelayMs?: number } = {}) {
  const clock = new ManualClock();
  const sched = new ManualScheduler(clock);
  const lps: FakeLps = { token: 'tok', profile: '', radio: undefined, appCommands: [], devCmd: undefined, status: {} };
  const events = {
    profiles: [] as string[],
    appCmds: [] as { appId: string; kind: string; ts: number }[],
    devCmds: [] as { cmd: LpsDeviceCommand; ts: number }[],
    radio: [] as boolean[],
    persisted: 0,
  };
  const apps: LpsAppView[] = [
    { id: APP1, name: 'web', state: info.ZSwState.RUNNING },
    { id: APP2, name: 'db', state: info.ZSwState.RUNNING },
  ];
  const answer = (req: TransportRequest): Answer => {
    const forced = lps.status[req.endpoint as string];
    if (forced !== undefined) return { status: forced, headers: {}, body: new Uint8Array(0) };
    switch (req.endpoint as string) {
      case 'lps.local_profile':
        return protoReply(Msg.LocalProfile.encode({ local_profile: lps.profile, server_token: lps.token }));
      case 'lps.radio':
        return lps.radio === undefined ? NO_CONTENT : protoReply(Msg.RadioConfig.encode({ server_token: lps.token, radio_silence: lps.radio }));
      case 'lps.appinfo':
        return lps.appCommands.length === 0 ? NO_CONTENT : protoReply(Msg.LocalAppCmdList.encode({ server_token: lps.token, app_commands: lps.appCommands }));
      case 'lps.devinfo':
        return lps.devCmd === undefined ? NO_CONTENT : protoReply(Msg.LocalDevCmd.encode({ ...lps.devCmd, server_token: lps.token }));
      case 'lps.location':
        return { status: 200, headers: {}, body: new Uint8Array(0) };
      case 'lps.appbootinfo':
        return protoReply(Msg.AppBootConfigList.encode({ server_token: lps.token, app_configs: [{ id: APP1, usb_boot: 1 }] }));
      case 'lps.network':
        return protoReply(Msg.LocalNetworkConfig.encode({ server_token: lps.token, ports: [] }));
      default:
        return NOT_FOUND;
    }
  };
  const transport = new FakeTransport(clock, answer);
  const addresses: LpsAddress[] = [];
  const view: LpsDeviceView = {
    deviceUuid: DEV,
    apps: () => apps,
    deviceState: () => info.ZDeviceState.ZDEVICE_STATE_ONLINE,
    bootTime: () => 1_700_000_000_000,
    lastBootReason: () => info.BootReason.BOOT_REASON_FIRST,
    radioStatus: () => ({ cellular_status: [], cellular_metrics: [] }),
    location: (now) => (o.withGnss === false ? undefined : { latitude: 48.1, longitude: 11.5, utc_timestamp: { seconds: Math.floor(now / 1000) } }),
    ...(o.extras ? { appBootInfo: () => [{ id: APP1, displayname: 'web' }], networkInfo: () => ({ is_using_fallback_config: false }) } : {}),
  };
  const host: LpsAgentHost = {
    onLocalProfile: (p) => events.profiles.push(p),
    onAppCommand: (appId, kind, ts) => events.appCmds.push({ appId, kind, ts }),
    onDeviceCommand: (cmd, ts) => {
      events.devCmds.push({ cmd, ts });
      return o.acceptDeviceCommands?.() ?? true;
    },
    onRadioSilence: (on) => events.radio.push(on),
    onAppBootConfig: () => {},
    onLocalNetworkConfig: () => {},
    onPersistedStateChange: () => events.persisted++,
  };
  const make = () =>
    new LpsAgent({
      deviceIndex: 3,
      clock,
      scheduler: sched,
      rng: SeededRng.create(7, 3, 'lps'),
      transportFor: (a) => {
        addresses.push(a);
        return transport;
      },
      view,
      host,
      throttleRule: o.throttleRule,
      radio: { applyDelayMs: [o.radioDelayMs ?? 3000, o.radioDelayMs ?? 3000], failAfterMs: 20_000 },
    });
  const agent = make();
  if (o.radioFail) agent.setRadioFailure(o.radioFail);
  return { clock, sched, lps, events, apps, transport, addresses, agent, view, host, make };
}

function lastAppInfo(t: FakeTransport): profile.LocalAppInfoList {
  const reqs = t.to('lps.appinfo');
  return Msg.LocalAppInfoList.decode(reqs[reqs.length - 1]!.body!);
}

function lastDevInfo(t: FakeTransport): profile.LocalDevInfo {
  const reqs = t.to('lps.devinfo');
  return Msg.LocalDevInfo.decode(reqs[reqs.length - 1]!.body!);
}

describe('LPS agent: start, stop, address', () => {
  it('never calls while local_profile_server is empty', async () => {
    const h = harness();
    h.agent.configure('', 'tok', TIMERS);
    await h.sched.advance(3_600_000);
    expect(h.transport.requests).toHaveLength(0);
    expect(h.agent.running).toBe(false);
  });

  it('uses port 8888 when the address has none, sends EVE headers, and triggers every endpoint at once', async () => {
    const h = harness({ extras: true });
    await h.sched.advance(10_000);
    h.agent.configure('lps.site-a', 'tok', TIMERS);
    expect(h.addresses[0]).toMatchObject({ host: 'lps.site-a', port: 8888, hostPort: 'lps.site-a:8888', baseUrl: 'http://lps.site-a:8888' });
    await h.sched.advance(0);
    const first = h.transport.requests.filter((r) => r.at === 10_000).map((r) => r.endpoint as string);
    expect(first.sort()).toEqual(['lps.appbootinfo', 'lps.appinfo', 'lps.devinfo', 'lps.local_profile', 'lps.location', 'lps.network', 'lps.radio']);
    const get = h.transport.to('lps.local_profile')[0]!;
    expect(get.method).toBe('GET');
    expect(get.path).toBe('/api/v1/local_profile');
    expect(get.body).toBeUndefined();
    expect(get.headers['content-type']).toBeUndefined();
    expect(get.headers.host).toBe('lps.site-a:8888');
    expect(get.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const post = h.transport.to('lps.devinfo')[0]!;
    expect(post.method).toBe('POST');
    expect(post.headers['content-type']).toBe('application/x-proto-binary');
    expect(post.deviceIndex).toBe(3);
    expect(lastDevInfo(h.transport)).toMatchObject({ device_uuid: DEV, state: info.ZDeviceState.ZDEVICE_STATE_ONLINE, boot_time: { seconds: 1_700_000_000 } });
    // Request ids differ per request.
    expect(new Set(h.transport.requests.map((r) => r.headers['x-request-id'])).size).toBe(h.transport.requests.length);
  });

  it('keeps an explicit port and brackets IPv6', async () => {
    const h = harness();
    h.agent.configure('[fd00::2]:9000', 'tok', TIMERS);
    expect(h.addresses[0]).toMatchObject({ host: 'fd00::2', port: 9000, hostPort: '[fd00::2]:9000' });
    const h2 = harness();
    h2.agent.configure('fd00::2', 'tok', TIMERS);
    expect(h2.addresses[0]).toMatchObject({ host: 'fd00::2', port: 8888, hostPort: '[fd00::2]:8888' });
  });

  it('reports a bad address and keeps the previous one', async () => {
    const h = harness();
    const findings: string[] = [];
    h.host.onFinding = (f) => findings.push(f.detail);
    h.agent.configure('lps:1', 'tok', TIMERS);
    h.agent.configure('lps:99999', 'tok', TIMERS);
    expect(findings[0]).toMatch(/port "99999"/);
    expect(h.agent.address?.hostPort).toBe('lps:1');
  });

  it('stops and forgets the local profile when the address is cleared; late answers are stale', async () => {
    const h = harness();
    h.lps.profile = 'field';
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(0);
    expect(h.events.profiles).toEqual(['field']);
    expect(h.agent.localProfile).toBe('field');
    // An answer in flight while the address is cleared must not be applied.
    let release!: () => void;
    h.transport.answer = (req) =>
      new Promise<Answer>((resolve) => {
        release = () => resolve(protoReply(Msg.LocalProfile.encode({ local_profile: 'late', server_token: 'tok' })));
        void req;
      });
    h.agent.trigger('lps.local_profile');
    await h.sched.advance(0);
    h.agent.configure('', 'tok', TIMERS);
    expect(h.events.profiles).toEqual(['field', '']);
    expect(h.agent.localProfile).toBe('');
    release();
    await h.sched.advance(0);
    expect(h.agent.stats.endpoints['lps.local_profile'].stale).toBe(1);
    expect(h.agent.localProfile).toBe('');
    const count = h.transport.requests.length;
    await h.sched.advance(3_600_000);
    expect(h.transport.requests.length).toBe(count);
    expect(h.agent.running).toBe(false);
  });

  it('forgets a restored profile and lifts a restored radio silence when it boots without an LPS', async () => {
    const h = harness();
    h.agent.restore({ lastDevCmdTimestamp: 0, localProfile: 'saved', radioSilence: true, appCommands: [] });
    expect(h.agent.localProfile).toBe('saved');
    h.agent.configure('', 'tok', TIMERS);
    expect(h.events.profiles).toEqual(['']);
    expect(h.agent.localProfile).toBe('');
    await h.sched.advance(10_000);
    expect(h.agent.radioSilence).toMatchObject({ intent: false, imposed: false, phase: 'idle' });
    expect(h.transport.requests).toHaveLength(0);
  });

  it('a new address triggers every endpoint at once; same address does not', async () => {
    const h = harness({ withGnss: true });
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(100_000);
    h.agent.configure('10.1.0.2', 'tok', TIMERS); // unchanged
    await h.sched.advance(0);
    expect(h.transport.requests.filter((r) => r.at === 100_000).map((r) => r.endpoint as string)).not.toContain('lps.devinfo');
    h.agent.configure('10.1.0.3', 'tok', TIMERS);
    await h.sched.advance(0);
    const now = h.transport.requests.filter((r) => r.at === 100_000 && r.headers.host === '10.1.0.3:8888').map((r) => r.endpoint as string);
    expect(now.sort()).toEqual(['lps.appinfo', 'lps.devinfo', 'lps.local_profile', 'lps.location', 'lps.radio']);
  });
});

describe('LPS agent: intervals', () => {
  it('polls at timer.lps.* intervals with jitter [0.88x, 1.1x], location at [0.3x, 1.0x]', async () => {
    const h = harness();
    h.agent.configure('10.1.0.2:8888', 'tok', TIMERS);
    await h.sched.advance(2 * 3_600_000);
    const gaps = (key: string) => {
      const at = h.transport.to(key).map((r) => r.at);
      return at.slice(1).map((t, i) => t - at[i]!);
    };
    const check = (key: string, lo: number, hi: number, minCount: number) => {
      const g = gaps(key);
      expect(g.length).toBeGreaterThanOrEqual(minCount);
      expect(Math.min(...g)).toBeGreaterThanOrEqual(lo);
      expect(Math.max(...g)).toBeLessThanOrEqual(hi);
      // Jittered, not fixed.
      expect(new Set(g).size).toBeGreaterThan(g.length / 2);
    };
    check('lps.radio', 4400, 5500, 1000);
    check('lps.local_profile', 52_800, 66_000, 100);
    check('lps.appinfo', 52_800, 66_000, 100);
    check('lps.devinfo', 52_800, 66_000, 100);
    check('lps.location', 6000, 20_000, 300);
  });

  it('applies changed intervals and a longer location interval', async () => {
    const h = harness();
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(1000);
    h.agent.configure('10.1.0.2', 'tok', { ...TIMERS, lpsRadioIntervalS: 30, locationAppIntervalS: 100 });
    const before = h.transport.to('lps.radio').length;
    await h.sched.advance(600_000);
    const n = h.transport.to('lps.radio').length - before;
    expect(n).toBeGreaterThanOrEqual(Math.floor(600 / 33));
    expect(n).toBeLessThanOrEqual(Math.ceil(600 / 26.4) + 1);
    const loc = h.transport.to('lps.location').map((r) => r.at).filter((t) => t > 1000);
    const g = loc.slice(1).map((t, i) => t - loc[i]!);
    expect(Math.min(...g)).toBeGreaterThanOrEqual(30_000);
    expect(Math.max(...g)).toBeLessThanOrEqual(100_000);
  });

  it('sends one request per endpoint at a time and catches up after a slow answer', async () => {
    const h = harness();
    const pending: (() => void)[] = [];
    h.transport.answer = (req) =>
      (req.endpoint as string) === 'lps.radio' ? new Promise<Answer>((r) => pending.push(() => r(NO_CONTENT))) : NO_CONTENT;
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(20_000);
    expect(h.transport.to('lps.radio')).toHaveLength(1);
    pending.shift()!();
    await h.sched.advance(0);
    expect(h.transport.to('lps.radio')).toHaveLength(2); // the missed tick runs once, at once
  });
});

describe('LPS agent: server_token', () => {
  it('ignores and counts a wrong token on every endpoint that returns a body', async () => {
    const h = harness({ extras: true });
    h.lps.token = 'WRONG';
    h.lps.profile = 'evil';
    h.lps.radio = true;
    h.lps.appCommands = [{ id: APP1, timestamp: 5, command: RC.COMMAND_RESTART }];
    h.lps.devCmd = { timestamp: 9, command: DC.COMMAND_GRACEFUL_REBOOT };
    const boot: unknown[] = [];
    const net: unknown[] = [];
    h.host.onAppBootConfig = (c) => boot.push(c);
    h.host.onLocalNetworkConfig = (c) => net.push(c);
    h.agent.configure('10.1.0.2', 'right', TIMERS);
    await h.sched.advance(0);
    const s = h.agent.stats.endpoints;
    for (const k of ['lps.local_profile', 'lps.radio', 'lps.appinfo', 'lps.devinfo', 'lps.appbootinfo', 'lps.network'] as const) {
      expect(s[k].tokenRejected, k).toBe(1);
    }
    expect(h.agent.stats.tokenRejected).toBe(6);
    expect(h.events).toMatchObject({ profiles: [], appCmds: [], devCmds: [], radio: [] });
    expect(boot).toHaveLength(0);
    expect(net).toHaveLength(0);
    expect(h.agent.radioSilence.intent).toBe(false);
    await h.sched.advance(10_000);
    expect(h.agent.radioSilence.phase).toBe('idle');
    // Polling goes on at the normal interval (no throttling on a token mismatch).
    expect(h.transport.to('lps.radio').length).toBeGreaterThanOrEqual(2);
    // With the right token the same answers are applied.
    h.lps.token = 'right';
    h.agent.configure('10.1.0.9', 'right', TIMERS);
    await h.sched.advance(0);
    expect(h.events.profiles).toEqual(['evil']);
    expect(h.events.appCmds).toEqual([{ appId: APP1, kind: 'restart', ts: 5 }]);
    expect(h.events.devCmds).toEqual([{ cmd: 'reboot', ts: 9 }]);
    expect(boot).toHaveLength(1);
    expect(net).toHaveLength(1);
  });

  it('does not check the token of an appinfo answer without commands (as EVE)', async () => {
    const h = harness();
    h.transport.answer = (req) =>
      (req.endpoint as string) === 'lps.appinfo' ? protoReply(Msg.LocalAppCmdList.encode({ server_token: 'x', app_commands: [] })) : NO_CONTENT;
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(0);
    expect(h.agent.stats.endpoints['lps.appinfo']).toMatchObject({ ok: 1, tokenRejected: 0 });
  });

  it('rejects a body without application/x-proto-binary and survives an undecodable one', async () => {
    const h = harness();
    h.transport.answer = (req) => {
      if ((req.endpoint as string) === 'lps.local_profile') return { status: 200, headers: { 'content-type': 'text/plain' }, body: Msg.LocalProfile.encode({ local_profile: 'p', server_token: 'tok' }) };
      if ((req.endpoint as string) === 'lps.devinfo') return protoReply(new Uint8Array([0xff, 0xff, 0xff]));
      return NO_CONTENT;
    };
    const findings: string[] = [];
    h.host.onFinding = (f) => findings.push(`${f.endpoint} ${f.kind}`);
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(0);
    expect(h.agent.stats.endpoints['lps.local_profile'].badContentType).toBe(1);
    expect(h.agent.stats.endpoints['lps.devinfo'].undecodable).toBe(1);
    // The fake answers location 204, which local-profile-server-v1 does not list for it (200 or 404).
    expect(findings.sort()).toEqual(['lps.devinfo undecodable-body', 'lps.location undocumented-status']);
    expect(h.events.profiles).toEqual([]);
  });
});

describe('LPS agent: local profile', () => {
  it('sets a non-empty profile, resets on an empty one, and calls back only on change', async () => {
    const h = harness();
    h.lps.profile = 'site-a';
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(200_000);
    expect(h.events.profiles).toEqual(['site-a']);
    h.lps.profile = '';
    await h.sched.advance(70_000);
    expect(h.events.profiles).toEqual(['site-a', '']);
    expect(h.agent.snapshot().localProfile).toBe('');
  });
});

describe('LPS agent: app commands', () => {
  it('matches by id and/or displayname and skips what EVE skips', async () => {
    const h = harness();
    h.lps.appCommands = [
      { id: APP1.toUpperCase(), timestamp: 10, command: RC.COMMAND_RESTART }, // by id (case-insensitive)
      { displayname: 'web', timestamp: 11, command: RC.COMMAND_PURGE }, // duplicate for APP1: skipped
      { id: APP2, displayname: 'web', timestamp: 12, command: RC.COMMAND_RESTART }, // both given, name mismatch
      { id: 'not-a-uuid', timestamp: 13, command: RC.COMMAND_RESTART },
      { timestamp: 14, command: RC.COMMAND_RESTART }, // no selector
      { displayname: 'nosuch', timestamp: 15, command: RC.COMMAND_RESTART },
      { displayname: 'db', timestamp: 16, command: RC.COMMAND_PURGE }, // by name
    ];
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(0);
    expect(h.events.appCmds).toEqual([
      { appId: APP1, kind: 'restart', ts: 10 },
      { appId: APP2, kind: 'purge', ts: 16 },
    ]);
    expect(h.agent.stats.appCommandsSkipped).toBe(5);
    expect(h.events.persisted).toBeGreaterThan(0);
  });

  it('runs a command once per (command, timestamp), again when the timestamp changes; completion sets last_cmd_timestamp', async () => {
    const h = harness();
    h.lps.appCommands = [{ id: APP1, timestamp: 100, command: RC.COMMAND_RESTART }];
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(5 * 60_000);
    expect(h.events.appCmds).toHaveLength(1);
    expect(lastAppInfo(h.transport).apps_info?.find((a) => a.id === APP1)?.last_cmd_timestamp ?? 0).toBe(0);
    h.agent.appCommandDone(APP1);
    await h.sched.advance(70_000);
    const info1 = lastAppInfo(h.transport).apps_info!;
    expect(info1.find((a) => a.id === APP1)!.last_cmd_timestamp).toBe(100);
    expect(info1.find((a) => a.id === APP2)!.last_cmd_timestamp ?? 0).toBe(0);
    expect(info1.find((a) => a.id === APP1)).toMatchObject({ name: 'web', state: info.ZSwState.RUNNING });
    // The LPS keeps sending it: ignored.
    await h.sched.advance(5 * 60_000);
    expect(h.events.appCmds).toHaveLength(1);
    // A new request (new timestamp) runs again.
    h.lps.appCommands = [{ id: APP1, timestamp: 200, command: RC.COMMAND_RESTART }];
    await h.sched.advance(70_000);
    expect(h.events.appCmds).toEqual([
      { appId: APP1, kind: 'restart', ts: 100 },
      { appId: APP1, kind: 'restart', ts: 200 },
    ]);
    // Until it completes the last completed timestamp is still reported.
    await h.sched.advance(70_000);
    expect(lastAppInfo(h.transport).apps_info!.find((a) => a.id === APP1)!.last_cmd_timestamp).toBe(100);
    expect(h.agent.stats.appCommandsCompleted).toBe(1);
  });

  it('finishes a command after a reboot interrupted it (persisted state)', async () => {
    const h = harness();
    h.lps.appCommands = [{ id: APP1, timestamp: 777, command: RC.COMMAND_PURGE }];
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(1000);
    expect(h.events.appCmds).toEqual([{ appId: APP1, kind: 'purge', ts: 777 }]);
    // Reboot before the purge finished.
    const saved = JSON.parse(JSON.stringify(h.agent.snapshot()));
    h.agent.halt();
    await h.sched.advance(120_000);
    const after = h.make();
    after.restore(saved);
    after.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(0);
    // The command is started again (once), not treated as new, and completes.
    expect(h.events.appCmds).toEqual([
      { appId: APP1, kind: 'purge', ts: 777 },
      { appId: APP1, kind: 'purge', ts: 777 },
    ]);
    after.appCommandDone(APP1);
    await h.sched.advance(70_000);
    expect(lastAppInfo(h.transport).apps_info!.find((a) => a.id === APP1)!.last_cmd_timestamp).toBe(777);
    await h.sched.advance(10 * 60_000);
    expect(h.events.appCmds).toHaveLength(2);
  });

  it('forgets the command state of a removed app', async () => {
    const h = harness();
    h.lps.appCommands = [{ id: APP1, timestamp: 5, command: RC.COMMAND_RESTART }];
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(0);
    h.agent.forgetApp(APP1);
    expect(h.agent.appCommand(APP1)).toBeUndefined();
  });
});

describe('LPS agent: device commands', () => {
  it('applies a command once per timestamp and reports it as last_cmd_timestamp', async () => {
    const h = harness();
    h.lps.devCmd = { timestamp: 0, command: DC.COMMAND_SHUTDOWN };
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(200_000);
    expect(h.events.devCmds).toEqual([]); // timestamp 0 is never executed
    h.lps.devCmd = { timestamp: 1234, command: DC.COMMAND_SHUTDOWN };
    h.agent.trigger('lps.devinfo');
    await h.sched.advance(0);
    expect(h.events.devCmds).toEqual([{ cmd: 'shutdown', ts: 1234 }]);
    expect(h.agent.lastDeviceCommandTimestamp).toBe(1234);
    await h.sched.advance(10 * 60_000);
    expect(h.events.devCmds).toHaveLength(1);
    expect(h.agent.stats.deviceCommandsRepeated).toBeGreaterThan(5);
    expect(lastDevInfo(h.transport).last_cmd_timestamp).toBe(1234);
    for (const [code, name] of [
      [DC.COMMAND_GRACEFUL_POWEROFF, 'poweroff'],
      [DC.COMMAND_GRACEFUL_REBOOT, 'reboot'],
      [DC.COMMAND_COLLECT_INFO, 'collect-info'],
    ] as const) {
      h.lps.devCmd = { timestamp: 2000 + code, command: code };
      h.agent.trigger('lps.devinfo');
      await h.sched.advance(0);
      expect(h.events.devCmds[h.events.devCmds.length - 1]).toEqual({ cmd: name, ts: 2000 + code });
    }
  });

  it('does not record a command the device refuses, and takes it when sent again', async () => {
    let accept = false;
    const h = harness({ acceptDeviceCommands: () => accept });
    h.lps.devCmd = { timestamp: 55, command: DC.COMMAND_GRACEFUL_POWEROFF };
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(0);
    expect(h.agent.lastDeviceCommandTimestamp).toBe(0);
    accept = true;
    await h.sched.advance(70_000);
    expect(h.events.devCmds).toEqual([
      { cmd: 'poweroff', ts: 55 },
      { cmd: 'poweroff', ts: 55 },
    ]);
    expect(h.agent.lastDeviceCommandTimestamp).toBe(55);
  });

  it('is recorded before the device acts, so a reboot command does not repeat after the reboot', async () => {
    const h = harness();
    let snap: unknown;
    h.host.onDeviceCommand = (cmd, ts) => {
      h.events.devCmds.push({ cmd, ts });
      snap = JSON.parse(JSON.stringify(h.agent.snapshot())); // the device persists while rebooting
      h.agent.halt();
      return true;
    };
    h.lps.devCmd = { timestamp: 42, command: DC.COMMAND_GRACEFUL_REBOOT };
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(0);
    const after = h.make();
    after.restore(snap as ReturnType<LpsAgent['snapshot']>);
    after.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(10 * 60_000);
    expect(h.events.devCmds).toEqual([{ cmd: 'reboot', ts: 42 }]);
    expect(lastDevInfo(h.transport).last_cmd_timestamp).toBe(42);
  });
});

describe('LPS agent: radio silence', () => {
  it('applies over a delay without radio posts meanwhile, then reports what is imposed', async () => {
    const h = harness({ radioDelayMs: 12_000 });
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(30_000);
    h.lps.radio = true;
    const at = h.clock.t;
    // Step until the next radio POST, whose answer carries the RadioConfig.
    while (h.transport.to('lps.radio').filter((r) => r.at > at).length === 0) await h.sched.advance(100);
    const got = h.transport.to('lps.radio').filter((r) => r.at > at)[0]!.at;
    expect(h.agent.radioSilence).toMatchObject({ intent: true, imposed: false, phase: 'applying' });
    expect(h.events.radio).toEqual([]);
    const count = h.transport.to('lps.radio').length;
    await h.sched.advanceTo(got + 11_999);
    expect(h.transport.to('lps.radio').length).toBe(count);
    expect(h.agent.stats.radioPostsSuppressed).toBeGreaterThanOrEqual(2);
    expect(h.events.radio).toEqual([]);
    await h.sched.advanceTo(got + 12_000);
    expect(h.events.radio).toEqual([true]);
    await h.sched.advance(6000);
    const posts = h.transport.to('lps.radio');
    const status = Msg.RadioStatus.decode(posts[posts.length - 1]!.body!);
    expect(status.radio_silence).toBe(true);
    expect(status.config_error ?? '').toBe('');
    // Same value again: nothing.
    await h.sched.advance(60_000);
    expect(h.events.radio).toEqual([true]);
    expect(h.agent.stats.radioChangesStarted).toBe(1);
    // Back on.
    h.lps.radio = false;
    await h.sched.advance(30_000);
    expect(h.events.radio).toEqual([true, false]);
    expect(h.agent.snapshot().radioSilence).toBe(false);
  });

  it('reports config_error when the change cannot be applied', async () => {
    const h = harness({ radioFail: 'modem wwan0: failed to set radio power state' });
    h.lps.radio = true;
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(0);
    expect(h.agent.radioSilence.phase).toBe('applying');
    const n = h.transport.to('lps.radio').length;
    await h.sched.advance(19_999);
    expect(h.transport.to('lps.radio').length).toBe(n);
    await h.sched.advance(10_000);
    expect(h.agent.radioSilence).toMatchObject({ phase: 'failed', imposed: false, intent: true });
    const posts = h.transport.to('lps.radio');
    const st = Msg.RadioStatus.decode(posts[posts.length - 1]!.body!);
    expect(st.config_error).toBe('modem wwan0: failed to set radio power state');
    expect(st.radio_silence ?? false).toBe(false);
    expect(h.events.radio).toEqual([]);
    expect(h.agent.stats.radioChangesFailed).toBe(1);
  });

  it('re-imposes the saved radio silence after a reboot, and lifts it when the LPS is cleared', async () => {
    const h = harness();
    h.agent.restore({ lastDevCmdTimestamp: 0, localProfile: '', radioSilence: true, appCommands: [] });
    expect(h.agent.radioSilence.phase).toBe('applying');
    await h.sched.advance(3000);
    expect(h.events.radio).toEqual([true]);
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(1000);
    h.agent.configure('', 'tok', TIMERS);
    await h.sched.advance(3000);
    expect(h.events.radio).toEqual([true, false]);
  });
});

describe('LPS agent: 404 throttling', () => {
  it("'eve' (default): only location throttles, to one POST per 5 minutes", async () => {
    const h = harness();
    h.lps.status = { 'lps.location': 404, 'lps.appinfo': 404, 'lps.devinfo': 404, 'lps.radio': 404, 'lps.local_profile': 404 };
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(30 * 60_000);
    const loc = h.transport.to('lps.location').map((r) => r.at);
    expect(loc.length).toBeGreaterThanOrEqual(6);
    expect(loc.length).toBeLessThanOrEqual(8);
    const gaps = loc.slice(1).map((t, i) => t - loc[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(LOCATION_THROTTLED_MS);
    expect(h.agent.isThrottled('lps.location')).toBe(true);
    expect(h.agent.stats.locationPostsThrottled).toBeGreaterThan(0);
    // appinfo and devinfo keep their 60 s interval.
    expect(h.transport.to('lps.appinfo').length).toBeGreaterThanOrEqual(27);
    expect(h.transport.to('lps.devinfo').length).toBeGreaterThanOrEqual(27);
    expect(h.transport.to('lps.radio').length).toBeGreaterThanOrEqual(300);
    // The LPS lifts the throttle: location returns to its interval.
    h.lps.status = {};
    await h.sched.advance(10 * 60_000);
    expect(h.agent.isThrottled('lps.location')).toBe(false);
    const after = h.transport.to('lps.location').filter((r) => r.at > 30 * 60_000 + 5 * 60_000).length;
    expect(after).toBeGreaterThanOrEqual(12);
  });

  it("'spec': appinfo, devinfo and location throttle; a success ends it", async () => {
    const h = harness({ throttleRule: 'spec' });
    h.lps.status = { 'lps.location': 404, 'lps.appinfo': 404, 'lps.devinfo': 404, 'lps.radio': 404 };
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(50 * 60_000);
    expect(h.transport.to('lps.appinfo')).toHaveLength(1);
    expect(h.transport.to('lps.devinfo')).toHaveLength(1);
    expect(h.agent.isThrottled('lps.appinfo')).toBe(true);
    expect(h.transport.to('lps.location').length).toBeLessThanOrEqual(11);
    // radio: 404 means "not implemented", not a throttle.
    expect(h.transport.to('lps.radio').length).toBeGreaterThanOrEqual(500);
    // A throttled stream ignores triggers.
    h.agent.trigger('lps.appinfo');
    await h.sched.advance(0);
    expect(h.transport.to('lps.appinfo')).toHaveLength(1);
    h.lps.status = {};
    await h.sched.advance(70 * 60_000); // the hourly POST gets a success
    expect(h.agent.isThrottled('lps.appinfo')).toBe(false);
    const before = h.transport.to('lps.appinfo').length;
    await h.sched.advance(10 * 60_000);
    expect(h.transport.to('lps.appinfo').length - before).toBeGreaterThanOrEqual(9);
  });

  it('a new address lifts every throttle', async () => {
    const h = harness({ throttleRule: 'spec' });
    h.lps.status = { 'lps.appinfo': 404, 'lps.location': 404 };
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(1000);
    expect(h.agent.isThrottled('lps.appinfo')).toBe(true);
    h.lps.status = {};
    h.agent.configure('10.1.0.3', 'tok', TIMERS);
    expect(h.agent.isThrottled('lps.appinfo')).toBe(false);
    expect(h.agent.isThrottled('lps.location')).toBe(false);
  });

  it('counts no-answer and other statuses without changing the interval', async () => {
    const h = harness();
    h.transport.answer = (req) => ((req.endpoint as string) === 'lps.radio' ? 'no-answer' : { status: 500, headers: {}, body: new Uint8Array(0) });
    h.agent.configure('10.1.0.2', 'tok', TIMERS);
    await h.sched.advance(60_000);
    expect(h.agent.stats.endpoints['lps.radio'].transportErrors).toBeGreaterThanOrEqual(11);
    expect(h.agent.stats.endpoints['lps.appinfo'].otherStatus).toBeGreaterThanOrEqual(1);
  });
});
