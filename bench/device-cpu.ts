// What the device side of the generator costs per device-minute, apart from the network: N full
// virtual devices of a scenario (default scenarios/steady-state.yaml, EVE's default timers, with
// its apps) on a simulated clock, answered in process by the embedded controller's core in sink
// mode (no sockets, no TLS, no undici). Time jumps from one wake-up to the next, so ten simulated
// minutes take seconds, and the figure is thread CPU (process.cpuUsage of this single-threaded
// process), which a busy machine disturbs far less than wall-clock figures.
//
//   npm run build && node --expose-gc dist/bench/device-cpu.js [--devices 2000] [--minutes 10] [--scenario FILE]
//       [--profile FILE.cpuprofile] [--heap-snapshot FILE.heapsnapshot] [--config-change-at MIN [--config-item KEY=VALUE]]
//
// It prints, for the steady-state window (every device onboarded, from the 5th simulated minute
// on): device CPU per device-minute and per request, requests per device-minute by endpoint, and
// beside them in the same run the baseline every request must pay anyway: one ECDSA P-256
// signature of the same payloads (EVE signs every request) — so "beyond the signature" is what
// the device logic costs. The controller core's own time is measured around each call and taken
// out. The network side (undici, TLS, loopback) is the upload-cost bench's figure. With
// --expose-gc it also prints the devices' live heap per device at the end (controller core included).
//
// --config-change-at MIN sets a config item for every group at that simulated minute, as a
// scenario's timeline does through the admin API (default timer.metric.interval=120, what
// steady-state.yaml does at 7 minutes), and prints what the minute after it cost beyond an average
// minute of the window before it, per device: the device side and the controller core apart. Every
// device fetches, verifies and applies the new config and publishes its device info in that minute,
// so it is the heaviest minute of such a run after onboarding.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { Session } from 'node:inspector/promises';
import { createControllerPki } from '../src/identity/controller-pki.js';
import { FleetIdentityStore } from '../src/identity/fleet-identity-store.js';
import { ControllerCore } from '../src/servers/controller/controller-core.js';
import { resolveControllerOptions } from '../src/servers/controller/controller-options.js';
import { loadScenario } from '../src/scenario/load-scenario.js';
import { FleetLayout } from '../src/fleet/fleet-layout.js';
import { MetricRecorder } from '../src/fleet/metric-recorder.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import { VirtualDevice } from '../src/device/virtual-device.js';
import type { Millis, Transport, TransportRequest, TransportResponse } from '../src/device/ports.js';
import { TimedTransport } from '../src/transport/timed-transport.js';
import { signRequestPayload } from '../src/protocol/envelope.js';
import { checkBenchArgs, positiveIntArg, stringArg } from './bench-args.js';
import { applyConfigPatch, parseConfigPatch } from '../src/servers/controller/config-overlay.js';
import { machineDescription } from './machine.js';
import { SimTime } from './sim-time.js';

const USAGE = `device-cpu: device-side CPU per device-minute on a simulated clock (no network), against one signature per request.
  node --expose-gc dist/bench/device-cpu.js [--devices 2000] [--minutes 10] [--scenario FILE]
      [--profile FILE.cpuprofile] [--heap-snapshot FILE.heapsnapshot] [--config-change-at MIN [--config-item KEY=VALUE]]`;
checkBenchArgs(USAGE, ['devices=', 'minutes=', 'scenario=', 'profile=', 'config-change-at=', 'config-item=', 'alloc-profile=', 'heap-snapshot=']);

const devices = positiveIntArg('devices', 2000);
const minutes = positiveIntArg('minutes', 10);
const scenarioFile = resolve(stringArg('scenario', 'scenarios/steady-state.yaml'));
const profileFile = stringArg('profile', '');
const WINDOW_FROM_MIN = 5;
if (minutes <= WINDOW_FROM_MIN) throw new Error(`--minutes must be more than ${WINDOW_FROM_MIN} (the steady-state window starts there)`);
const changeAt = positiveIntArg('config-change-at', 0);
if (changeAt !== 0 && (changeAt <= WINDOW_FROM_MIN || changeAt >= minutes)) {
  throw new Error(`--config-change-at ${changeAt}: expected a minute after ${WINDOW_FROM_MIN} (the window's start, so a steady minute comes before it) and before --minutes ${minutes}`);
}
const configItem = stringArg('config-item', 'timer.metric.interval=120');
const itemSplit = configItem.indexOf('=');
if (itemSplit <= 0) throw new Error(`--config-item ${configItem}: expected KEY=VALUE`);

const time = new SimTime();
const t0: Millis = time.t;
const scenario = loadScenario(scenarioFile, { devices, durationMs: minutes * 60_000, arrivalOverMs: 60_000 });
const layout = FleetLayout.of(scenario);
const dir = mkdtempSync(join(os.tmpdir(), 'evesim-device-cpu-'));
const store = FleetIdentityStore.open({ seed: scenario.seed });
const identities = await store.shardAsync({ first: 0, stride: 1, count: devices });
const pki = createControllerPki({ nowMs: time.t });
const core = new ControllerCore(
  resolveControllerOptions({
    stateDir: dir,
    onboardingCaPems: [store.fleetCaCertPem],
    sink: { verifySample: 0.01 },
    fleet: {
      groups: [...scenario.groups],
      devices: identities.map((id, i) => ({ serial: id.serial, group: scenario.groups[layout.groupOf(i)]!.name })),
    },
  }),
  { ...pki, dir },
);

/** The controller core behind a Transport, its own CPU measured per call and taken out of the figure. */
let controllerNs = 0n;
/** Config answers with a body (the device's hash was stale) and the controller core's time on them. */
const configBodies = { count: 0, ns: 0n };
const byEndpoint = new Map<string, number>();
let counting = false;
const signedPayloadSizes: number[] = [];
const inProcess: Transport = {
  request(req: TransportRequest): Promise<TransportResponse> {
    const c0 = process.hrtime.bigint();
    const r = core.handle(req.method, req.path, req.body ?? new Uint8Array(0), time.now());
    const ns = process.hrtime.bigint() - c0;
    controllerNs += ns;
    if (req.endpoint === 'config' && r.status === 200) {
      configBodies.count++;
      configBodies.ns += ns;
    }
    if (counting) {
      byEndpoint.set(req.endpoint, (byEndpoint.get(req.endpoint) ?? 0) + 1);
      if (req.method === 'POST' && req.body && signedPayloadSizes.length < 5000) signedPayloadSizes.push(req.body.length);
    }
    return Promise.resolve({ status: r.status, headers: r.contentType ? { 'content-type': r.contentType } : {}, body: r.body ?? new Uint8Array(0) });
  },
};
// What a worker puts around every request: timing, the metric recorder's histograms.
const recorder = new MetricRecorder({ maxFindingSamples: 50 });
const transport = new TimedTransport(inProcess, time, [recorder]);
const gcNow = (globalThis as { gc?: () => void }).gc;
const liveBytes = (): number => {
  gcNow?.();
  gcNow?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const liveBefore = liveBytes();
const fleet: VirtualDevice[] = [];
const findings = new Map<string, number>();
for (let i = 0; i < devices; i++) {
  const d = new VirtualDevice({
    index: i,
    identity: identities[i]!,
    behaviour: layout.behaviours[layout.groupOf(i)]!,
    rootCertPem: pki.root.certPem,
    clock: time,
    scheduler: time.scheduler,
    transport,
    rng: SeededRng.create(scenario.seed, i, 'device'),
    onFinding: (f) => findings.set(f.kind, (findings.get(f.kind) ?? 0) + 1),
  });
  fleet.push(d);
  // Arrivals spread over the first simulated minute, as --arrival-over 1m would.
  time.scheduler.at(t0 + Math.floor((i / devices) * 60_000), () => d.start());
}


const wallStart = Date.now();
await time.runUntil(t0 + WINDOW_FROM_MIN * 60_000);
recorder.takeDelta();
const onboardedAtWindow = fleet.filter((d) => d.lifecycle === 'onboarded').length;
const allocFile = stringArg('alloc-profile', '');
const session = profileFile || allocFile ? new Session() : undefined;
if (session) session.connect();
if (session && profileFile) {
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
if (session && allocFile) {
  // Every allocation sampled, garbage included: what the window allocates, not what it keeps.
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
}
counting = true;
controllerNs = 0n;
const cpu0 = process.cpuUsage();
const change = changeAt === 0 ? undefined : await measureConfigChange(changeAt);
await time.runUntil(t0 + minutes * 60_000);
const cpu = process.cpuUsage(cpu0);
counting = false;
const liveAfter = liveBytes();
const snapshotFile = stringArg('heap-snapshot', '');
if (snapshotFile) (await import('node:v8')).writeHeapSnapshot(snapshotFile);
if (session && profileFile) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(profileFile, JSON.stringify(profile));
}
if (session && allocFile) {
  const { profile } = await session.post('HeapProfiler.stopSampling');
  writeFileSync(allocFile, JSON.stringify(profile));
}
session?.disconnect();
for (const d of fleet) d.stop();
rmSync(dir, { recursive: true, force: true });

/** Runs to the change, makes it, runs one minute more: the device and controller-core CPU of a steady minute and of that one. */
async function measureConfigChange(at: number) {
  const slice = async (until: Millis) => {
    const c0 = process.cpuUsage();
    const ctl0 = controllerNs;
    const req0 = new Map(byEndpoint);
    const bodies0 = { ...configBodies };
    await time.runUntil(until);
    const c = process.cpuUsage(c0);
    const controllerUs = Number((controllerNs - ctl0) / 1000n);
    const requests = new Map([...byEndpoint].map(([k, v]) => [k, v - (req0.get(k) ?? 0)]));
    const configBodyCount = configBodies.count - bodies0.count;
    const configBodyUs = Number((configBodies.ns - bodies0.ns) / 1000n);
    return { deviceUs: c.user + c.system - controllerUs, controllerUs, requests, configBodyCount, configBodyUs };
  };
  const steady = await slice(t0 + at * 60_000);
  const steadyMinutes = at - WINDOW_FROM_MIN;
  const items = { [configItem.slice(0, itemSplit)]: configItem.slice(itemSplit + 1) };
  for (const g of core.registry.allGroups()) applyConfigPatch(g.overlay, parseConfigPatch({ configItems: items }, g.appNames));
  const after = await slice(t0 + (at + 1) * 60_000);
  return { at, steadyMinutes, steady, after };
}

// Baseline in the same run: one ECDSA P-256 signature per request, over payloads of the sizes sent.
const key = identities[0]!.deviceKey;
const payloads = signedPayloadSizes.map((n) => new Uint8Array(Math.max(0, n - 110)).fill(7));
const sign0 = process.cpuUsage();
for (const p of payloads) signRequestPayload(p, key);
const signCpu = process.cpuUsage(sign0);
const signUs = (signCpu.user + signCpu.system) / payloads.length;

const windowMin = minutes - WINDOW_FROM_MIN;
const requests = [...byEndpoint.values()].reduce((a, b) => a + b, 0);
const deviceCpuUs = cpu.user + cpu.system - Number(controllerNs / 1000n);
const perDeviceMinMs = deviceCpuUs / 1000 / (devices * windowMin);
const perReqUs = deviceCpuUs / requests;
console.log(`machine: ${machineDescription()}`);
console.log(
  `run: ${devices} devices of ${scenarioFile.split('/').pop()} on a simulated clock, ${minutes} min (window: minutes ${WINDOW_FROM_MIN}-${minutes}, ` +
    `${onboardedAtWindow}/${devices} onboarded at its start), ${((Date.now() - wallStart) / 1000).toFixed(1)} s wall; findings: ${findings.size ? JSON.stringify(Object.fromEntries(findings)) : 'none'}`,
);
console.log(`requests per device-minute: ${(requests / devices / windowMin).toFixed(2)} (${[...byEndpoint].map(([k, v]) => `${k} ${(v / devices / windowMin).toFixed(2)}`).join(', ')})`);
console.log(`controller core (taken out): ${(Number(controllerNs / 1000n) / requests).toFixed(1)} µs per request`);
console.log(`device CPU: ${perDeviceMinMs.toFixed(3)} ms per device-minute, ${perReqUs.toFixed(1)} µs per request`);
console.log(`baseline, same run: one ECDSA P-256 sign ${signUs.toFixed(1)} µs; the device costs ${(perReqUs / signUs).toFixed(2)} signatures per request, ${(perReqUs - signUs).toFixed(1)} µs beyond the signature`);
if (change) {
  const { steady, after, steadyMinutes } = change;
  const perDevice = (us: number) => (us / devices).toFixed(1);
  const extraReqs = [...after.requests]
    .map(([k, v]) => [k, v - (steady.requests.get(k) ?? 0) / steadyMinutes] as const)
    .filter(([, v]) => Math.abs(v) >= devices * 0.01)
    .map(([k, v]) => `${k} ${(v / devices).toFixed(2)}`)
    .join(', ');
  console.log(`config change (${configItem}, every group) at minute ${change.at}; the minute after it, per device:`);
  console.log(`  requests beyond a steady minute: ${extraReqs || 'none'}`);
  console.log(
    `  the controller core: ${(after.configBodyCount / devices).toFixed(2)} config answers with a body, ` +
      `${(after.configBodyUs / Math.max(1, after.configBodyCount)).toFixed(1)} µs each (built, encoded, hashed and signed; the sink's 1 % verify sample included)`,
  );
  console.log(
    `  CPU beyond a steady minute (minutes ${WINDOW_FROM_MIN}-${change.at}: ${perDevice(steady.deviceUs / steadyMinutes)} µs device, ${perDevice(steady.controllerUs / steadyMinutes)} µs controller core): ` +
      `device ${perDevice(after.deviceUs - steady.deviceUs / steadyMinutes)} µs, controller core ${perDevice(after.controllerUs - steady.controllerUs / steadyMinutes)} µs ` +
      `(differences of whole minutes: the log and flow-log ticks that fall in each minute move them by about 100 µs from run to run)`,
  );
}
if (gcNow) console.log(`live heap + ArrayBuffers per device at the end (forced GC): ${((liveAfter - liveBefore) / devices / 1024).toFixed(1)} KiB`);
else console.log('run with node --expose-gc for live memory per device');
if (profileFile) console.log(`profile of the window: ${profileFile}`);
