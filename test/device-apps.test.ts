import { describe, expect, it } from 'vitest';
import { info } from '../src/gen/eve-types.js';
import { effectiveActivation } from '../src/device/config/app-instance.js';
import { REBOOT_DOWNTIME_MS, REBOOT_GRACE_MS } from '../src/device/virtual-device.js';
import { Msg } from '../src/protocol/messages.js';
import { onboard, payloadOf, rig, type Rig } from './device-harness.js';

const S = info.ZSwState;
const APP = 'a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61';
const NI = 'c0ffee00-0000-4000-8000-000000000001';
const VOL = 'b0b0b0b0-0000-4000-8000-000000000002';
const CT = 'cccccccc-0000-4000-8000-000000000003';

function appConfig(over: { activate?: boolean; restart?: number; purge?: number; profiles?: string[] } = {}) {
  return {
    uuidandversion: { uuid: APP, version: '1' },
    displayname: 'nginx-gateway',
    activate: over.activate ?? true,
    restart: { counter: over.restart ?? 0 },
    purge: { counter: over.purge ?? 0 },
    profile_list: over.profiles ?? [],
    interfaces: [{ name: 'eth0', networkId: NI }],
    volumeRefList: [{ uuid: VOL }],
  };
}

/** ZiApp states of APP in the order the controller received them. */
const appStates = (r: Rig) => r.controller.infos().filter((m) => m.ainfo?.AppID === APP).map((m) => m.ainfo!.state ?? S.INVALID);
const deviceInfos = (r: Rig) => r.controller.infos().filter((m) => m.dinfo).map((m) => m.dinfo!);

describe('app instances (§3.4, §6.3)', () => {
  it('walks an app to RUNNING with one ZiApp per state, and to HALTED when deactivated', async () => {
    const r = rig({ behaviour: { appStepMs: 5_000 } });
    r.controller.config = {
      apps: [appConfig()],
      networkInstances: [{ uuidandversion: { uuid: NI, version: '1' }, displayname: 'default', activate: true, instType: 2 }],
      volumes: [{ uuid: VOL, displayName: 'nginx-vol', generationCount: 1, maxsizebytes: 1 << 30 }],
      contentInfo: [{ uuid: CT, displayName: 'nginx:1.27', sha256: 'ab'.repeat(32), maxSizeBytes: 50 << 20 }],
    };
    await onboard(r);
    await r.time.advance(60_000);
    expect(appStates(r)).toEqual([S.INITIAL, S.DOWNLOAD_STARTED, S.DOWNLOADED, S.VERIFIED, S.LOADED, S.CREATED_VOLUME, S.INSTALLED, S.BOOTING, S.RUNNING]);
    const running = r.controller.infos().filter((m) => m.ainfo?.AppID === APP).pop()!.ainfo!;
    expect(running).toMatchObject({ AppName: 'nginx-gateway', appVersion: '1', volumeRefs: [VOL] });
    expect(running.bootTime!.seconds).toBeGreaterThan(0);
    // Network instance, volume and content tree info for the configured objects.
    const infos = r.controller.infos();
    expect(infos.filter((m) => m.niinfo?.networkID === NI).pop()!.niinfo!.state).toBe(info.ZNetworkInstanceState.ZNETINST_STATE_ONLINE);
    expect(infos.filter((m) => m.vinfo?.uuid === VOL).pop()!.vinfo!.state).toBe(S.CREATED_VOLUME);
    expect(infos.filter((m) => m.cinfo?.uuid === CT).pop()!.cinfo!.state).toBe(S.LOADED);
    expect(deviceInfos(r).pop()!.appInstances).toEqual([{ uuid: APP, name: 'nginx-gateway', domainName: `${APP}.1.1` }]);

    // Deactivate: HALTING at once, HALTED one step later.
    const n = appStates(r).length;
    r.controller.config = { ...r.controller.config, apps: [appConfig({ activate: false })] };
    await r.time.advance(120_000);
    expect(appStates(r).slice(n)).toEqual([S.HALTING, S.HALTED]);

    // Removing the app (and the objects) sends identifier-only deletion info.
    r.controller.config = {};
    await r.time.advance(120_000);
    const last = r.controller.infos().map((m) => Msg.ZInfoMsg.toJSON(m));
    const lastOf = (key: string, idKey: string, id: string) => last.filter((m) => (m[key] as Record<string, unknown> | undefined)?.[idKey] === id).pop()![key];
    expect(lastOf('ainfo', 'AppID', APP)).toEqual({ AppID: APP });
    expect(lastOf('niinfo', 'networkID', NI)).toEqual({ networkID: NI });
    expect(lastOf('vinfo', 'uuid', VOL)).toEqual({ uuid: VOL });
    expect(lastOf('cinfo', 'uuid', CT)).toEqual({ uuid: CT });
  });

  it('restarts and purges only when the counters change after the first one seen', async () => {
    const r = rig({ behaviour: { appStepMs: 2_000 } });
    r.controller.config = { apps: [appConfig({ restart: 4, purge: 2 })] };
    await onboard(r);
    await r.time.advance(60_000);
    expect(appStates(r)).not.toContain(S.RESTARTING);
    expect(appStates(r)).not.toContain(S.PURGING);
    let n = appStates(r).length;
    r.controller.config = { apps: [appConfig({ restart: 5, purge: 2 })] };
    await r.time.advance(90_000);
    expect(appStates(r).slice(n)).toEqual([S.RESTARTING, S.BOOTING, S.RUNNING]);
    n = appStates(r).length;
    r.controller.config = { apps: [appConfig({ restart: 5, purge: 3 })] };
    await r.time.advance(90_000);
    expect(appStates(r).slice(n)).toEqual([S.PURGING, S.CREATED_VOLUME, S.INSTALLED, S.BOOTING, S.RUNNING]);
  });

  it('applies the profile rule with global_profile', async () => {
    expect(effectiveActivation(true, [], 'field', '')).toBe(true);
    expect(effectiveActivation(true, ['lab'], '', '')).toBe(true);
    expect(effectiveActivation(true, ['lab'], 'field', '')).toBe(false);
    expect(effectiveActivation(true, ['lab', 'field'], 'field', '')).toBe(true);
    expect(effectiveActivation(false, ['field'], 'field', '')).toBe(false);
    expect(effectiveActivation(true, ['lab'], 'field', 'lab')).toBe(true); // local profile wins

    const r = rig({ behaviour: { appStepMs: 1_000 } });
    r.controller.config = { global_profile: 'field', apps: [appConfig({ profiles: ['lab'] })] };
    await onboard(r);
    await r.time.advance(30_000);
    expect(appStates(r).pop()).toBe(S.HALTED);
    r.controller.config = { global_profile: 'lab', apps: [appConfig({ profiles: ['lab'] })] };
    await r.time.advance(90_000);
    expect(appStates(r).slice(-2)).toEqual([S.BOOTING, S.RUNNING]);
  });
});

describe('device operation commands (§3.5)', () => {
  it('only records the first reboot counter; a later change reboots the device', async () => {
    const r = rig({ behaviour: { appStepMs: 1_000 } });
    r.controller.config = { reboot: { counter: 7 }, apps: [appConfig()] };
    await onboard(r);
    await r.time.advance(60_000);
    expect(r.lifecycle).not.toContain('idle');
    expect(deviceInfos(r).pop()).toMatchObject({ rebootConfigCounter: 7, last_boot_reason: info.BootReason.BOOT_REASON_FIRST });
    expect(deviceInfos(r).pop()!.restartCounter ?? 0).toBe(0);

    const uuids = r.controller.of('uuid').length;
    r.controller.config = { reboot: { counter: 8 }, apps: [appConfig()] };
    await r.time.advance(60_000);
    // REBOOTING reported before going down.
    expect(deviceInfos(r).some((d) => d.state === info.ZDeviceState.ZDEVICE_STATE_REBOOTING && d.rebootConfigCounter === 8)).toBe(true);
    await r.time.advance(REBOOT_GRACE_MS + REBOOT_DOWNTIME_MS + 120_000);
    expect(r.lifecycle).toContain('idle');
    expect(r.device.lifecycle).toBe('onboarded');
    // New boot: the UUID was kept (no /uuid), a fresh attestation, a new configuration fetch.
    expect(r.controller.of('uuid').length).toBe(uuids);
    const d = deviceInfos(r).pop()!;
    expect(d).toMatchObject({ rebootConfigCounter: 8, restartCounter: 1, last_boot_reason: info.BootReason.BOOT_REASON_REBOOT_CMD, lastRebootReason: 'Reboot from controller' });
    const nonces = r.controller.of('attest').map((q) => Msg.ZAttestReq.decode(payloadOf(r, q)).reqType).filter((t) => t === 2);
    expect(nonces).toHaveLength(2);
    // The app came back through BOOTING to RUNNING.
    expect(appStates(r).slice(-3)).toEqual([S.INSTALLED, S.BOOTING, S.RUNNING]);
    // The same counter again does nothing.
    const boots = r.lifecycle.filter((l) => l === 'idle').length;
    await r.time.advance(300_000);
    expect(r.lifecycle.filter((l) => l === 'idle').length).toBe(boots);
  });

  it('a shutdown counter change halts all apps (the first one is only recorded)', async () => {
    const r = rig({ behaviour: { appStepMs: 1_000 } });
    r.controller.config = { shutdown: { counter: 1 }, apps: [appConfig()] };
    await onboard(r);
    await r.time.advance(30_000);
    expect(appStates(r).pop()).toBe(S.RUNNING);
    r.controller.config = { shutdown: { counter: 2 }, apps: [appConfig()] };
    await r.time.advance(90_000);
    expect(appStates(r).slice(-2)).toEqual([S.HALTING, S.HALTED]);
    expect(deviceInfos(r).pop()!.shutdown_config_counter).toBe(2);
  });

  it('rebootNow (fleet timeline) power-cycles the device', async () => {
    const r = rig();
    await onboard(r);
    r.device.rebootNow();
    expect(r.device.lifecycle).toBe('idle');
    await r.time.advance(REBOOT_DOWNTIME_MS + 120_000);
    expect(r.device.lifecycle).toBe('onboarded');
    expect(deviceInfos(r).pop()).toMatchObject({ restartCounter: 1, last_boot_reason: info.BootReason.BOOT_REASON_POWER_FAIL });
    // Certificates are fetched again at boot.
    expect(r.controller.of('certs').length).toBeGreaterThanOrEqual(2);
  });
});
