// Reboot storm: what it costs when a whole fleet loses power and comes back at once. A device with a
// TLS connection of its own (API v1's mutual TLS, v2 `connection: per-device`) loses it with the
// power and connects again with a full handshake, as a rebooted EVE does; devices on a worker's
// shared v2 pool (the baseline, run in the same invocation) reuse the pool's connections. Figures
// per kind: generator and controller CPU per rebooted device beyond the steady state, connects and
// handshakes, requests per rebooted device, and how long until every device is back.
//
// `--outage partition` cuts the whole fleet off the network for --down instead: nothing reboots, a
// device whose request failed gives its connection up (its FIN lost in the partition) and connects
// again when the network is back, resuming its TLS session. The controller's listener is read one
// second before the network comes back, so the figures show the silent connections it still holds.
//
//   npm run build && node dist/bench/reboot-storm.js [--devices 2000] [--kinds v2,v1] [--down 10s] [--outage power-loss|partition] [--workers <cores>] [--sink]
//
// Each kind is one run of N devices at EVE's default timers against `evesim controller` in a child
// process (conformance mode, verifying every request; --sink for the load-test sink), a fresh
// controller each (new PKI, so every device registers), the v1 devices on its v1 port
// (--controller-v1). Identities are made before the runs (not measured). Timeline of a run, A being
// the arrival window:
//
//   0 .. A              the devices arrive and onboard (not measured)
//   A+25 s .. A+65 s    steady window: the CPU rate at steady state
//   A+70 s              every device loses power (the power-loss fault) for --down
//   power back .. +60 s storm window: one minute from the power's return. Each device's timers run
//                       once in it, so it holds a minute of steady traffic plus what the reboot adds.
//
// Marginal CPU per rebooted device = (storm-window CPU − steady rate × 60 s) ÷ N, for the generator
// (process.cpuUsage: this process runs the workers) and the controller (/proc of its process); the
// same for requests. "Back": when the last device was onboarded again (the run's progress, each
// second), and the faults section's recovery (devices current again: a configuration answer to a
// request sent after the power came back, and the time to the last of them).

import os from 'node:os';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runScenario } from '../src/runner/run-scenario.js';
import type { FleetAggregate } from '../src/runner/aggregate.js';
import { ControllerAdminClient } from '../src/servers/controller/controller-admin-client.js';
import { parseDuration } from '../src/scenario/parse-duration.js';
import type { RunSummary } from '../src/runner/summary-json.js';
import type { OwnConnectionFigures } from '../src/transport/own-connection-figures.js';
import { checkBenchArgs, hasArg, positiveIntArg, stringArg } from './bench-args.js';
import { machineDescription } from './machine.js';
import { preparedFleetState } from './precreated-identities.js';
import { startStormController, stormTarget, type StormController } from './storm-controller.js';

const USAGE = `reboot-storm: generator and controller CPU per rebooted device when a whole fleet loses power (or the network) and comes back.
  node dist/bench/reboot-storm.js [--devices 2000] [--kinds v2,v1] [--down 10s] [--outage power-loss|partition] [--workers <cores>] [--sink]`;
checkBenchArgs(USAGE, ['devices=', 'workers=', 'down=', 'outage=', 'sink', 'kinds=', 'keep']);

const SEED = 42;
const FLEET_ID = 'reboot-storm-bench';
const STEADY_FROM_S = 25;
const STEADY_TO_S = 65;
const LOSS_AT_S = 70;
const STORM_S = 60;

const KINDS = {
  v2: { group: ['    api: v2'], what: 'API v2, the shared pool' },
  v1: { group: ['    api: v1'], what: 'API v1, mutual TLS, a connection each' },
  'v2-per-device': { group: ['    api: v2', '    connection: per-device'], what: 'API v2, a connection each' },
} as const;
type Kind = keyof typeof KINDS;

interface Mark {
  genCpuMs: number;
  ctlCpuMs: number;
  requests: number;
  connects: { full: number; resumed: number };
}

interface KindRun {
  kind: Kind;
  steady: { seconds: number; genCpuMs: number; ctlCpuMs: number; requests: number };
  storm: { genCpuMs: number; ctlCpuMs: number; requests: number; full: number; resumed: number };
  /** Fewest devices onboarded at once after the loss, and when every one was back (s after the power returned). */
  fewestOnboarded: number;
  allBackAfterS: number | undefined;
  worstLoopP99Ms: number;
  /** The controller's listener for this kind (v1, or v2): most TCP connections open at once, and opened over the run. */
  controllerConnections: { peak: number; opened: number } | undefined;
  /** That listener's open connections one second before the power (or the network) came back. */
  openBeforeBack: number | undefined;
  summary: RunSummary;
}

const devices = positiveIntArg('devices', 2000);
const workers = positiveIntArg('workers', os.availableParallelism());
const downMs = parseDuration(stringArg('down', '10s'));
const outage = stringArg('outage', 'power-loss');
if (outage !== 'power-loss' && outage !== 'partition') throw new Error(`--outage: "${outage}" is neither power-loss nor partition`);
/** How the printed lines name the outage, what came back, and the devices it hit. */
const WORDS = {
  'power-loss': { start: 'power lost', back: 'power', hit: 'lost power', perDevice: 'per rebooted device', after: 'reboot' },
  partition: { start: 'the network cut off', back: 'network', hit: 'hit by the partition', perDevice: 'per device', after: 'after the partition' },
}[outage];
const sink = hasArg('sink');
const kinds = stringArg('kinds', 'v2,v1')
  .split(',')
  .map((k) => k.trim()) as Kind[];
for (const k of kinds) if (!(k in KINDS)) throw new Error(`--kinds: unknown kind "${k}"; kinds are ${Object.keys(KINDS).join(', ')}`);
const keep = hasArg('keep');
// v1 onboarding costs about 14 ms of generator CPU per device (two full handshakes): spread it.
const arrivalS = Math.max(20, Math.ceil((devices * 15) / 1000));
const root = mkdtempSync(join(os.tmpdir(), 'evesim-reboot-storm-'));

try {
  console.log(`machine: ${machineDescription()}`);
  const stateDir = preparedFleetState(root, { seed: SEED, fleetId: FLEET_ID, devices, workers });
  console.log(
    `runs: ${devices} devices, ${workers} workers, EVE's default timers, ${sink ? 'the sink controller' : 'the conformance controller (every request verified)'} in another process; ` +
      `arrivals over ${arrivalS} s, steady window ${arrivalS + STEADY_FROM_S}-${arrivalS + STEADY_TO_S} s, ` +
      `${WORDS.start} at ${arrivalS + LOSS_AT_S} s for ${downMs / 1000} s, storm window the ${STORM_S} s from its return`,
  );
  const runs: KindRun[] = [];
  for (const kind of kinds) {
    const r = await kindRun(stateDir, kind);
    runs.push(r);
    console.log(describe(r));
  }
  const base = runs.find((r) => r.kind === 'v2');
  if (base) {
    for (const r of runs) {
      if (r === base) continue;
      // After a partition the pool's devices may cost less than at steady state: no ratio to a figure ≤ 0.
      if (marginal(base, 'genCpuMs') <= 0 || marginal(base, 'ctlCpuMs') <= 0) {
        console.log(`${r.kind} against v2 on the shared pool: no ratio, the pool's figures beyond the steady rate are not positive`);
        continue;
      }
      const [g, c] = [marginal(r, 'genCpuMs') / marginal(base, 'genCpuMs'), marginal(r, 'ctlCpuMs') / marginal(base, 'ctlCpuMs')];
      console.log(`${r.kind} against v2 on the shared pool: generator CPU ${WORDS.perDevice} × ${g.toFixed(2)}, controller × ${c.toFixed(2)}`);
    }
  }
} finally {
  if (!keep) rmSync(root, { recursive: true, force: true });
  else console.log(`kept ${root}`);
}

/** The storm window's figure beyond the steady rate, per rebooted device. */
function marginal(r: KindRun, what: 'genCpuMs' | 'ctlCpuMs' | 'requests'): number {
  return (r.storm[what] - (r.steady[what] / r.steady.seconds) * STORM_S) / devices;
}

function describe(r: KindRun): string {
  const perDevMin = (r.steady.genCpuMs / r.steady.seconds) * 60 / devices;
  const rec = r.summary.faults?.[0]?.recovery;
  const hit = r.summary.faults?.[0]?.devicesHit ?? 0;
  return [
    `${r.kind} (${KINDS[r.kind].what}):`,
    `  steady: generator ${perDevMin.toFixed(2)} ms CPU per device-minute, controller ${((r.steady.ctlCpuMs / r.steady.seconds) * 60 / devices).toFixed(2)}, ${((r.steady.requests / r.steady.seconds) * 60 / devices).toFixed(2)} requests per device-minute`,
    `  ${WORDS.after}, beyond the steady rate, ${WORDS.perDevice}: generator ${marginal(r, 'genCpuMs').toFixed(2)} ms CPU, controller ${marginal(r, 'ctlCpuMs').toFixed(2)} ms, ${marginal(r, 'requests').toFixed(2)} requests`,
    `  connects in the storm window: ${r.storm.full} full handshakes, ${r.storm.resumed} resumed (${(r.storm.full / devices).toFixed(2)} full per device)` +
      (r.controllerConnections
        ? `; the controller held at most ${r.controllerConnections.peak} connections at once (${(r.controllerConnections.peak / devices).toFixed(2)} per device; ${r.controllerConnections.opened} opened over the run)`
        : '') +
      (r.openBeforeBack !== undefined ? `, ${r.openBeforeBack} open 1 s before the ${WORDS.back} came back` : ''),
    `  back: ${hit} devices ${WORDS.hit} (fewest onboarded at once ${r.fewestOnboarded}); all onboarded again ${r.allBackAfterS === undefined ? 'never within the window' : `${r.allBackAfterS} s after the ${WORDS.back} returned`}; ` +
      (rec ? `${rec.devices} of ${hit} current again, the last ${(rec.maxMs / 1000).toFixed(1)} s after` : 'no recovery figures'),
    `  worst worker loop-lag p99 in the storm window ${r.worstLoopP99Ms.toFixed(1)} ms; exit figures: ${r.summary.overall.count} requests, ${r.summary.overall.errors} errors`,
  ].join('\n');
}

function scenarioYaml(kind: Kind, durationS: number): string {
  return [
    'name: reboot-storm-bench',
    `seed: ${SEED}`,
    `duration: ${durationS}s`,
    'gracefulStop: 1s',
    'arrival:',
    '  model: uniform',
    `  over: ${arrivalS}s`,
    'groups:',
    '  - name: fleet',
    `    count: ${devices}`,
    '    eveVersion: 14.5.2-kvm-amd64',
    ...KINDS[kind].group,
    '    logs:',
    '      linesPerSec: 0.01',
    'timeline:',
    `  - { at: ${arrivalS + LOSS_AT_S}s, action: ${outage}, for: ${downMs}ms }`,
    '',
  ].join('\n');
}

function connectsOf(agg: FleetAggregate | undefined): { full: number; resumed: number } {
  const all = agg?.ownConnections();
  let full = 0;
  let resumed = 0;
  for (const f of Object.values(all ?? {}) as OwnConnectionFigures[]) {
    full += f.connects - f.resumed;
    resumed += f.resumed;
  }
  return { full, resumed };
}

async function kindRun(stateDir: string, kind: Kind): Promise<KindRun> {
  const dir = mkdtempSync(join(root, `run-${kind}-`));
  const scenarioFile = join(dir, 'storm.yaml');
  const powerBackS = arrivalS + LOSS_AT_S + downMs / 1000;
  writeFileSync(scenarioFile, scenarioYaml(kind, Math.ceil(powerBackS + STORM_S + 5)));
  const controller: StormController = await startStormController(join(dir, 'controller'), { sink });
  const admin = new ControllerAdminClient(controller.adminUrl);
  try {
    let agg: FleetAggregate | undefined;
    const mark = (): Mark => ({
      genCpuMs: ((u) => (u.user + u.system) / 1000)(process.cpuUsage()),
      ctlCpuMs: controller.cpuMs(),
      requests: agg?.totalRequests ?? 0,
      connects: connectsOf(agg),
    });
    // A start instant far enough ahead that the workers are ready (identities loaded) by then.
    const startAtMs = Date.now() + 6000 + devices;
    const marks = new Map<string, Mark>();
    const at = (name: string, s: number) => setTimeout(() => marks.set(name, mark()), startAtMs + s * 1000 - Date.now());
    const timers = [
      at('steadyFrom', arrivalS + STEADY_FROM_S),
      at('steadyTo', arrivalS + STEADY_TO_S),
      at('stormFrom', powerBackS),
      at('stormTo', powerBackS + STORM_S),
    ];
    // The listener's open connections just before the outage ends: what the controller still holds.
    const listenerOf = (st: unknown) => (st as { connections?: Record<'v1' | 'v2', { open: number; peak: number; opened: number }> }).connections?.[kind === 'v1' ? 'v1' : 'v2'];
    let openBeforeBack: number | undefined;
    timers.push(
      setTimeout(
        () => void admin.stats().then((st) => (openBeforeBack = listenerOf(st)?.open), () => undefined),
        startAtMs + (powerBackS - 1) * 1000 - Date.now(),
      ),
    );
    let fewestOnboarded = devices;
    let allBackAfterS: number | undefined;
    let worstLoopP99Ms = 0;
    const errors: string[] = [];
    const { summary } = await runScenario({
      scenarioFile,
      stateDir,
      fleetId: FLEET_ID,
      workers,
      startAtMs,
      quiet: true,
      controller: stormTarget(controller),
      controllerAdmin: admin,
      onProgress: (a) => {
        agg = a;
        const t = (Date.now() - startAtMs) / 1000;
        if (t < arrivalS + LOSS_AT_S) return;
        const onboarded = a.lifecycle().onboarded;
        fewestOnboarded = Math.min(fewestOnboarded, onboarded);
        if (t >= powerBackS && t <= powerBackS + STORM_S) {
          for (const w of a.workers.values()) worstLoopP99Ms = Math.max(worstLoopP99Ms, w.loop.p99Ms);
          if (allBackAfterS === undefined && onboarded >= devices) allBackAfterS = Math.round(t - powerBackS);
        }
      },
      out: () => {},
      err: (t) => errors.push(t),
    });
    for (const tm of timers) clearTimeout(tm);
    if (!summary) throw new Error(`${kind} run gave no summary: ${errors.join('')}`);
    if (errors.some((e) => e.includes('passed'))) throw new Error(`the workers were not ready by the start instant: ${errors.join('')}`);
    const need = ['steadyFrom', 'steadyTo', 'stormFrom', 'stormTo'].map((n) => marks.get(n));
    if (need.some((m) => m === undefined)) throw new Error(`${kind} run: a measuring instant never came`);
    const [s0, s1, r0, r1] = need as Mark[];
    // Devices that lose power leave their own connections open: the controller holds them beside the new ones.
    const listener = listenerOf(await admin.stats());
    return {
      kind,
      steady: { seconds: STEADY_TO_S - STEADY_FROM_S, genCpuMs: s1.genCpuMs - s0.genCpuMs, ctlCpuMs: s1.ctlCpuMs - s0.ctlCpuMs, requests: s1.requests - s0.requests },
      storm: {
        genCpuMs: r1.genCpuMs - r0.genCpuMs,
        ctlCpuMs: r1.ctlCpuMs - r0.ctlCpuMs,
        requests: r1.requests - r0.requests,
        full: r1.connects.full - r0.connects.full,
        resumed: r1.connects.resumed - r0.connects.resumed,
      },
      fewestOnboarded,
      allBackAfterS,
      worstLoopP99Ms,
      controllerConnections: listener ? { peak: listener.peak, opened: listener.opened } : undefined,
      openBeforeBack,
      summary,
    };
  } finally {
    await admin.close();
    await controller.stop();
  }
}
