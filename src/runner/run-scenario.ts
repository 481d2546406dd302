// Runs a scenario from the main thread: loads it, prepares the fleet state (fleet CA), starts the
// embedded controller in its own thread (or checks the real controller's files), splits the fleet
// into shards — one piscina worker per core by default — lets every worker load its identities,
// pushes the fleet map to the controller, starts all workers at one common instant, merges their
// 1 s deltas (metrics server, progress line), applies controller-side timeline actions through the
// admin API, and at the end builds the RunSummary, judges thresholds, prints the report and
// returns the exit code: 0 all thresholds passed, 1 a threshold failed (or a worker died),
// 2 bad input.

import { accessSync, constants as fsConstants, existsSync, readFileSync } from 'node:fs';
import { createPrivateKey } from 'node:crypto';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { planShards } from '../fleet/arrival-schedule.js';
import { LoopMonitor } from '../fleet/loop-monitor.js';
import { readOnboardingFiles } from '../fleet/shard-runner.js';
import type {
  FleetDeviceInfo,
  MainToWorker,
  ShardResult,
  ShardTask,
  TargetInfo,
  WorkerToMain,
} from '../fleet/worker-protocol.js';
import { FleetIdentityStore } from '../identity/fleet-identity-store.js';
import { loadScenario, totalDevices, type ScenarioOverrides } from '../scenario/load-scenario.js';
import { ScenarioError } from '../scenario/scenario-error.js';
import type { Scenario, TargetSpec } from '../scenario/scenario-types.js';
import { DEFAULT_GRACEFUL_STOP_MS } from '../scenario/scenario-defaults.js';
import { FleetAggregate } from './aggregate.js';
import { buildMeasuredRun } from './build-summary.js';
import { devicesByApi } from './api-breakdown.js';
import { applyTimelineAction, isControllerSide, pushFleet, type ControllerAdminApi } from './controller-admin.js';
import { startMetricsServer, type MetricsServer } from './metrics-server.js';
import { ProgressView } from './progress-view.js';
import { renderReport } from './report-table.js';
import { writeSummaryJson, type DrainSummary, type RunSummary } from './summary-json.js';
import { evaluateThresholds, noThresholdFailed } from './thresholds.js';
import { fleetWorkerFile } from './worker-file.js';
import { AttestationMonitor, describeTpmPreparation } from './attestation-outcomes.js';
import { defaultStartLps, LpsSites, type StartEmbeddedLps } from './lps-sites.js';
import { buildLpsSummary, LpsAggregate } from './lps-summary.js';
import { registerLpsMetrics } from './lps-metrics.js';
import type { TpmProvisionStats } from '../fleet/tpm-provisioning.js';

export interface RunScenarioOptions {
  scenarioFile: string;
  /** Scale the fleet to this many devices. */
  devices?: number;
  durationMs?: number;
  /** `--arrival-over`: devices come online spread evenly over this window, ms. */
  arrivalOverMs?: number;
  /** --graceful-stop: how long devices may deliver their queues after the duration, ms. */
  gracefulStopMs?: number;
  seed?: number;
  /** Worker threads; default one per core (never more than devices). */
  workers?: number;
  /** Serve Prometheus metrics on 127.0.0.1:PORT/metrics during the run. */
  metricsPort?: number;
  summaryJson?: string;
  /** --record: every exchange goes to DIR/worker-<n>/. */
  recordDir?: string;
  /** Fleet state (identities, controller PKI); default .evesim-state in the current directory. */
  stateDir?: string;
  /** A real controller instead of the scenario's target. */
  controller?: { url: string; rootCaFile: string; onboardCertFile: string; onboardKeyFile: string; insecure: boolean };
  /** No live progress line. */
  quiet?: boolean;
  /** Starts the embedded controller (the CLI passes startControllerInThread); see defaultEmbeddedController. */
  startEmbeddedController?: StartEmbeddedController;
  /** Starts a site's embedded LPS (the CLI passes startLpsInThread); default: a lazy import of it. */
  startLps?: StartEmbeddedLps;
  /** Where the report and messages go (tests); default process.stdout / process.stderr. */
  out?: (text: string) => void;
  err?: (text: string) => void;
  /** The compiled worker file (tests); default: found next to the compiled runner (worker-file.ts). */
  workerFile?: string;
}

export interface RunScenarioResult {
  exitCode: number;
  /** Absent when the run never started (bad input). */
  summary?: RunSummary;
}

/** What the runner needs of a started embedded controller (startControllerInThread's result fits). */
export interface EmbeddedController {
  url: string;
  adminUrl: string;
  /** Controller API v1 (mutual TLS) base URL, when the controller serves it. */
  v1Url?: string;
  rootCaPem: string;
  admin: ControllerAdminApi;
  stop(): Promise<void>;
}

/** The subset of the controller's options the runner sets. */
export interface EmbeddedControllerOptions {
  stateDir: string;
  onboardingCaPems: string[];
}

export type StartEmbeddedController = (opts: EmbeddedControllerOptions) => Promise<EmbeddedController>;

/** How long workers get after the planned end to stop their devices and report. */
const STOP_GRACE_MS = 30_000;

/** Bad input: printed as is, exit code 2. */
class InputError extends Error {}

export async function runScenario(opts: RunScenarioOptions): Promise<RunScenarioResult> {
  const out = opts.out ?? ((t: string) => void process.stdout.write(t));
  const err = opts.err ?? ((t: string) => void process.stderr.write(t));
  try {
    return await runChecked(opts, out, err);
  } catch (e) {
    if (e instanceof ScenarioError || e instanceof InputError) {
      err(`evesim: ${e.message}\n`);
      return { exitCode: 2 };
    }
    throw e;
  }
}

async function runChecked(
  opts: RunScenarioOptions,
  out: (t: string) => void,
  err: (t: string) => void,
): Promise<RunScenarioResult> {
  // ---- inputs ----
  const overrides: ScenarioOverrides = {};
  if (opts.devices !== undefined) overrides.devices = opts.devices;
  if (opts.durationMs !== undefined) overrides.durationMs = opts.durationMs;
  if (opts.arrivalOverMs !== undefined) overrides.arrivalOverMs = opts.arrivalOverMs;
  if (opts.gracefulStopMs !== undefined) overrides.gracefulStopMs = opts.gracefulStopMs;
  if (opts.seed !== undefined) overrides.seed = opts.seed;
  if (opts.controller) {
    const c = opts.controller;
    overrides.target = {
      kind: 'external',
      url: c.url,
      rootCaFile: resolve(c.rootCaFile),
      onboardCertFile: resolve(c.onboardCertFile),
      onboardKeyFile: resolve(c.onboardKeyFile),
      insecureSkipVerify: c.insecure,
    };
  }
  const scenario = loadScenario(opts.scenarioFile, overrides);
  for (const w of scenario.warnings ?? []) err(`evesim: warning: ${w}\n`);
  const total = totalDevices(scenario);
  const workers = opts.workers ?? os.availableParallelism();
  if (!Number.isInteger(workers) || workers < 1) throw new InputError(`--workers: must be a whole number ≥ 1 (got ${opts.workers})`);
  if (opts.summaryJson) checkWritableFile(opts.summaryJson, '--summary-json');
  if (opts.metricsPort !== undefined && (!Number.isInteger(opts.metricsPort) || opts.metricsPort < 0 || opts.metricsPort > 65535)) {
    throw new InputError(`--metrics-port: ${opts.metricsPort} is not a TCP port (0..65535)`);
  }
  const workerFile = fleetWorkerFile(opts.workerFile);
  const stateDir = resolve(opts.stateDir ?? '.evesim-state');
  const external = scenario.target.kind === 'external' ? readExternalTarget(scenario.target) : undefined;
  if (scenario.target.kind === 'external' && scenario.target.insecureSkipVerify) {
    err('evesim: WARNING: TLS verification of the controller is OFF (--insecure-skip-verify); anyone on the path can impersonate it\n');
  }
  const skippedActions = external ? scenario.timeline.filter(isControllerSide) : [];
  for (const a of skippedActions) {
    err(`evesim: warning: timeline action "${a.action}" at ${a.atMs} ms needs the embedded controller's admin API; skipped with a real controller\n`);
  }

  // ---- fleet state and target ----
  let store: FleetIdentityStore;
  try {
    // Creates the fleet CA once, before workers race to open the same directory.
    store = FleetIdentityStore.open({ stateDir, seed: scenario.seed });
  } catch (e) {
    throw new InputError(`state directory ${stateDir}: ${(e as Error).message}`);
  }
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async () => {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch (e) {
        err(`evesim: while shutting down: ${(e as Error).message}\n`);
      }
    }
    cleanups.length = 0;
  };

  try {
    let target: TargetInfo;
    let admin: ControllerAdminApi | undefined;
    if (external) {
      target = external;
    } else {
      const start = opts.startEmbeddedController ?? defaultEmbeddedController;
      const controller = await start({ stateDir: join(stateDir, 'controller'), onboardingCaPems: [store.fleetCaCertPem] });
      cleanups.push(() => controller.stop());
      target = { url: controller.url, ...(controller.v1Url ? { v1Url: controller.v1Url } : {}), rootCaPem: controller.rootCaPem, insecure: false };
      admin = controller.admin;
    }

    // Local profile servers, one per site: only the embedded controller points devices at them.
    let sites: LpsSites | undefined;
    if (scenario.sites !== undefined && admin) {
      sites = await LpsSites.start(scenario.sites, stateDir, opts.startLps ?? defaultStartLps);
      const started = sites;
      cleanups.push(() => started.stop());
      if (!opts.quiet) err(`evesim: local profile servers: ${started.describe().map((x) => `${x.name} on ${x.address}`).join(', ')}\n`);
    } else if (scenario.sites !== undefined) {
      err('evesim: warning: sites need the embedded controller to point devices at their LPS; no LPS is started with a real controller\n');
    }

    const aggregate = new FleetAggregate();
    const lpsFigures = new LpsAggregate(aggregate);
    let metrics: MetricsServer | undefined;
    if (opts.metricsPort !== undefined) {
      try {
        metrics = await startMetricsServer(aggregate, opts.metricsPort);
      } catch (e) {
        throw new InputError((e as Error).message);
      }
      cleanups.push(() => metrics!.close());
      err(`evesim: metrics on ${metrics.url}\n`);
      registerLpsMetrics(metrics.registry, lpsFigures, sites);
    }
    const progress = opts.quiet ? undefined : new ProgressView({ aggregate, totalDevices: total, durationMs: scenario.durationMs });
    if (progress) cleanups.push(() => progress.stop());

    // ---- workers ----
    const shards = planShards(total, workers);
    if (opts.recordDir) {
      // Checked here as well as by each worker, so a used directory stops the run before any worker writes.
      for (let w = 0; w < shards.length; w++) {
        const used = join(resolve(opts.recordDir), `worker-${w}`, 'index.ndjson');
        if (existsSync(used)) throw new InputError(`--record ${opts.recordDir}: ${used} is from an earlier recording; choose an empty directory`);
      }
    }
    const pool = new Piscina({
      filename: workerFile,
      minThreads: shards.length,
      maxThreads: shards.length,
      idleTimeout: 1000,
      // The task runs for the whole scenario; the worker's own event loop must keep turning.
      atomics: 'disabled',
      // With an explicit heap limit a worker that runs out of memory is terminated (and reported)
      // instead of taking the whole process down; 3/4 of the machine's memory shared by workers.
      resourceLimits: { maxOldGenerationSizeMb: workerHeapLimitMb(shards.length) },
    });
    cleanups.push(() => pool.destroy());
    const ports: MessagePort[] = [];
    cleanups.push(() => ports.forEach((p) => p.close()));
    const prepared = new Map<number, number>();
    const ready = new Map<number, FleetDeviceInfo[]>();
    let readyResolve: () => void = () => {};
    const allReady = new Promise<void>((r) => (readyResolve = r));
    let identitiesCreated = 0;
    const tpmPrepared: TpmProvisionStats[] = [];

    const tasks = shards.map((shard, workerId) => {
      const { port1, port2 } = new MessageChannel();
      ports.push(port1);
      port1.on('message', (m: WorkerToMain) => {
        if (m.type === 'delta') aggregate.merge(m.delta);
        else if (m.type === 'progress') {
          prepared.set(m.workerId, m.prepared);
          const done = [...prepared.values()].reduce((a, b) => a + b, 0);
          progress?.setNote(`preparing identities ${done}/${total}`);
        } else if (m.type === 'ready') {
          ready.set(m.workerId, m.devices);
          identitiesCreated += m.identities.created;
          if (m.tpm) tpmPrepared.push(m.tpm);
          if (ready.size === shards.length) readyResolve();
        }
      });
      const task: ShardTask = {
        workerId,
        scenario,
        shard,
        target,
        stateDir,
        ...(opts.recordDir ? { recordDir: resolve(opts.recordDir) } : {}),
      };
      return pool.run({ task, port: port2 }, { transferList: [port2] }) as Promise<ShardResult>;
    });

    if (!opts.quiet) err(`evesim: preparing ${total} devices on ${shards.length} worker${shards.length === 1 ? '' : 's'}\n`);
    // Identities first: a worker that fails here (bad state directory, bad onboarding key) ends the run.
    // (The others wait for 'go' and never settle on their own: watch for the first rejection.)
    const firstFailure = new Promise<{ failed: unknown }>((res) => tasks.forEach((t) => t.catch((e: unknown) => res({ failed: e }))));
    const first = await Promise.race([allReady.then(() => undefined), firstFailure]);
    if (first) {
      broadcast(ports, { type: 'stop' });
      throw new InputError(`preparing the fleet failed: ${reason(first.failed)}`);
    }
    if (identitiesCreated > 0) err(`evesim: created ${identitiesCreated} device identities in ${stateDir}\n`);
    const tpmLine = describeTpmPreparation(tpmPrepared);
    if (tpmLine) err(`evesim: ${tpmLine}\n`);
    const devices = [...ready.values()].flat();
    if (admin) await pushFleet(admin, sites ? sites.groups(scenario.groups) : scenario.groups, devices, scenario.attestation);
    // Attestation outcomes come from the embedded controller's stats: polled, exported, summarised.
    const attestMonitor = admin?.stats ? new AttestationMonitor(() => admin!.stats!(), (m) => err(`evesim: warning: ${m}\n`)) : undefined;
    if (attestMonitor) {
      if (metrics) attestMonitor.register(metrics.registry);
      attestMonitor.start();
      cleanups.push(() => attestMonitor.stop());
    }

    // ---- run ----
    const mainLoop = new LoopMonitor();
    const cpuStart = process.cpuUsage();
    const startAtMs = Date.now() + 250;
    broadcast(ports, { type: 'go', startAtMs });
    progress?.setNote(undefined);
    progress?.start(startAtMs);
    const timelineTimers = scheduleControllerTimeline(scenario, startAtMs, admin, err);
    cleanups.push(() => timelineTimers.forEach(clearTimeout));
    if (sites) {
      const lpsTimers = sites.scheduleTimeline(scenario, startAtMs, admin, err);
      cleanups.push(() => lpsTimers.forEach(clearTimeout));
    }
    const onSigint = () => {
      err('\nevesim: interrupted: stopping devices and reporting what was measured\n');
      broadcast(ports, { type: 'stop' });
    };
    process.once('SIGINT', onSigint);
    cleanups.push(() => void process.off('SIGINT', onSigint));
    const mainLoopSampler = setInterval(() => mainLoop.sample(), 1000);
    cleanups.push(() => clearInterval(mainLoopSampler));

    // After the duration the workers drain (devices deliver their queues, up to gracefulStop).
    const gracefulStopMs = scenario.gracefulStopMs ?? DEFAULT_GRACEFUL_STOP_MS;
    if (progress && gracefulStopMs > 0) {
      const note = setTimeout(
        () => progress.setNote(`draining: devices deliver what they have queued (up to ${formatSeconds(gracefulStopMs)})`),
        Math.max(0, startAtMs + scenario.durationMs - Date.now()),
      );
      cleanups.push(() => clearTimeout(note));
    }
    // A worker stuck in device code past the end is given up on (pool.destroy() ends its thread in
    // cleanup); its figures since its last delta are lost, and the run fails.
    const results = await settleBy(tasks, startAtMs + scenario.durationMs + gracefulStopMs + STOP_GRACE_MS);
    // The measured window: the planned end, or earlier when stopped (Ctrl-C); stopping takes a
    // moment after it, which is not part of the run.
    const endMs = Math.min(Date.now(), startAtMs + scenario.durationMs);
    const cpu = process.cpuUsage(cpuStart);
    progress?.stop();

    // ---- figures ----
    const undelivered: Record<string, number> = {};
    const workerHealth: RunSummary['generator']['workers'] = [];
    let workerFailed = false;
    results.forEach((r, workerId) => {
      if (r.status === 'rejected') {
        workerFailed = true;
        err(`evesim: worker ${workerId} failed: ${reason(r.reason)}\n`);
        // Its health from the deltas it sent (worst 1 s interval), rather than nothing.
        const seen = aggregate.workers.get(workerId);
        if (seen) {
          workerHealth.push({ worker: workerId, eventLoopLagP99Ms: round1(seen.worstLoopP99Ms) });
          for (const [k, v] of Object.entries(seen.undelivered)) undelivered[k] = (undelivered[k] ?? 0) + v;
        }
        return;
      }
      const res = r.value;
      aggregate.merge(res.finalDelta);
      for (const [k, v] of Object.entries(res.undelivered)) undelivered[k] = (undelivered[k] ?? 0) + v;
      workerHealth.push({
        worker: res.workerId,
        eventLoopLagP99Ms: round1(res.loop.p99Ms),
        heapPeakMiB: round1(res.memory.heapUsedPeak / 2 ** 20),
        ...(res.memory.settledBytesPerDevice !== undefined ? { settledKiBPerDevice: round1(res.memory.settledBytesPerDevice / 1024) } : {}),
        ...(res.memory.atSample
          ? {
              atMemorySample: {
                inFlight: res.memory.atSample.inFlight,
                queuedReliable: res.memory.atSample.backlog.info + res.memory.atSample.backlog.logs + res.memory.atSample.backlog.flowlog,
              },
            }
          : {}),
      });
      if (res.record) {
        err(`evesim: recorded ${res.record.exchanges} exchanges in ${res.record.dir}${res.record.dropped ? ` (${res.record.dropped} dropped)` : ''}\n`);
      }
    });
    const ok = results.filter((r): r is PromiseFulfilledResult<ShardResult> => r.status === 'fulfilled').map((r) => r.value);
    const drain = drainSummary(ok, gracefulStopMs, workerFailed);
    if (ok.length > 0) {
      const heap = ok.reduce((a, r) => a + r.memory.heapUsedPeak, 0);
      const inFlight = ok.reduce((a, r) => a + r.inFlightAtEnd, 0);
      const busy = ok.map((r) => `w${r.workerId} ${(r.loop.meanUtilisation * 100).toFixed(0)}%`).join(', ');
      err(
        `evesim: workers: heap peak ${(heap / 2 ** 20).toFixed(1)} MiB (garbage included; bench/steady-state.js measures live memory per device), ` +
          `busy ${busy}, ${inFlight} requests in flight at the end (not counted)\n`,
      );
    }
    const wallMs = Math.max(1, endMs - startAtMs);
    const cores = os.availableParallelism();
    const measured = buildMeasuredRun({
      scenario: { name: scenario.name, file: scenario.file, seed: scenario.seed },
      target: external ? external.url : 'embedded',
      startedAtMs: startAtMs,
      durationMs: wallMs,
      totalDevices: total,
      devicesByApi: devicesByApi(scenario.groups),
      aggregate,
      undelivered,
      ...(drain ? { drain } : {}),
      generator: {
        workers: workerHealth,
        mainEventLoopLagP99Ms: round1(mainLoop.summary().p99Ms),
        cpuPercent: round1(((cpu.user + cpu.system) / 1000 / (wallMs * cores)) * 100),
      },
    });
    mainLoop.stop();
    const attestation = await attestMonitor?.final();
    if (attestation) measured.attestation = attestation;
    if (sites || Object.keys(measured.endpoints).some((k) => k.startsWith('lps.'))) {
      let commands: Awaited<ReturnType<LpsSites['commands']>> = [];
      try {
        commands = (await sites?.commands()) ?? [];
      } catch (e) {
        err(`evesim: warning: could not read the LPS command records: ${reason(e)}\n`);
      }
      measured.lps = buildLpsSummary(sites?.describe() ?? [], commands, lpsFigures.totals());
    }
    const thresholds = evaluateThresholds(scenario.thresholds, measured);
    const exitCode = workerFailed || !noThresholdFailed(thresholds) ? 1 : 0;
    const summary: RunSummary = { ...measured, thresholds, exitCode };
    out(renderReport(summary));
    if (opts.summaryJson) writeSummaryJson(opts.summaryJson, summary);
    return { exitCode, summary };
  } finally {
    await cleanup();
  }
}

/**
 * The embedded controller when the caller passes none. The controller sits above the runner in
 * the layer order, so the CLI should inject startControllerInThread; this lazy import keeps
 * runScenario usable on its own (tests, scripts) without a static upward dependency.
 */
async function defaultEmbeddedController(opts: EmbeddedControllerOptions): Promise<EmbeddedController> {
  const modulePath = '../servers/controller/controller-thread.js';
  const mod = (await import(modulePath)) as { startControllerInThread: StartEmbeddedController };
  return mod.startControllerInThread(opts);
}

function scheduleControllerTimeline(
  scenario: Scenario,
  startAtMs: number,
  admin: ControllerAdminApi | undefined,
  err: (t: string) => void,
): NodeJS.Timeout[] {
  if (!admin) return [];
  const groups = scenario.groups.map((g) => g.name);
  // Actions run one after another in timeline order, even when an admin call is slow.
  let chain = Promise.resolve();
  return scenario.timeline.filter(isControllerSide).map((action) =>
    setTimeout(
      () => {
        chain = chain
          .then(() => applyTimelineAction(admin, action, groups))
          .catch((e: unknown) => err(`evesim: timeline action "${action.action}" at ${action.atMs} ms failed: ${reason(e)}\n`));
      },
      Math.max(0, startAtMs + action.atMs - Date.now()),
    ),
  );
}

function readExternalTarget(t: Extract<TargetSpec, { kind: 'external' }>): TargetInfo {
  let rootCaPem: string;
  try {
    rootCaPem = readFileSync(t.rootCaFile, 'utf8');
  } catch (e) {
    throw new InputError(`controller root CA ${t.rootCaFile}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (!rootCaPem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new InputError(`controller root CA ${t.rootCaFile}: not a PEM certificate (no "BEGIN CERTIFICATE" line)`);
  }
  let onboard: { certPem: string; keyPem: string };
  try {
    onboard = readOnboardingFiles(t.onboardCertFile, t.onboardKeyFile);
  } catch (e) {
    throw new InputError((e as Error).message);
  }
  if (!onboard.certPem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new InputError(`onboarding certificate ${t.onboardCertFile}: not a PEM certificate`);
  }
  try {
    createPrivateKey(onboard.keyPem);
  } catch (e) {
    // Never echo the key material: only the file name and the parser's verdict.
    throw new InputError(`onboarding key ${t.onboardKeyFile}: not a usable private key (${(e as Error).message.split('\n')[0]})`);
  }
  return { url: t.url, ...(t.v1Url ? { v1Url: t.v1Url } : {}), rootCaPem, insecure: t.insecureSkipVerify, onboard };
}

function checkWritableFile(file: string, what: string): void {
  const dir = dirname(resolve(file));
  try {
    accessSync(dir, fsConstants.W_OK);
  } catch {
    throw new InputError(`${what} ${file}: directory ${dir} does not exist or is not writable`);
  }
}

/** Settles every task, or marks those still running at `deadline` (epoch ms) as failed. */
async function settleBy<T>(tasks: Promise<T>[], deadline: number): Promise<PromiseSettledResult<T>[]> {
  const states: (PromiseSettledResult<T> | undefined)[] = tasks.map(() => undefined);
  tasks.forEach((t, i) =>
    t.then(
      (value) => (states[i] = { status: 'fulfilled', value }),
      (reason: unknown) => (states[i] = { status: 'rejected', reason }),
    ),
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(tasks),
    new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, deadline - Date.now())))),
  ]);
  clearTimeout(timer);
  return states.map(
    (s) =>
      s ?? {
        status: 'rejected',
        reason: new Error(`did not finish within ${STOP_GRACE_MS / 1000} s after the end of the run and its drain (stuck in device code?); its last second of figures is lost`),
      },
  );
}

function broadcast(ports: MessagePort[], msg: MainToWorker): void {
  for (const p of ports) {
    try {
      p.postMessage(msg);
    } catch {
      // A closed port belongs to a worker that already ended.
    }
  }
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function workerHeapLimitMb(workers: number): number {
  const share = Math.floor((os.totalmem() / 2 ** 20) * 0.75 / workers);
  return Math.min(16_384, Math.max(512, share));
}

/** The drain as the summary reports it: the slowest worker's time; absent when no worker drained. */
function drainSummary(results: ShardResult[], gracefulStopMs: number, workerFailed: boolean): DrainSummary | undefined {
  const drained = results.filter((r) => r.drain !== undefined);
  if (drained.length === 0) return undefined;
  const leftAtStop: Record<string, number> = {};
  for (const r of drained) for (const [k, v] of Object.entries(r.drain!.leftAtStop)) leftAtStop[k] = (leftAtStop[k] ?? 0) + v;
  return {
    gracefulStopMs,
    durationMs: Math.round(Math.max(...drained.map((r) => r.drain!.ms))),
    complete: !workerFailed && drained.length === results.length && drained.every((r) => r.drain!.complete),
    leftAtStop,
  };
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

function round1(v: number): number {
  return Math.round(v * 10) / 10;
}
