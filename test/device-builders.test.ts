import { describe, expect, it } from 'vitest';
import { info } from '../src/gen/eve-types.js';
import { Msg } from '../src/protocol/messages.js';
import type { Codec } from '../src/protocol/codec.js';
import { encodeNewlogLine } from '../src/protocol/newlogs.js';
import { parseConfigItems } from '../src/device/core/eve-timers.js';
import { buildFlowMessage, type FlowScope } from '../src/device/telemetry/flowlog-builder.js';
import {
  APP_HALT_PATH,
  APP_START_PATH,
  CONTENT_TREE_PATH,
  VOLUME_CREATE_PATH,
  buildAppInfo,
  buildContentTreeInfo,
  buildDeletedInfo,
  buildDeviceInfo,
  buildNetworkInstanceInfo,
  buildVolumeInfo,
  durationAsTimestamp,
  machineArchOf,
  managementPorts,
  nextSwState,
  toTimestamp,
  type DeviceInfoInput,
} from '../src/device/telemetry/info-builders.js';
import { LogGenerator, buildAppLogBundle, buildLogBundle } from '../src/device/telemetry/log-generator.js';
import { DeviceCounters, type MetricsInput } from '../src/device/telemetry/metrics-builder.js';
import type { EndpointKey } from '../src/protocol/endpoints.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';

const DEV = '6ae3b91c-2f4d-4c8e-9b57-0d1e2f3a4b5c';
const APP = 'a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61';
const NI = 'd4a6f2c5-9b7e-4dbc-8f3a-5bac4e6d8f94';
const VOL = '29fbc7ba-e0cd-4201-9e8f-a0f19dbc3e49';
const T0 = Date.UTC(2026, 4, 20, 9, 0, 0);
const HW = { ncpu: 4, memoryMB: 8192, storageMB: 128_000, model: 'SIM-1000', manufacturer: 'evesim' };

/** A decoded Timestamp as a plain object (decoders leave default nanos on the prototype). */
const plainTs = (t: { seconds?: number | null; nanos?: number | null } | null | undefined) => ({ seconds: t?.seconds ?? 0, nanos: t?.nanos ?? 0 });

/** Default values proto3 leaves off the wire. */
function isDefault(v: unknown): boolean {
  return v === undefined || v === null || v === 0 || v === '' || v === false || (Array.isArray(v) && v.length === 0);
}

/**
 * Every non-default value of `sent` must come back in `got`: catches misspelled field names
 * (protobufjs silently drops unknown keys) and wrong types.
 */
function expectCarried(got: unknown, sent: unknown, path = '$'): void {
  if (isDefault(sent)) return;
  if (Array.isArray(sent)) {
    expect(Array.isArray(got), `${path} is an array`).toBe(true);
    expect((got as unknown[]).length, `${path}.length`).toBe(sent.length);
    sent.forEach((v, i) => expectCarried((got as unknown[])[i], v, `${path}[${i}]`));
    return;
  }
  if (typeof sent === 'object') {
    expect(got, `${path} present`).toBeTypeOf('object');
    for (const [k, v] of Object.entries(sent as object)) expectCarried((got as Record<string, unknown>)[k], v, `${path}.${k}`);
    return;
  }
  expect(got, path).toBe(sent);
}

/** Encodes, decodes, and checks nothing was lost and the JSON mapping is stable. */
function roundTrip<T>(c: Codec<T>, msg: T): T {
  const bytes = c.encode(msg);
  const back = c.decode(bytes);
  expectCarried(back, msg);
  expect(c.toJSON(back)).toEqual(c.toJSON(c.decode(c.encode(back))));
  return back;
}

function deviceInput(over: Partial<DeviceInfoInput> = {}): DeviceInfoInput {
  return {
    devId: DEV,
    deviceIndex: 42,
    serial: 'SIM-000042',
    behaviour: { eveVersion: '14.5.2-kvm-amd64', hardware: HW },
    hasTpm: false,
    bootTime: T0,
    restartCounter: 1,
    rebootConfigCounter: 0,
    shutdownConfigCounter: 0,
    attestationState: info.AttestationState.ATTESTATION_STATE_COMPLETE,
    ...over,
  };
}

describe('info builders', () => {
  it('ZiDevice is self-consistent and survives encode/decode', () => {
    const cfg = parseConfigItems([
      { key: 'timer.config.interval', value: '30' },
      { key: 'timer.metric.interval', value: '1' },
      { key: 'timer.bogus', value: 'x' },
    ]);
    const msg = buildDeviceInfo(
      deviceInput({
        configItemStatus: cfg.status,
        appInstances: [{ uuid: APP, name: 'nginx', domainName: `${APP}.1.1` }],
        lastRebootReason: 'Reboot from controller (counter 1)',
        lastRebootTime: T0 - 60_000,
        lastBootReason: info.BootReason.BOOT_REASON_REBOOT_CMD,
        deviceName: 'line3-gw-042',
        enterpriseName: 'Acme',
        projectName: 'Line 3',
        projectId: 'prj-1',
      }),
      T0 + 5_000,
    );
    const back = roundTrip(Msg.ZInfoMsg, msg);
    expect(back.ztype).toBe(info.ZInfoTypes.ZiDevice);
    expect(plainTs(back.atTimeStamp)).toEqual({ seconds: (T0 + 5_000) / 1000, nanos: 0 });
    const d = back.dinfo!;
    expect([d.machineArch, d.cpuArch, d.platform]).toEqual(['x86_64', 'x86_64', 'x86_64']);
    expect(d.ncpu).toBe(4);
    expect(d.memory).toBe(8192);
    expect(d.HostName).toBe(DEV);
    expect(d.minfo!.serialNumber).toBe('SIM-000042');
    expect(d.network!.map((n) => n.devName)).toEqual(['eth0', 'eth1']);
    expect(d.network![0]!.IPAddrs![0]).toMatch(/^10\.\d+\.\d+\.\d+$/);
    expect(d.swList!.map((s) => [s.partitionLabel, s.activated, s.shortVersion ?? ''])).toEqual([
      ['IMGA', true, '14.5.2-kvm-amd64'],
      ['IMGB', false, ''],
    ]);
    expect(d.HSMStatus).toBe(info.HwSecurityModuleStatus.NOTFOUND);
    expect(d.api_capability).toBe(22);
    expect(d.last_boot_reason).toBe(info.BootReason.BOOT_REASON_REBOOT_CMD);
    expect(d.configItemStatus!.configItems!['timer.config.interval']).toMatchObject({ value: '30' });
    expect(d.configItemStatus!.configItems!['timer.metric.interval']!.error).toMatch(/out of bounds/);
    expect(d.configItemStatus!.unknownConfigItems!['timer.bogus']!.error).toMatch(/Unknown configItem/);
    expect(d.attestation_info!.state).toBe(info.AttestationState.ATTESTATION_STATE_COMPLETE);
    expect(d.device_name).toBe('line3-gw-042');
    expect(d.appInstances![0]!.uuid).toBe(APP);

    const tpm = roundTrip(Msg.ZInfoMsg, buildDeviceInfo(deviceInput({ hasTpm: true, attestationError: 'nonce mismatch' }), T0));
    expect(tpm.dinfo!.HSMStatus).toBe(info.HwSecurityModuleStatus.ENABLED);
    expect(tpm.dinfo!.attestation_info!.error!.description).toBe('nonce mismatch');
  });

  it('management ports differ between devices and are valid addresses', () => {
    const seen = new Set<string>();
    for (const idx of [0, 1, 249, 250, 251, 65_535, 65_536, 1_000_000]) {
      for (const p of managementPorts(idx)) {
        expect(p.mac).toMatch(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
        expect(p.ipv4.split('.').every((o) => +o >= 0 && +o <= 255)).toBe(true);
        expect(+p.ipv4.split('.')[3]!).toBeGreaterThanOrEqual(2);
        expect(p.ipv6LinkLocal).toMatch(/^fe80::/);
        seen.add(p.mac).add(p.ipv4);
      }
    }
    expect(seen.size).toBe(8 * 4);
    expect(machineArchOf('14.5.2-kvm-arm64')).toBe('aarch64');
  });

  it('ZiApp, ZiNetworkInstance, ZiVolume, ZiContentTree survive encode/decode', () => {
    const app = roundTrip(
      Msg.ZInfoMsg,
      buildAppInfo(
        DEV,
        {
          uuid: APP,
          name: 'nginx-gateway',
          version: '4',
          state: info.ZSwState.RUNNING,
          bootTime: T0,
          volumeRefs: [VOL],
          interfaces: [{ vifName: 'nbu1x1.1', mac: '02:16:3e:4a:10:01', ip: '10.1.0.2', gateway: '10.1.0.1' }],
          error: { description: 'health-check failed', at: T0 },
        },
        T0 + 1,
      ),
    );
    expect(app.ztype).toBe(info.ZInfoTypes.ZiApp);
    expect(app.ainfo!.state).toBe(info.ZSwState.RUNNING);
    expect(app.ainfo!.network![0]!.IPAddrs).toEqual(['10.1.0.2']);
    expect(plainTs(app.atTimeStamp)).toEqual({ seconds: Math.floor((T0 + 1) / 1000), nanos: 1_000_000 });

    const ni = roundTrip(
      Msg.ZInfoMsg,
      buildNetworkInstanceInfo(
        DEV,
        {
          uuid: NI,
          version: '1',
          displayName: 'default-local',
          instType: 2,
          activated: true,
          state: info.ZNetworkInstanceState.ZNETINST_STATE_ONLINE,
          upTime: T0,
          ports: ['eth0'],
          bridgeNum: 1,
          bridgeIp: '10.1.0.1',
          vifs: [{ vifName: 'nbu1x1.1', mac: '02:16:3e:4a:10:01', appId: APP, ip: '10.1.0.2' }],
        },
        T0,
      ),
    );
    expect(ni.niinfo!.ipAssignments![0]!.ipAddress).toEqual(['10.1.0.2']);

    const vol = roundTrip(
      Msg.ZInfoMsg,
      buildVolumeInfo(
        DEV,
        { uuid: VOL, displayName: 'root', state: info.ZSwState.CREATED_VOLUME, progressPercentage: 100, maxSizeBytes: 2 ** 33, curSizeBytes: 48_234_496, createTime: T0, refCount: 1, generationCount: 2 },
        T0,
      ),
    );
    expect(vol.vinfo!.resources!.maxSizeBytes).toBe(2 ** 33);

    const ct = roundTrip(
      Msg.ZInfoMsg,
      buildContentTreeInfo(
        DEV,
        { uuid: VOL, displayName: 'nginx:1.27', sha256: 'ab'.repeat(32), state: info.ZSwState.LOADED, progressPercentage: 100, curSizeBytes: 1234, createTime: T0, refCount: 1, generationCount: 1 },
        T0,
      ),
    );
    expect(ct.cinfo!.componentShaList).toEqual(['ab'.repeat(32)]);
  });

  it('deletion messages carry only the identifier', () => {
    for (const [kind, field, idField] of [
      ['app', 'ainfo', 'AppID'],
      ['network-instance', 'niinfo', 'networkID'],
      ['volume', 'vinfo', 'uuid'],
      ['content-tree', 'cinfo', 'uuid'],
    ] as const) {
      const msg = buildDeletedInfo(kind, DEV, APP, T0);
      const back = roundTrip(Msg.ZInfoMsg, msg);
      const body = Msg.ZInfoMsg.toJSON(back)[field] as Record<string, unknown>;
      expect(body).toEqual({ [idField]: APP });
    }
  });

  it('ZSwState paths end where EVE ends them', () => {
    expect(APP_START_PATH[0]).toBe(info.ZSwState.INITIAL);
    expect(APP_START_PATH.at(-1)).toBe(info.ZSwState.RUNNING);
    expect(APP_HALT_PATH).toEqual([info.ZSwState.HALTING, info.ZSwState.HALTED]);
    expect(VOLUME_CREATE_PATH.at(-1)).toBe(info.ZSwState.CREATED_VOLUME);
    expect(CONTENT_TREE_PATH.at(-1)).toBe(info.ZSwState.LOADED);
    expect(nextSwState(APP_START_PATH, info.ZSwState.BOOTING)).toBe(info.ZSwState.RUNNING);
    expect(nextSwState(APP_START_PATH, info.ZSwState.RUNNING)).toBeUndefined();
    expect(new Set(APP_START_PATH).size).toBe(APP_START_PATH.length);
  });

  it('timestamps: ms → {seconds, nanos}; uptime as a 1970 date', () => {
    expect(toTimestamp(1_779_268_447_123)).toEqual({ seconds: 1_779_268_447, nanos: 123_000_000 });
    expect(durationAsTimestamp(10_896_000)).toEqual({ seconds: 10_896, nanos: 0 });
  });
});

describe('metrics builder', () => {
  const input = (now: number): MetricsInput => ({
    devId: DEV,
    deviceIndex: 42,
    hardware: HW,
    bootTime: T0,
    apps: [
      {
        uuid: APP,
        name: 'nginx',
        version: '1',
        running: now > T0 + 30_000,
        bootTime: T0 + 30_000,
        allocatedMB: 512,
        vifNames: ['nbu1x1.1'],
        volumes: [{ uuid: VOL, provisionedMB: 1024, diskType: 'QCOW2' }],
      },
    ],
    lastReceivedConfig: now - 1000,
    lastProcessedConfig: now - 2000,
  });

  it('keeps urlMetrics per endpoint and app instance, in first-use order, as host:port plus path (URLPathString)', () => {
    const rng = SeededRng.create(1, 42, 'metrics');
    const counters = new DeviceCounters(rng, HW, T0);
    const APP2 = '6a1b2c3d-0000-4000-8000-00000000abcd';
    const keys: Array<[EndpointKey, string | undefined]> = [
      ['ping', undefined],
      ['certs', undefined],
      ['register', undefined],
      ['uuid', undefined],
      ['attest', undefined],
      ['config', undefined],
      ['info', undefined],
      ['metrics', undefined],
      ['newlogs', undefined],
      ['appnewlogs', APP],
      ['appnewlogs', APP2],
      ['flowlog', undefined],
    ];
    // Key i gets i+1 successes of 100·(i+1) bytes, interleaved so slots grow while counting.
    for (let round = 0; round < keys.length; round++) {
      for (let i = round; i < keys.length; i++) {
        const [endpoint, appUuid] = keys[i]!;
        counters.recordRequest({ endpoint, appUuid, reqBytes: 100 * (i + 1), respBytes: 7, success: true, latencyMs: 2, at: T0 + round });
      }
    }
    counters.recordRequest({ endpoint: 'uuid', reqBytes: 50, respBytes: 0, success: false, latencyMs: 0, at: T0 + 20 });
    const now = T0 + 60_000;
    const z = roundTrip(Msg.ZMetricMsg, counters.build({ ...input(now), server: 'ctrl.example.com:8443' }, now, rng)).dm!.zedcloud![0]!;
    const d = `ctrl.example.com:8443/api/v2/edgedevice`;
    expect(z.urlMetrics!.map((u) => u.url)).toEqual([
      `${d}/ping`,
      `${d}/certs`,
      `${d}/register`,
      `${d}/uuid`,
      ...['attest', 'config', 'info', 'metrics', 'newlogs'].map((e) => `${d}/id/${DEV}/${e}`),
      `${d}/id/${DEV}/apps/instanceid/${APP}/newlogs`,
      `${d}/id/${DEV}/apps/instanceid/${APP2}/newlogs`,
      `${d}/id/${DEV}/flowlog`,
    ]);
    z.urlMetrics!.forEach((u, i) => {
      expect(u.sentMsgCount).toBe(i + 1);
      expect(u.sentByteCount).toBe((i + 1) * 100 * (i + 1));
      expect(u.recvByteCount).toBe(7 * (i + 1));
      expect(u.tryMsgCount ?? 0).toBe(i === 3 ? 1 : 0);
    });
    expect(counters.urlCounter('appnewlogs', 'sentMsg', APP2)).toBe(11);
    expect(counters.urlCounter('appnewlogs', 'sentMsg', DEV)).toBeUndefined();
    expect(counters.urlCounter('logs', 'sentMsg')).toBeUndefined();
    // An API v1 device sends v1 paths, and so counts them (v1-endpoints.ts).
    const v1 = roundTrip(Msg.ZMetricMsg, counters.build({ ...input(now), server: 'ctrl:443', api: 'v1' }, now, rng)).dm!.zedcloud![0]!;
    expect(v1.urlMetrics!.map((u) => u.url).slice(4, 6)).toEqual([`ctrl:443/api/v1/edgedevice/id/${DEV}/attest`, 'ctrl:443/api/v1/edgedevice/config']);
    expect(v1.urlMetrics![9]!.url).toBe(`ctrl:443/api/v1/edgedevice/apps/instanceid/id/${APP}/newlogs`);
  });

  it('encodes dm and am, with upTime as a 1970 timestamp', () => {
    const rng = SeededRng.create(1, 42, 'metrics');
    const counters = new DeviceCounters(rng, HW, T0);
    const url = `controller.example.com:443/api/v2/edgedevice/id/${DEV}/config`;
    counters.recordRequest({ endpoint: 'config', reqBytes: 500, respBytes: 3000, success: true, latencyMs: 12, resumed: true, at: T0 + 1000 });
    counters.recordRequest({ endpoint: 'config', reqBytes: 500, respBytes: 0, success: false, latencyMs: 0, at: T0 + 2000 });
    counters.recordRequest({ endpoint: 'config', reqBytes: 500, respBytes: 20, success: false, latencyMs: 3, at: T0 + 3000 });
    counters.recordLogUpload({ bytes: 40_000, status: 201, latencyMs: 80, at: T0 + 4000 });
    counters.recordFlowlog({ delivered: true, flows: 12, dnsRequests: 3 });
    const now = T0 + 3_600_000;
    const back = roundTrip(Msg.ZMetricMsg, counters.build({ ...input(now), server: 'controller.example.com:443' }, now, rng));
    const dm = back.dm!;
    expect(plainTs(dm.cpuMetric!.upTime)).toEqual({ seconds: 3600, nanos: 0 });
    expect(dm.memory!.usedMem! + dm.memory!.availMem!).toBe(HW.memoryMB);
    expect(dm.network!.map((n) => n.iName)).toEqual(['eth0', 'eth1']);
    const z = dm.zedcloud![0]!;
    expect([z.success, z.failures]).toEqual([1, 2]);
    expect(z.urlMetrics![0]).toMatchObject({ url, sentMsgCount: 1, sentByteCount: 500, tryMsgCount: 2, tryByteCount: 1000, recvMsgCount: 2, recvByteCount: 3020, total_time_spent: 12, sess_resume_count: 1 });
    expect(plainTs(z.lastSuccess)).toEqual(toTimestamp(T0 + 1000));
    expect(dm.newlog!.totalBytesUpload).toBe(40_000);
    expect(dm.flowlog!.flows!.success).toBe(12);
    expect(plainTs(dm.last_received_config)).toEqual(toTimestamp(now - 1000));
    expect(dm.deviceMemory!.allocated_appsMB).toBe(512);
    const am = back.am![0]!;
    expect(am.AppID).toBe(APP);
    expect(am.cpu!.upTime!.seconds).toBe(3600 - 30);
    expect(am.appMemory!.allocatedMB).toBe(512);
    expect(am.disk![0]!.provisioned).toBe(1024);
  });

  it('cumulative counters only grow, and grow with time', () => {
    const rng = SeededRng.create(2, 7, 'metrics');
    const counters = new DeviceCounters(rng, HW, T0);
    let prev = counters.build(input(T0 + 60_000), T0 + 60_000, rng);
    for (let i = 2; i < 30; i++) {
      const now = T0 + i * 60_000;
      const cur = counters.build(input(now), now, rng);
      const p = prev.dm!;
      const c = cur.dm!;
      for (let k = 0; k < 2; k++) {
        for (const f of ['txBytes', 'rxBytes', 'txPkts', 'rxPkts', 'rxDrops'] as const) {
          expect(c.network![k]![f]!).toBeGreaterThanOrEqual(p.network![k]![f]!);
        }
      }
      expect(c.network![0]!.rxBytes!).toBeGreaterThan(p.network![0]!.rxBytes!);
      expect(c.cpuMetric!.total_ns!).toBeGreaterThan(p.cpuMetric!.total_ns!);
      expect(c.disk![0]!.writeCount!).toBeGreaterThanOrEqual(p.disk![0]!.writeCount!);
      if (prev.am && cur.am) expect(cur.am[0]!.network![0]!.txBytes!).toBeGreaterThanOrEqual(prev.am[0]!.network![0]!.txBytes!);
      prev = cur;
    }
    // Building twice at the same instant does not move counters.
    const now = T0 + 30 * 60_000;
    const a = counters.build(input(now), now, rng).dm!.network![0]!.txBytes;
    const b = counters.build(input(now), now, rng).dm!.network![0]!.txBytes;
    expect(b).toBe(a);
  });

  it("keeps each app's counters apart, and forgets a deleted app without touching the others", () => {
    const rng = SeededRng.create(5, 3, 'metrics');
    const counters = new DeviceCounters(rng, HW, T0);
    const APP2 = '6a1b2c3d-0000-4000-8000-00000000abcd';
    const APP3 = '7b2c3d4e-0000-4000-8000-00000000dcba';
    const base = input(T0 + 60_000).apps[0]!;
    const apps = [base, { ...base, uuid: APP2, name: 'redis' }, { ...base, uuid: APP3, name: 'mqtt' }];
    const at = (now: number, list = apps): MetricsInput => ({ ...input(now), apps: list.map((a) => ({ ...a, running: true })) });
    const first = counters.build(at(T0 + 60_000), T0 + 60_000, rng).am!;
    expect(first.map((a) => a.AppID)).toEqual([APP, APP2, APP3]);
    const tx = (uuid: string) => counters.appCounter(uuid, 'txB')!;
    const before3 = { tx: tx(APP3), cpu: counters.appCounter(APP3, 'cpuSec')!, load: counters.appCounter(APP3, 'cpuLoad')! };
    expect(new Set([tx(APP), tx(APP2), tx(APP3)]).size).toBe(3);
    counters.removeApp(APP2);
    expect(counters.appCounter(APP2, 'txB')).toBeUndefined();
    expect({ tx: tx(APP3), cpu: counters.appCounter(APP3, 'cpuSec')!, load: counters.appCounter(APP3, 'cpuLoad')! }).toEqual(before3);
    const later = counters.build(at(T0 + 120_000, [apps[0]!, apps[2]!]), T0 + 120_000, rng).am!;
    expect(later.map((a) => a.AppID)).toEqual([APP, APP3]);
    expect(later[1]!.network![0]!.txBytes!).toBeGreaterThan(before3.tx);
    // A re-added app starts over.
    counters.build(at(T0 + 180_000), T0 + 180_000, rng);
    expect(tx(APP2)).toBeLessThan(tx(APP3));
  });

  it('is deterministic for the same seed', () => {
    const run = () => {
      const rng = SeededRng.create(3, 9, 'metrics');
      const c = new DeviceCounters(rng, HW, T0);
      c.build(input(T0 + 60_000), T0 + 60_000, rng);
      return Msg.ZMetricMsg.encode(c.build(input(T0 + 120_000), T0 + 120_000, rng));
    };
    expect(Buffer.from(run()).equals(Buffer.from(run()))).toBe(true);
  });
});

describe('log generator', () => {
  it('device entries: msgid from 0, exact long-run rate, in-window sorted timestamps', () => {
    const rng = SeededRng.create(4, 1, 'logs');
    const g = new LogGenerator(1, '14.5.2-kvm-amd64', T0);
    const all = [];
    for (let i = 0; i < 20; i++) {
      const from = T0 + i * 7_300;
      const batch = g.deviceEntries(from, from + 7_300, 2.5, rng);
      for (const e of batch) {
        const ms = e.timestamp.seconds * 1000 + e.timestamp.nanos / 1e6;
        expect(ms).toBeGreaterThan(from);
        expect(ms).toBeLessThanOrEqual(from + 7_300);
      }
      all.push(...batch);
    }
    expect(all.length).toBe(Math.floor(20 * 7.3 * 2.5)); // 365 lines in 146 s at 2.5/s
    expect(all.map((e) => e.msgid)).toEqual(all.map((_, i) => i));
    const ts = all.map((e) => e.timestamp.seconds * 1e9 + e.timestamp.nanos);
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
    const sources = new Set(all.map((e) => e.source));
    for (const s of ['zedagent', 'nim', 'kernel']) expect(sources.has(s)).toBe(true);
    for (const e of all) {
      expect(e.content.length).toBeGreaterThan(0);
      expect(['info', 'warning', 'error', 'debug']).toContain(e.severity);
      if (e.source === 'kernel') expect(e.iid).toBeUndefined();
      else expect(e.iid).toMatch(/^\d+$/);
    }
    // Entries are valid newlogs lines: msgid 0 is omitted, later ones are JSON numbers.
    const first = JSON.parse(encodeNewlogLine(all[0]!));
    expect(first.msgid).toBeUndefined();
    expect(JSON.parse(encodeNewlogLine(all[1]!)).msgid).toBe(1);
    expect(first.timestamp).toEqual(all[0]!.timestamp);
  });

  it('app entries count per app from 0 and use the domain name as source', () => {
    const rng = SeededRng.create(4, 2, 'logs');
    const g = new LogGenerator(2, '14.5.2-kvm-amd64', T0);
    const a = { uuid: APP, domainName: `${APP}.1.1`, container: 'nginx' };
    const b = { uuid: VOL, domainName: `${VOL}.1.2` };
    const ea = g.appEntries(a, T0, T0 + 10_000, 1, rng);
    const eb = g.appEntries(b, T0, T0 + 10_000, 0.5, rng);
    const ea2 = g.appEntries(a, T0 + 10_000, T0 + 20_000, 1, rng);
    expect(ea.map((e) => e.msgid)).toEqual([...Array(10).keys()]);
    expect(ea2[0]!.msgid).toBe(10);
    expect(eb.map((e) => e.msgid)).toEqual([0, 1, 2, 3, 4]);
    expect(ea[0]!.source).toBe(`${APP}.1.1`);
    expect(JSON.parse(ea[0]!.content).container).toBe('nginx');
    expect(g.deviceMsgidNext).toBe(0); // device stream untouched
    g.restart(T0 + 99_000);
    expect(g.appEntries(a, T0 + 99_000, T0 + 100_000, 1, rng)[0]!.msgid).toBe(0);
  });

  it('is deterministic and builds legacy bundles that survive encode/decode', () => {
    const gen = () => new LogGenerator(3, '14.5.2-kvm-amd64', T0).deviceEntries(T0, T0 + 20_000, 1, SeededRng.create(5, 3, 'logs'));
    expect(gen()).toEqual(gen());
    const entries = gen();
    const bundle = roundTrip(Msg.LogBundle, buildLogBundle(DEV, '14.5.2-kvm-amd64', 'IMGA', entries, T0 + 20_000));
    expect(bundle.log!.length).toBe(20);
    expect(bundle.log![5]!.msgid).toBe(5);
    const appBundle = roundTrip(Msg.AppInstanceLogBundle, buildAppLogBundle(entries.slice(0, 3), T0));
    expect(appBundle.log!.length).toBe(3);
    const ev = new LogGenerator(3, 'v', T0).deviceEvent(T0, 'zedagent', 'info', 'config applied');
    expect(ev.msgid).toBe(0);
    roundTrip(Msg.LogEntry, ev);
  });
});

describe('flowlog builder', () => {
  const scope: FlowScope = { devId: DEV, appUuid: APP, intf: 'eth0', localIntf: 'nbu1x1.1', netInstUuid: NI, appIp: '10.1.0.2' };

  it('builds a FlowMessage that survives encode/decode', () => {
    const msg = buildFlowMessage(scope, { flows: 25, windowStart: T0, windowEnd: T0 + 120_000 }, SeededRng.create(6, 1, 'flowlog'));
    const back = roundTrip(Msg.FlowMessage, msg);
    expect(back.scope).toMatchObject({ uuid: APP, intf: 'eth0', localIntf: 'nbu1x1.1', netInstUUID: NI });
    expect(back.flows!.length).toBe(25);
    for (const f of back.flows!) {
      expect([1, 2]).toContain(f.action);
      const s = f.startTime!.seconds! * 1000 + f.startTime!.nanos! / 1e6;
      const e = f.endTime!.seconds! * 1000 + f.endTime!.nanos! / 1e6;
      expect(s).toBeGreaterThanOrEqual(T0);
      expect(e).toBeGreaterThanOrEqual(s);
      expect(e).toBeLessThanOrEqual(T0 + 120_000);
      expect(f.flow!.src === '10.1.0.2' || f.flow!.dest === '10.1.0.2').toBe(true);
    }
    expect(back.dnsReqs!.length).toBeGreaterThan(0);
  });

  it('is deterministic and handles an empty window', () => {
    const b = (seed: number) => Msg.FlowMessage.encode(buildFlowMessage(scope, { flows: 10, windowStart: T0, windowEnd: T0 + 120_000 }, SeededRng.create(seed, 1, 'flowlog')));
    expect(Buffer.from(b(7)).equals(Buffer.from(b(7)))).toBe(true);
    expect(Buffer.from(b(7)).equals(Buffer.from(b(8)))).toBe(false);
    const empty = roundTrip(Msg.FlowMessage, buildFlowMessage(scope, { flows: 0, windowStart: T0, windowEnd: T0 }, SeededRng.create(1)));
    expect(empty.flows ?? []).toEqual([]);
  });
});
