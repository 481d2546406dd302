// A virtual device with its local profile server (lps-wiring.ts): profile switches start and stop
// apps and are reported to the controller, app and device commands are carried out through the
// app and device states and acknowledged to the LPS, a reboot in the middle of a command finishes
// it afterwards, radio silence switches the modems, and radios and GNSS show up in info, metrics
// and ZiLocation.

import { describe, expect, it } from 'vitest';
import { info, type config } from '../src/gen/eve-types.js';
import { Msg } from '../src/protocol/messages.js';
import { REBOOT_DOWNTIME_MS } from '../src/device/virtual-device.js';
import { onboard, payloadOf } from './device-harness.js';
import { lpsRig, type LpsRig } from './lps-device-harness.js';

const S = info.ZSwState;
const DS = info.ZDeviceState;
const WEB = 'a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61';
const BACKUP = 'b2f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c62';
const DB = 'c3f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c63';

function app(uuid: string, name: string, profiles: string[] = []): config.AppInstanceConfig {
  return { uuidandversion: { uuid, version: '1' }, displayname: name, activate: true, profile_list: profiles, restart: { counter: 0 }, purge: { counter: 0 } };
}

const APPS = [app(WEB, 'web', ['normal']), app(BACKUP, 'backup', ['maintenance']), app(DB, 'db')];

/** ZiApp states of one app, in the order the controller received them. */
const appStates = (r: LpsRig, uuid: string) => r.controller.infos().filter((m) => m.ainfo?.AppID === uuid).map((m) => m.ainfo!.state ?? S.INVALID);
const lastDevice = (r: LpsRig) => r.controller.infos().filter((m) => m.dinfo).pop()!.dinfo!;
const deviceStates = (r: LpsRig) => r.controller.infos().flatMap((m) => (m.dinfo ? [m.dinfo.state ?? DS.ZDEVICE_STATE_UNSPECIFIED] : []));
const stateOf = (r: LpsRig, uuid: string) => r.device.appStates().find((a) => a.uuid === uuid)!.state;

async function running(r: LpsRig, over: Partial<config.EdgeDevConfig> = {}): Promise<void> {
  r.controller.config = r.lpsConfig({ apps: APPS, global_profile: 'normal', ...over });
  await onboard(r);
  await r.time.advance(30_000);
}

describe('device with a local profile server', () => {
  it('switches apps with the local profile and reports it in ZiApp and ZInfoDevice.local_profile', async () => {
    const r = lpsRig();
    await running(r);
    expect([stateOf(r, WEB), stateOf(r, BACKUP), stateOf(r, DB)]).toEqual([S.RUNNING, S.HALTED, S.RUNNING]);
    expect(lastDevice(r).local_profile ?? '').toBe('');

    const webBefore = appStates(r, WEB).length;
    const backupBefore = appStates(r, BACKUP).length;
    r.site.setProfile('maintenance');
    await r.time.advance(20_000);
    expect([stateOf(r, WEB), stateOf(r, BACKUP), stateOf(r, DB)]).toEqual([S.HALTED, S.RUNNING, S.RUNNING]);
    expect(appStates(r, WEB).slice(webBefore)).toEqual([S.HALTING, S.HALTED]);
    expect(appStates(r, BACKUP).slice(backupBefore)).toEqual([S.BOOTING, S.RUNNING]);
    expect(lastDevice(r).local_profile).toBe('maintenance');

    // A local profile equal to the global one is not reported (§6.2); an empty one resets.
    r.site.setProfile('normal');
    await r.time.advance(20_000);
    expect([stateOf(r, WEB), stateOf(r, BACKUP)]).toEqual([S.RUNNING, S.HALTED]);
    expect(lastDevice(r).local_profile ?? '').toBe('');
    r.site.setProfile('');
    await r.time.advance(20_000);
    expect(r.device.configState.localProfile).toBe('');
    expect([stateOf(r, WEB), stateOf(r, BACKUP)]).toEqual([S.RUNNING, S.HALTED]);
    expect(r.stats.endpoints['lps.local_profile'].tokenRejected).toBe(0);

    // Clearing local_profile_server forgets the local profile and stops all LPS traffic.
    r.site.setProfile('maintenance');
    await r.time.advance(20_000);
    expect(stateOf(r, BACKUP)).toBe(S.RUNNING);
    r.controller.config = { ...r.controller.config, local_profile_server: '' };
    await r.time.advance(60_000);
    expect([stateOf(r, WEB), stateOf(r, BACKUP)]).toEqual([S.RUNNING, S.HALTED]);
    const n = r.lpsRequests.length;
    await r.time.advance(60_000);
    expect(r.lpsRequests.length).toBe(n);
  });

  it('ignores every answer whose server_token is not its profile_server_token', async () => {
    const r = lpsRig({ deviceToken: 'not-the-site-token' });
    await running(r);
    r.site.setProfile('maintenance');
    r.site.setRadioSilence(true);
    const dev = r.lpsDevice();
    r.site.issueAppCommand([dev], { name: 'db' }, 'restart');
    r.site.issueDeviceCommand([dev], 'reboot');
    await r.time.advance(60_000);
    // Nothing was applied...
    expect([stateOf(r, WEB), stateOf(r, BACKUP)]).toEqual([S.RUNNING, S.HALTED]);
    expect(appStates(r, DB)).not.toContain(S.RESTARTING);
    expect(deviceStates(r)).not.toContain(DS.ZDEVICE_STATE_REBOOTING);
    expect(r.device.lps!.agent.radioSilence.intent).toBe(false);
    expect(dev.appCommands[0]!.completedAt).toBeUndefined();
    // ...and every refusal was counted, per endpoint.
    for (const k of ['lps.local_profile', 'lps.radio', 'lps.appinfo', 'lps.devinfo'] as const) {
      expect(r.stats.endpoints[k].tokenRejected, k).toBeGreaterThan(0);
    }
  });

  it('restarts an app through its states and acknowledges the command once the restart is over', async () => {
    const r = lpsRig({ behaviour: { appStepMs: 2_000 } });
    await running(r);
    const before = appStates(r, DB).length;
    const [rec] = r.site.issueAppCommand([r.lpsDevice()], { name: 'db' }, 'restart');
    await r.time.advance(40_000);
    expect(appStates(r, DB).slice(before)).toEqual([S.RESTARTING, S.BOOTING, S.RUNNING]);
    const runningAgainAt = r.controller.of('info').filter((q) => Msg.ZInfoMsg.decode(payloadOf(r, q)).ainfo?.AppID === DB).pop()!.at;
    expect(rec!.completedAt).toBeDefined();
    expect(rec!.completedAt!).toBeGreaterThanOrEqual(runningAgainAt);
    expect(r.device.lps!.agent.appCommand(DB)).toMatchObject({ completed: true, lastCompletedTimestamp: rec!.timestamp });
    // The LPS keeps serving the command; it is not carried out twice.
    await r.time.advance(60_000);
    expect(appStates(r, DB).filter((s) => s === S.RESTARTING)).toHaveLength(1);
    // A purge goes through its own path.
    const n = appStates(r, WEB).length;
    r.site.issueAppCommand([r.lpsDevice()], { name: 'web' }, 'purge');
    await r.time.advance(40_000);
    expect(appStates(r, WEB).slice(n)).toEqual([S.PURGING, S.CREATED_VOLUME, S.INSTALLED, S.BOOTING, S.RUNNING]);
  });

  it('finishes after a reboot an app command that the reboot interrupted', async () => {
    const r = lpsRig({ behaviour: { appStepMs: 4_000 } });
    await running(r, {});
    await r.time.advance(30_000);
    const [rec] = r.site.issueAppCommand([r.lpsDevice()], { name: 'db' }, 'restart');
    // Accepted (the appinfo answer carried it), not begun yet: the device loses power now.
    for (let i = 0; i < 200 && r.device.lps!.agent.appCommand(DB) === undefined; i++) await r.time.advance(100);
    expect(r.device.lps!.agent.appCommand(DB)).toMatchObject({ completed: false });
    const before = appStates(r, DB).length;
    r.device.rebootNow();
    expect(rec!.completedAt).toBeUndefined();
    await r.time.advance(REBOOT_DOWNTIME_MS + 120_000);
    const after = appStates(r, DB).slice(before);
    // Back from the reboot (INSTALLED → RUNNING), then the restart it still owed.
    expect(after.slice(0, 3)).toEqual([S.INSTALLED, S.BOOTING, S.RUNNING]);
    expect(after).toContain(S.RESTARTING);
    expect(rec!.completedAt).toBeDefined();
    expect(r.device.lps!.agent.appCommand(DB)).toMatchObject({ completed: true, lastCompletedTimestamp: rec!.timestamp });
  });

  it('graceful reboot: apps halt, REBOOTING is reported to controller and LPS, the next boot says REBOOT_CMD, once', async () => {
    const r = lpsRig();
    await running(r);
    const [rec] = r.site.issueDeviceCommand([r.lpsDevice()], 'reboot');
    await r.time.advance(20_000);
    expect(deviceStates(r)).toContain(DS.ZDEVICE_STATE_REBOOTING);
    expect(appStates(r, WEB)).toContain(S.HALTED);
    const lastDevinfo = Msg.LocalDevInfo.decode(r.lpsRequests.filter((q) => q.endpoint === 'lps.devinfo').pop()!.body!);
    expect(lastDevinfo.last_cmd_timestamp).toBe(rec!.timestamp);
    expect(rec!.completedAt).toBeDefined();
    await r.time.advance(REBOOT_DOWNTIME_MS + 180_000);
    const d = lastDevice(r);
    expect(d.last_boot_reason).toBe(info.BootReason.BOOT_REASON_REBOOT_CMD);
    expect(d.state).toBe(DS.ZDEVICE_STATE_ONLINE);
    expect(d.restartCounter).toBe(1); // the LPS still serves the command: not applied again
    expect(stateOf(r, WEB)).toBe(S.RUNNING);
  });

  it('graceful poweroff keeps the device off until it is powered on; the next boot says POWEROFF_CMD', async () => {
    const r = lpsRig();
    await running(r);
    r.site.issueDeviceCommand([r.lpsDevice()], 'poweroff');
    await r.time.advance(30_000);
    expect(deviceStates(r)).toEqual(expect.arrayContaining([DS.ZDEVICE_STATE_PREPARING_POWEROFF, DS.ZDEVICE_STATE_POWERING_OFF]));
    expect(r.device.isPoweredOff).toBe(true);
    const n = r.controller.requests.length + r.lpsRequests.length;
    await r.time.advance(300_000);
    expect(r.controller.requests.length + r.lpsRequests.length).toBe(n);
    r.device.powerOn();
    await r.time.advance(120_000);
    expect(lastDevice(r).last_boot_reason).toBe(info.BootReason.BOOT_REASON_POWEROFF_CMD);
    expect(stateOf(r, WEB)).toBe(S.RUNNING);
  });

  it('shutdown halts every app and reports PREPARED_POWEROFF; collect-info is only acknowledged', async () => {
    const r = lpsRig();
    await running(r);
    const [info1] = r.site.issueDeviceCommand([r.lpsDevice()], 'collect-info');
    await r.time.advance(20_000);
    expect(info1!.completedAt).toBeDefined();
    expect([stateOf(r, WEB), stateOf(r, DB)]).toEqual([S.RUNNING, S.RUNNING]);
    const [shut] = r.site.issueDeviceCommand([r.lpsDevice()], 'shutdown');
    await r.time.advance(30_000);
    expect([stateOf(r, WEB), stateOf(r, BACKUP), stateOf(r, DB)]).toEqual([S.HALTED, S.HALTED, S.HALTED]);
    const states = deviceStates(r);
    expect(states.indexOf(DS.ZDEVICE_STATE_PREPARING_POWEROFF)).toBeLessThan(states.indexOf(DS.ZDEVICE_STATE_PREPARED_POWEROFF));
    expect(shut!.completedAt).toBeDefined();
    const devinfo = Msg.LocalDevInfo.decode(r.lpsRequests.filter((q) => q.endpoint === 'lps.devinfo').pop()!.body!);
    expect(devinfo.state).toBe(DS.ZDEVICE_STATE_PREPARED_POWEROFF);
  });

  it('radio silence switches the modems to RADIO_OFF after the apply delay, or reports config_error', async () => {
    const r = lpsRig({ cellular: { modems: 1, simSlots: 2, operator: 'telekom-de', drops: null }, radioDelayMs: 8_000 });
    await running(r);
    const cell = () => lastDevice(r).cell_radios![0]!.operating_state;
    expect(cell()).toBe(info.ZCellularOperatingState.Z_CELLULAR_OPERATING_STATE_ONLINE_AND_CONNECTED);
    r.site.setRadioSilence(true);
    await r.time.advance(30_000);
    expect(cell()).toBe(info.ZCellularOperatingState.Z_CELLULAR_OPERATING_STATE_RADIO_OFF);
    expect(r.device.lps!.radioGauge(r.time.now())).toBe('radio-off');
    const radioPosts = r.lpsRequests.filter((q) => q.endpoint === 'lps.radio').map((q) => ({ at: q.at, m: Msg.RadioStatus.decode(q.body!) }));
    const last = radioPosts.pop()!.m;
    expect(last.radio_silence).toBe(true);
    expect(last.cellular_status![0]!.module!.operating_state).toBe(info.ZCellularOperatingState.Z_CELLULAR_OPERATING_STATE_RADIO_OFF);
    expect(r.stats.radioPostsSuppressed).toBeGreaterThan(0); // none while the change was applied
    r.site.setRadioSilence(false);
    await r.time.advance(30_000);
    expect(cell()).toBe(info.ZCellularOperatingState.Z_CELLULAR_OPERATING_STATE_ONLINE_AND_CONNECTED);

    const f = lpsRig({ cellular: { modems: 1, simSlots: 1, drops: null, radioSilenceFails: 'modem refused RADIO_OFF' } });
    await running(f);
    f.site.setRadioSilence(true);
    await f.time.advance(60_000);
    const failed = Msg.RadioStatus.decode(f.lpsRequests.filter((q) => q.endpoint === 'lps.radio').pop()!.body!);
    expect(failed.config_error).toBe('modem refused RADIO_OFF');
    expect(failed.radio_silence ?? false).toBe(false);
    expect(f.device.lps!.radioGauge(f.time.now())).toBe('config-error');
  });

  it('reports modems, SIMs and wwan ports in ZInfoDevice, cellular metrics, and ZiLocation every cloud interval', async () => {
    const r = lpsRig({
      cellular: { modems: 1, simSlots: 2, operator: 'orange-fr', drops: null },
      gnss: { site: { latitude: 48.8566, longitude: 2.3522, jitterM: 200 } },
    });
    await running(r);
    await r.time.advance(900_000);
    const d = lastDevice(r);
    expect(d.cell_radios).toHaveLength(1);
    expect(d.cell_radios![0]).toMatchObject({ name: 'wwan0-modem', operating_state: info.ZCellularOperatingState.Z_CELLULAR_OPERATING_STATE_ONLINE_AND_CONNECTED });
    expect(d.sims!.map((s) => s.slot_number)).toEqual([1, 2]);
    expect(d.sims![0]!.imsi!.startsWith('20801')).toBe(true);
    const ports = d.systemAdapter!.status![0]!.ports!;
    expect(ports.map((p) => p.ifname)).toEqual(['eth0', 'eth1', 'wwan0']);
    expect(ports[2]!.wireless_status!.type).toBe(info.WirelessType.WIRELESS_TYPE_CELLULAR);
    expect(ports[2]!.wireless_status!.cellular!.providers![0]!.plmn).toBe('208-01');

    const metrics = r.controller.of('metrics').map((q) => Msg.ZMetricMsg.decode(payloadOf(r, q)));
    const cm = metrics.pop()!.dm!.cellular!;
    expect(cm[0]!.logicallabel).toBe('wwan0');
    expect(cm[0]!.signal_strength!.rsrp).toBeLessThan(-44);

    // ZiLocation: first right away, then every [0.3, 1.0] × 300 s (timer.location.cloud.interval).
    const locs = r.controller.infos().filter((m) => m.ztype === info.ZInfoTypes.ZiLocation);
    expect(locs.length).toBeGreaterThanOrEqual(3);
    expect(locs.length).toBeLessThanOrEqual(12);
    const l = locs[0]!.locinfo!;
    expect(Math.abs(l.latitude! - 48.8566)).toBeLessThan(0.01);
    expect(l.horizontal_reliability).toBeGreaterThan(0);
    // The LPS gets location too, at timer.location.app.interval.
    expect(r.lpsRequests.filter((q) => q.endpoint === 'lps.location').length).toBeGreaterThan(locs.length * 5);
    expect(r.device.lps!.gnssGauge(r.time.now())).toMatch(/good|fair|poor/);
  });

  it('sends ZiLocation best effort: a refused one is dropped, not retried', async () => {
    const r = lpsRig({ gnss: { site: { latitude: 50, longitude: 8 } } });
    r.controller.hook = (q) => {
      if (q.endpoint !== 'info') return undefined;
      const m = Msg.ZInfoMsg.decode(payloadOf(r, q));
      return m.ztype === info.ZInfoTypes.ZiLocation ? { status: 503, headers: {}, body: new Uint8Array(0) } : undefined;
    };
    await running(r);
    await r.time.advance(120_000);
    const locationPosts = r.controller.of('info').filter((q) => Msg.ZInfoMsg.decode(payloadOf(r, q)).ztype === info.ZInfoTypes.ZiLocation);
    expect(locationPosts).toHaveLength(1);
    expect(r.device.stats().undelivered.info).toBe(0);
  });
});
