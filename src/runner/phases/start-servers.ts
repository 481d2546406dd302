// Phase 2: what the devices talk to and what watches them. The embedded controller in its thread
// (or the real controller prepare-fleet checked), one local profile server per site, the
// Prometheus endpoint and the live progress line. Each adds its own cleanup.

import { join } from 'node:path';
import type { TargetInfo } from '../../fleet/worker-protocol.js';
import type { ControllerAdminApi } from '../controller-admin.js';
import { startMetricsServer, type MetricsServer } from '../metrics-server.js';
import { ProgressView } from '../progress-view.js';
import type { EmbeddedController, EmbeddedControllerOptions, StartEmbeddedController } from '../run-scenario.js';
import { defaultStartLps, LpsSites } from '../lps/lps-sites.js';
import { LpsAggregate } from '../lps/lps-summary.js';
import { registerLpsMetrics } from '../lps/lps-metrics.js';
import { InputError } from './input-error.js';
import type { RunContext } from './run-context.js';

export interface Servers {
  target: TargetInfo;
  /** The embedded controller's admin API; absent with a real controller. */
  admin?: ControllerAdminApi;
  sites?: LpsSites;
  lpsFigures: LpsAggregate;
  metrics?: MetricsServer;
  progress?: ProgressView;
}

export async function startServers(ctx: RunContext): Promise<Servers> {
  const { opts, err, scenario, cleanups } = ctx;
  let target: TargetInfo;
  let admin: ControllerAdminApi | undefined;
  if (ctx.external) {
    target = ctx.external;
  } else {
    const start = opts.startEmbeddedController ?? defaultEmbeddedController;
    const controller = await start({ stateDir: join(ctx.stateDir, 'controller'), onboardingCaPems: [ctx.store.fleetCaCertPem] });
    cleanups.add(() => controller.stop());
    target = { url: controller.url, ...(controller.v1Url ? { v1Url: controller.v1Url } : {}), rootCaPem: controller.rootCaPem, insecure: false };
    admin = controller.admin;
  }

  // Local profile servers, one per site: only the embedded controller points devices at them.
  let sites: LpsSites | undefined;
  if (scenario.sites !== undefined && admin) {
    sites = await LpsSites.start(scenario.sites, ctx.stateDir, opts.startLps ?? defaultStartLps);
    const started = sites;
    cleanups.add(() => started.stop());
    if (!opts.quiet) err(`evesim: local profile servers: ${started.describe().map((x) => `${x.name} on ${x.address}`).join(', ')}\n`);
  } else if (scenario.sites !== undefined) {
    err('evesim: warning: sites need the embedded controller to point devices at their LPS; no LPS is started with a real controller\n');
  }

  const lpsFigures = new LpsAggregate(ctx.aggregate);
  let metrics: MetricsServer | undefined;
  if (opts.metricsPort !== undefined) {
    try {
      metrics = await startMetricsServer(ctx.aggregate, opts.metricsPort);
    } catch (e) {
      throw new InputError((e as Error).message);
    }
    const started = metrics;
    cleanups.add(() => started.close());
    err(`evesim: metrics on ${metrics.url}\n`);
    registerLpsMetrics(metrics.registry, lpsFigures, sites);
  }
  const progress = opts.quiet ? undefined : new ProgressView({ aggregate: ctx.aggregate, totalDevices: ctx.totalDevices, durationMs: scenario.durationMs });
  if (progress) cleanups.add(() => progress.stop());
  return {
    target,
    ...(admin ? { admin } : {}),
    ...(sites ? { sites } : {}),
    lpsFigures,
    ...(metrics ? { metrics } : {}),
    ...(progress ? { progress } : {}),
  };
}

/**
 * The embedded controller when the caller passes none. The controller sits above the runner in
 * the layer order, so the CLI should inject startControllerInThread; this lazy import keeps
 * runScenario usable on its own (tests, scripts) without a static upward dependency.
 */
async function defaultEmbeddedController(opts: EmbeddedControllerOptions): Promise<EmbeddedController> {
  const modulePath = '../../servers/controller/controller-thread.js';
  const mod = (await import(modulePath)) as { startControllerInThread: StartEmbeddedController };
  return mod.startControllerInThread(opts);
}
