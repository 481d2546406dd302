// What the embedded controller's core spends on one device's changed config: after a config item is
// set for the group, every device polls with its old hash and gets the new config, built, encoded,
// hashed and signed for it (a fleet-wide change, as a scenario's timeline makes one). In process
// (ControllerCore.handle, no sockets), so the figure is the core's own: the verifying controller and
// the sink (1 % of signatures verified), N devices a round, a new value every round.
//
//   npx tsc && node dist/bench/config-change-cost.js [--devices 600] [--rounds 14]
//
// Baselines in the same run, per config: one ECDSA P-256 sign of a body of the same size (what the
// answer's envelope costs) and one build alone (ConfigService.build: the config built, encoded and
// hashed). It also prints how many builds each changed config took (ConfigService.builds): one,
// since the handler's hash check and its answer share the build (two before 2026-11-30).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createControllerPki } from '../src/identity/controller-pki.js';
import { createDeviceIdentity, type DeviceIdentityMaterial } from '../src/identity/device-identity.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import { sealRequest, signResponsePayload } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import { applyConfigPatch, parseConfigPatch } from '../src/servers/controller/config-overlay.js';
import { ControllerCore } from '../src/servers/controller/controller-core.js';
import { resolveControllerOptions } from '../src/servers/controller/controller-options.js';
import { DEFAULT_GROUP } from '../src/servers/controller/fleet-spec.js';
import { SINK_INTEGRITY_TOKEN } from '../src/servers/controller/sink-responder.js';
import { machineDescription } from './machine.js';
import { median } from './median.js';
import { checkBenchArgs, positiveIntArg } from './bench-args.js';

const USAGE = `config-change-cost: the embedded controller core's CPU per changed config a device fetches (verifying and sink), against a build and a sign.
  node dist/bench/config-change-cost.js [--devices 600] [--rounds 14]`;
checkBenchArgs(USAGE, ['devices=', 'rounds=']);

const devices = positiveIntArg('devices', 600);
const rounds = positiveIntArg('rounds', 14);
/** Rounds left out of the median while V8 compiles the paths. */
const WARM_ROUNDS = 4;
if (rounds <= WARM_ROUNDS) throw new Error(`--rounds must be more than ${WARM_ROUNDS} (the first ${WARM_ROUNDS} warm up and are not counted)`);

const NOW = Date.UTC(2026, 10, 20);
const P = '/api/v2/edgedevice';
const dir = mkdtempSync(join(tmpdir(), 'evesim-config-change-'));
const ca = createFleetCa('config-change-cost', NOW);
const identities: DeviceIdentityMaterial[] = Array.from({ length: devices }, (_, i) => createDeviceIdentity(ca, 'config-change-cost', i, NOW).identity);
const app = (name: string) => ({ name, activate: true, profiles: [], logLinesPerSec: 0, flowsPerMessage: 0 });
// steady-state.yaml's edge-kvm group: two apps.
const group = { ...DEFAULT_GROUP, name: 'edge', apps: [app('gateway'), app('analytics')] };
const cpuUs = (c: NodeJS.CpuUsage): number => c.user + c.system;

interface Figures {
  perConfigUs: number;
  buildsPerConfig: number;
  buildUs: number;
  signUs: number;
  configBytes: number;
}

function measure(sink: boolean): Figures {
  const stateDir = mkdtempSync(join(dir, sink ? 'sink-' : 'verifying-'));
  const core = new ControllerCore(
    resolveControllerOptions({
      stateDir,
      onboardingCaPems: [ca.certPem],
      ...(sink ? { sink: { verifySample: 0.01 } } : {}),
      fleet: { groups: [group], devices: identities.map((d) => ({ serial: d.serial, group: 'edge', deviceCertPem: d.deviceCertPem })) },
    }),
    { ...createControllerPki({ nowMs: NOW }), dir: stateDir },
  );
  const records = identities.map((d) => core.registry.find(d.serial)!);
  const token = sink ? SINK_INTEGRITY_TOKEN : new Uint8Array([7, 7, 7, 7]);
  // The verifying controller answers config only to an attested device: the token a quote would have issued.
  if (!sink) for (const r of records) r.attestState().integrityToken = token;
  const hashes = records.map((r) => core.configs.currentHash(r));
  const perConfig: number[] = [];
  const buildsPer: number[] = [];
  let configBytes = 0;
  const edge = core.registry.group('edge')!;
  for (let round = 0; round < rounds; round++) {
    applyConfigPatch(edge.overlay, parseConfigPatch({ configItems: { 'timer.metric.interval': String(120 + round) } }, edge.appNames));
    // Sealed before the clock starts: the device's side is not the controller's cost.
    const bodies = identities.map((d, i) => sealRequest(Msg.ConfigRequest.encode({ configHash: hashes[i]!, integrity_token: token }), { key: d.deviceKey, certDerHash: d.deviceCertHash }));
    const builds0 = core.configs.builds;
    const c0 = process.cpuUsage();
    for (let i = 0; i < devices; i++) {
      const r = core.handle('POST', `${P}/id/${records[i]!.uuid}/config`, bodies[i]!, NOW);
      if (r.status !== 200) throw new Error(`device ${identities[i]!.serial}: config answered ${r.status}, expected 200 with the changed config`);
      configBytes = r.body!.length;
    }
    perConfig.push(cpuUs(process.cpuUsage(c0)) / devices);
    buildsPer.push((core.configs.builds - builds0) / devices);
    for (let i = 0; i < devices; i++) hashes[i] = core.configs.currentHash(records[i]!);
  }
  // Baselines: a build alone (a new version every pass, so nothing is reused) and one sign of a body this size.
  const buildRounds: number[] = [];
  for (let round = 0; round < rounds; round++) {
    applyConfigPatch(edge.overlay, parseConfigPatch({ configItems: { 'timer.config.interval': String(60 + round) } }, edge.appNames));
    const c0 = process.cpuUsage();
    for (const r of records) core.configs.build(r);
    buildRounds.push(cpuUs(process.cpuUsage(c0)) / devices);
  }
  const body = new Uint8Array(configBytes).fill(3);
  const signRounds: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < devices; i++) signResponsePayload(body, core.pki.signing.key);
    signRounds.push(cpuUs(process.cpuUsage(c0)) / devices);
  }
  const counted = (xs: number[]) => median(xs.slice(WARM_ROUNDS));
  return { perConfigUs: counted(perConfig), buildsPerConfig: counted(buildsPer), buildUs: counted(buildRounds), signUs: counted(signRounds), configBytes };
}

try {
  console.log(`machine: ${machineDescription()}`);
  console.log(`${devices} devices a round, ${rounds} rounds (medians of rounds ${WARM_ROUNDS + 1}-${rounds}); a group of two apps, as steady-state.yaml's edge-kvm`);
  for (const sink of [false, true]) {
    const f = measure(sink);
    console.log(
      `${sink ? 'sink (1 % verified)' : 'verifying controller'}: ${f.perConfigUs.toFixed(1)} µs per changed config (${f.buildsPerConfig} build each, signed answer ${f.configBytes} bytes); ` +
        `baselines, same run: a build alone ${f.buildUs.toFixed(1)} µs, one sign ${f.signUs.toFixed(1)} µs; beyond them ${(f.perConfigUs - f.buildUs - f.signUs).toFixed(1)} µs`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
