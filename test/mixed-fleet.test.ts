// A mixed fleet against the embedded controller, in process and over real TLS: API v2 devices on the
// shared pool and on connections of their own, API v1 devices with mutual TLS (POST /config, and
// the deprecated GET /config), all run by one ShardRunner with the default (per-group) transport.
// Every request is watched on its way out: v1 devices use v1 paths, the onboarding certificate only
// for register and early pings, the device certificate afterwards; v2 devices no client
// certificate. The controller sees both APIs in one registry, and the figures come out per API. A
// device with a connection of its own that loses power loses that connection and its TLS session.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceOptions } from '../src/device/device-options.js';
import type { Transport, TransportRequest, TransportResponse } from '../src/device/ports.js';
import { VirtualDevice } from '../src/device/virtual-device.js';
import type { EndpointKey } from '../src/protocol/endpoints.js';
import { info } from '../src/gen/eve-types.js';
import { ShardRunner } from '../src/fleet/shard-runner.js';
import type { ShardResult, ShardTask, WorkerToMain } from '../src/fleet/worker-protocol.js';
import { FleetIdentityStore } from '../src/identity/fleet-identity-store.js';
import { FleetAggregate } from '../src/runner/aggregate.js';
import { devicesByApi } from '../src/runner/api-v1/api-breakdown.js';
import { buildMeasuredRun } from '../src/runner/build-summary.js';
import { buildMetricsRegistry } from '../src/runner/metrics-server.js';
import { pushFleet } from '../src/runner/controller-admin.js';
import { evaluateThresholds } from '../src/runner/thresholds.js';
import { parseThreshold } from '../src/scenario/parse-threshold.js';
import { apiGroupFields, type ApiGroupDocument } from '../src/scenario/api-v1/api-scenario.js';
import type { GroupSpec, Scenario } from '../src/scenario/scenario-types.js';
import { ControllerAdminClient } from '../src/servers/controller/controller-admin-client.js';
import { createControllerServer, type ControllerServer } from '../src/servers/controller/controller-server.js';

interface Seen {
  device: number;
  endpoint: string;
  method: string;
  path: string;
  clientCert: string | undefined;
  status: number;
}

/** Passes every request on and notes how it went out and what came back. */
class WatchingTransport implements Transport {
  constructor(
    private readonly inner: Transport,
    private readonly log: Seen[],
  ) {}
  async request(req: TransportRequest): Promise<TransportResponse> {
    const res = await this.inner.request(req).catch((e: unknown) => {
      this.log.push({ device: req.deviceIndex, endpoint: req.endpoint, method: req.method, path: req.path, clientCert: req.clientCert, status: 0 });
      throw e;
    });
    this.log.push({ device: req.deviceIndex, endpoint: req.endpoint, method: req.method, path: req.path, clientCert: req.clientCert, status: res.status });
    return res;
  }
}

function group(name: string, count: number, api: ApiGroupDocument, logFormat: 'newlogs' | 'legacy'): GroupSpec {
  return {
    name,
    count,
    ...apiGroupFields(api),
    eveVersion: '14.5.2-kvm-amd64',
    preRegistered: false,
    logFormat,
    logLinesPerSec: 5,
    flowlogIntervalMs: 2_000,
    apps: [{ name: 'web', activate: true, profiles: [], logLinesPerSec: 2, flowsPerMessage: 2 }],
    configItems: { 'timer.config.interval': '5', 'timer.metric.interval': '5', 'newlog.allow.fastupload': '1' },
    globalProfile: '',
    hardware: { ncpu: 2, memoryMB: 2048, storageMB: 8192, model: 'mixed', manufacturer: 'evesim' },
    appStepMs: 200,
  };
}

const SEED = 77;
const GROUPS: GroupSpec[] = [
  group('v2-shared', 3, { api: 'v2' }, 'newlogs'),
  group('v2-own', 2, { api: 'v2', connection: 'per-device' }, 'newlogs'),
  group('v1-post', 3, { api: 'v1' }, 'legacy'),
  group('v1-get', 2, { api: 'v1', v1Config: 'get' }, 'newlogs'),
];
const V1 = new Set([5, 6, 7, 8, 9]);
/** Power-cycled once everything runs: a v2 device with its own connection and a v1 device. */
const REBOOTED = [3, 5];
const V1_GET = new Set([8, 9]);

const V1_ENDPOINTS = ['ping', 'register', 'certs', 'config', 'attest', 'info', 'metrics', 'logs', 'applogs', 'newlogs', 'appnewlogs', 'flowlog'];

/** Every device has registered and reached the onboarded state (UUID known, attestation done). */
function everyDeviceHasOnboarded(log: readonly Seen[], devices: readonly VirtualDevice[]): boolean {
  return (
    new Set(log.filter((s) => s.endpoint === 'register' && s.status === 201).map((s) => s.device)).size === 10 &&
    devices.length === 10 &&
    devices.every((d) => d.lifecycle === 'onboarded')
  );
}

const sentTo = (d: VirtualDevice, endpoints: EndpointKey[]): number => endpoints.reduce((n, e) => n + (d.stats().endpoints[e]?.sent ?? 0), 0);

/**
 * Every v1 device (the tests below look at each v1 endpoint) runs its app and has a flow log
 * queued or sent. Device and app lines are generated at a fixed rate (5/s and 2/s here) and a flow
 * log only after the app has run for its 2 s interval, so by then every device has device and app
 * lines too; the graceful stop closes those files and delivers them.
 */
function everyV1DeviceIsBusy(devices: readonly VirtualDevice[]): boolean {
  const v1 = devices.filter((d) => V1.has(d.opts.index));
  return (
    v1.length === V1.size &&
    v1.every((d) => {
      const apps = d.appStates();
      const backlog = d.backlog();
      return (
        apps.length > 0 &&
        apps.every((a) => a.state === info.ZSwState.RUNNING) &&
        backlog.flowlog + sentTo(d, ['flowlog']) > 0
      );
    })
  );
}

describe('mixed v1/v2 fleet against the embedded controller', () => {
  let dir: string;
  let server: ControllerServer;
  let admin: ControllerAdminClient;
  const log: Seen[] = [];
  const posted: WorkerToMain[] = [];
  let result: ShardResult;
  let scenario: Scenario;
  let startedAtMs = 0;
  const devices: VirtualDevice[] = [];
  let runMs = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'evesim-mixed-'));
    const stateDir = join(dir, 'state');
    const store = FleetIdentityStore.open({ stateDir, seed: SEED });
    const fleetCa = store.fleetCaCertPem;
    store.release();
    server = await createControllerServer({ stateDir: join(dir, 'controller'), onboardingCaPems: [fleetCa] });
    admin = new ControllerAdminClient(server.adminUrl);
    scenario = {
      file: 'mixed.yaml',
      name: 'mixed',
      seed: SEED,
      // An upper bound only: the run phase ends as soon as what the tests look at has happened
      // (everyV1DeviceIsBusy), so a loaded machine gets more time instead of a failure.
      durationMs: 240_000,
      // Also a bound: the graceful stop ends as soon as every queue is delivered.
      gracefulStopMs: 60_000,
      target: { kind: 'embedded' },
      groups: GROUPS,
      arrival: { model: 'uniform', ratePerSec: 10 },
      timeline: [],
      thresholds: [],
    };
    const task: ShardTask = {
      workerId: 0,
      scenario,
      shard: { firstIndex: 0, count: 10, stride: 1 },
      target: { url: server.url, v1Url: server.v1Url!, rootCaPem: server.rootCaPem, insecure: false },
      stateDir,
      deltaIntervalMs: 500,
    };
    const runner = new ShardRunner(task, {
      createDevice: (o: DeviceOptions) => {
        const device = new VirtualDevice({ ...o, transport: new WatchingTransport(o.transport, log) });
        devices.push(device);
        return device;
      },
      post: (m) => posted.push(m),
    });
    const prep = await runner.prepare();
    await pushFleet(admin, GROUPS, prep.devices, undefined, 'replace');
    // The run phase ends once every device is onboarded and every v1 device runs its app and has
    // logs and flow logs to send (or sent them), then one device with a connection of its own per
    // API loses power and is back and busy again; the graceful stop then delivers what is queued.
    let conditionMet = false;
    let rebooted = false;
    const watch = setInterval(() => {
      if (!(everyV1DeviceIsBusy(devices) && everyDeviceHasOnboarded(log, devices))) return;
      if (!rebooted) {
        rebooted = true;
        for (const i of REBOOTED) devices.find((d) => d.opts.index === i)!.rebootNow('power-fail', 300);
        return;
      }
      conditionMet = true;
      runner.endRunPhase();
    }, 200);
    startedAtMs = Date.now() + 100;
    try {
      result = await runner.run(startedAtMs);
      runMs = Date.now() - startedAtMs;
    } finally {
      clearInterval(watch);
    }
    expect(conditionMet, 'the run phase reached its 240 s bound before every device onboarded and every v1 device ran its app').toBe(true);
  }, 300_000);

  afterAll(async () => {
    await admin?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('onboards every device of both APIs', () => {
    const agg = new FleetAggregate();
    for (const m of posted) if (m.type === 'delta') agg.merge(m.delta);
    agg.merge(result.finalDelta);
    expect(agg.onboardedEver()).toBe(10);
    expect(agg.byApi.onboardedEver('v1')).toBe(5);
    expect(agg.byApi.onboardedEver('v2')).toBe(5);
    expect(result.totals.findings).toBe(0);
    expect(result.totals.deviceErrors).toBe(0);
  });

  it('v1 devices speak v1: paths, client certificates, GET config where asked', () => {
    const v1 = log.filter((s) => V1.has(s.device) && !s.endpoint.startsWith('lps.'));
    expect(v1.length).toBeGreaterThan(50);
    for (const s of v1) expect(s.path, `${s.endpoint} of device ${s.device}`).toMatch(/^\/api\/v1\/edgedevice\//);
    for (const s of v1) {
      const early = s.endpoint === 'register' || (s.endpoint === 'ping' && s.clientCert === 'onboarding');
      expect(s.clientCert, `${s.method} ${s.path}`).toBe(early ? 'onboarding' : 'device');
    }
    expect(v1.filter((s) => s.endpoint === 'register').every((s) => s.status === 201)).toBe(true);
    expect(v1.some((s) => s.endpoint === 'uuid')).toBe(false); // v1 learns its UUID from config
    const endpoints = new Set(v1.map((s) => s.endpoint));
    for (const e of V1_ENDPOINTS) {
      expect(endpoints.has(e), e).toBe(true);
    }
    const configs = v1.filter((s) => s.endpoint === 'config');
    for (const s of configs) expect(s.method, `device ${s.device}`).toBe(V1_GET.has(s.device) ? 'GET' : 'POST');
    // Attestation happens at the document's device-scoped path.
    expect(v1.filter((s) => s.endpoint === 'attest').every((s) => /\/id\/[0-9a-f-]{36}\/attest$/.test(s.path))).toBe(true);
    // Nothing a v1 device sent was refused.
    expect(v1.filter((s) => !(s.status >= 200 && s.status < 300) && s.status !== 304)).toEqual([]);
  });

  it('v2 devices speak v2 without client certificates, on the shared pool or their own connection', () => {
    const v2 = log.filter((s) => !V1.has(s.device) && !s.endpoint.startsWith('lps.'));
    expect(v2.length).toBeGreaterThan(50);
    for (const s of v2) {
      expect(s.path).toMatch(/^\/api\/v2\/edgedevice\//);
      expect(s.clientCert).toBeUndefined();
    }
    expect(v2.filter((s) => s.endpoint === 'uuid').length).toBeGreaterThanOrEqual(5);
  });

  it('devices with connections of their own lose them when they lose power: the controller sees new connections and full handshakes', () => {
    const c = result.finalDelta.ownConnections!;
    // The timeline's reboot is a power loss: the old connection is left open without a FIN.
    expect(c.v1).toMatchObject({ devices: 5, failed: 0, deviceRestarts: 1, abandonedByPowerLoss: 1 });
    expect(c.v2PerDevice).toMatchObject({ devices: 2, failed: 0, deviceRestarts: 1, abandonedByPowerLoss: 1 });
    // Every v1 device: the onboarding connection, then the device certificate's without a session;
    // the rebooted one a third, again without a session (a rebooted EVE has none to offer).
    expect(c.v1!.certSwitches).toBeGreaterThanOrEqual(5);
    expect(c.v1!.connects - c.v1!.resumed).toBeGreaterThanOrEqual(5 * 2 + 1);
    expect(c.v2PerDevice!.connects - c.v2PerDevice!.resumed).toBeGreaterThanOrEqual(2 + 1);
  });

  it('the controller keeps both in one registry and counts per API', async () => {
    const stats = (await admin.stats()) as {
      byApi: { v1: { endpoints: Record<string, { requests: number; byStatus: Record<string, number> }> }; v2: { endpoints: Record<string, { requests: number }> } };
    };
    expect(stats.byApi.v1.endpoints.register!.byStatus).toEqual({ '201': 5 });
    expect(stats.byApi.v2.endpoints.register!.requests).toBe(5);
    const list = await admin.devices();
    const apis = list.devices.map((d) => d.api).sort();
    expect(apis).toEqual(['v1', 'v1', 'v1', 'v1', 'v1', 'v2', 'v2', 'v2', 'v2', 'v2']);
  });

  it('the summary and Prometheus label the figures with the API; {api:…} thresholds judge one API', async () => {
    const agg = new FleetAggregate();
    const registry = buildMetricsRegistry(agg);
    for (const m of posted) if (m.type === 'delta') agg.merge(m.delta);
    agg.merge(result.finalDelta);
    const text = await registry.metrics();
    expect(text).toContain('evesim_requests_total{api="v1",endpoint="register",code="201",class="2xx"} 5');
    expect(text).toContain('evesim_requests_total{api="v2",endpoint="register",code="201",class="2xx"} 5');
    expect(text).toMatch(/evesim_request_duration_seconds_count\{api="v1",endpoint="config",code="200",class="2xx"\} [1-9]/);
    expect(text).not.toMatch(/evesim_requests_total\{api="v1",endpoint="uuid"/);
    expect(text).toContain('evesim_devices_onboarded{api="v1"} 5');
    // The workers' deltas carry their connection figures live: the power-cycled v1 device's third full handshake is there.
    const fullV1 = Number(/^evesim_device_connects_total\{api="v1",handshake="full"\} (\d+)$/m.exec(text)?.[1]);
    expect(fullV1).toBeGreaterThanOrEqual(5 * 2 + 1);
    expect(fullV1).toBeLessThanOrEqual(result.finalDelta.ownConnections!.v1!.connects - result.finalDelta.ownConnections!.v1!.resumed);
    expect(text).toMatch(/^evesim_device_connections_dropped_total\{api="v2",cause="device-down"\} 1$/m);
    const run = buildMeasuredRun({
      scenario: { name: 'mixed', file: 'mixed.yaml', seed: SEED },
      target: 'embedded',
      startedAtMs,
      durationMs: runMs,
      totalDevices: 10,
      devicesByApi: devicesByApi(scenario.groups),
      aggregate: agg,
      undelivered: result.undelivered,
      generator: { workers: [], mainEventLoopLagP99Ms: 0, cpuPercent: 0 },
    });
    expect(run.byApi?.v1?.devices).toEqual({ total: 5, onboarded: 5 });
    expect(run.byApi?.v2?.devices).toEqual({ total: 5, onboarded: 5 });
    expect(run.byApi?.v1?.endpoints.uuid).toBeUndefined();
    expect(run.byApi?.v2?.endpoints.uuid?.count).toBeGreaterThanOrEqual(5);
    // Per-API counts add up to the all-API figures.
    for (const [ep, st] of Object.entries(run.endpoints)) {
      const sum = (run.byApi?.v1?.endpoints[ep]?.count ?? 0) + (run.byApi?.v2?.endpoints[ep]?.count ?? 0) + (run.byApi?.lps?.endpoints[ep]?.count ?? 0);
      expect(sum, ep).toBe(st.count);
    }
    const results = evaluateThresholds(
      ['onboarded{api:v1}.ratio == 1', 'devices{api:v2}.total == 5', 'register{api:v1}.count == 5', 'uuid{api:v1}.count == 0', 'errors{api:v1}.count == 0', 'config{api:v1}.p99 < 5s'].map(parseThreshold),
      run,
    );
    expect(results.map((r) => `${r.source}: ${r.detail}`).filter((_, i) => !results[i]!.passed)).toEqual([]);
  });
});
