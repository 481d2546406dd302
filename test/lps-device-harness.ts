// A virtual device wired to a local profile server in process: the fake controller of
// device-harness.ts, and the embedded LPS's own state and request handler (LpsSite, LpsDeviceApi)
// behind a Transport, all on the fake clock. Used by test/lps-wiring.test.ts.

import type { config } from '../src/gen/eve-types.js';
import type { CellularSpec, GnssSpec } from '../src/device/radio/radio-specs.js';
import type { DeviceBehaviour, DeviceOptions } from '../src/device/device-options.js';
import { LpsAgentStats } from '../src/device/lps/lps-endpoints.js';
import type { Transport, TransportRequest } from '../src/device/ports.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import { VirtualDevice } from '../src/device/virtual-device.js';
import { LpsDeviceApi } from '../src/servers/lps/lps-device-api.js';
import { deviceLpsAddress, LpsSite, type LpsDevice } from '../src/servers/lps/lps-site.js';
import { BEHAVIOUR, FakeController, FakeTime, fixtures, type Rig } from './device-harness.js';

export const TOKEN = 'site-token-1';
export const LPS_PORT = 8888;

export interface LpsRig extends Rig {
  site: LpsSite;
  api: LpsDeviceApi;
  stats: LpsAgentStats;
  lpsRequests: (TransportRequest & { at: number })[];
  /** The device as the LPS knows it (created on its first request). */
  lpsDevice(): LpsDevice;
  /** A configuration pointing the device at the LPS, with fast LPS timers. */
  lpsConfig(over?: Partial<config.EdgeDevConfig>): config.EdgeDevConfig;
}

export function lpsRig(o: { behaviour?: Partial<DeviceBehaviour>; cellular?: CellularSpec; gnss?: GnssSpec; deviceToken?: string; radioDelayMs?: number } = {}): LpsRig {
  const { pki, identity } = fixtures();
  const time = new FakeTime();
  const controller = new FakeController(time, pki, identity);
  const site = new LpsSite(TOKEN, () => time.now());
  const api = new LpsDeviceApi(site, () => time.now());
  const lpsRequests: (TransportRequest & { at: number })[] = [];
  const lpsTransport: Transport = {
    async request(req) {
      lpsRequests.push({ ...req, at: time.now() });
      const r = api.handle(req.method, req.path, req.headers.host ?? '', req.headers['content-type'], '127.0.0.1', req.body ?? new Uint8Array(0));
      return { status: r.status, headers: r.contentType !== undefined ? { 'content-type': r.contentType } : {}, body: r.body ?? new Uint8Array(0) };
    },
  };
  const stats = new LpsAgentStats();
  const findings: Rig['findings'] = [];
  const lifecycle: Rig['lifecycle'] = [];
  const behaviour: DeviceBehaviour = {
    ...BEHAVIOUR,
    ...o.behaviour,
    ...(o.cellular !== undefined ? { cellular: o.cellular } : {}),
    ...(o.gnss !== undefined ? { gnss: o.gnss } : {}),
  };
  const opts: DeviceOptions = {
    index: 0,
    identity,
    behaviour,
    rootCertPem: pki.root.certPem,
    clock: time,
    scheduler: time,
    transport: controller,
    rng: SeededRng.create(7, 0, 'device'),
    onFinding: (f) => findings.push(f),
    onStateChange: (_from, to) => lifecycle.push(to),
    lps: {
      seed: 7,
      rng: SeededRng.create(7, 0, 'lps'),
      transportFor: () => lpsTransport,
      stats,
      radioTiming: { applyDelayMs: [o.radioDelayMs ?? 3000, o.radioDelayMs ?? 3000], failAfterMs: 10_000 },
    },
  };
  const device = new VirtualDevice(opts);
  const r: LpsRig = {
    time,
    controller,
    device,
    findings,
    lifecycle,
    site,
    api,
    stats,
    lpsRequests,
    lpsDevice: () => site.find(controller.deviceUuid, true)!,
    lpsConfig: (over = {}) => ({
      local_profile_server: deviceLpsAddress(controller.deviceUuid, LPS_PORT),
      profile_server_token: o.deviceToken ?? TOKEN,
      configItems: [
        { key: 'timer.lps.profile.interval', value: '5' },
        { key: 'timer.lps.radio.interval', value: '5' },
        { key: 'timer.lps.appinfo.interval', value: '10' },
        { key: 'timer.lps.devinfo.interval', value: '10' },
        { key: 'timer.location.app.interval', value: '10' },
        { key: 'timer.location.cloud.interval', value: '300' },
      ],
      ...over,
    }),
  };
  return r;
}
