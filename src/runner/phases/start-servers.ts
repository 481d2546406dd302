// Phase 2: what the devices talk to and what watches them. The embedded controller in its thread
// (or the real controller prepare-fleet checked), what each capability needs (capabilities.ts:
// one local profile server per site, the attestation monitor), the Prometheus endpoint with every
// capability's metrics, and the live progress line. Each adds its own cleanup.

import { join } from 'node:path';
import type { TargetInfo } from '../../fleet/worker-protocol.js';
import type { ControllerAdminApi } from '../controller-admin-api.js';
import { startMetricsServer, type MetricsServer } from '../metrics-server.js';
import { impliedEndpoints } from '../prometheus/implied-endpoints.js';
import { ProgressView } from '../progress-view.js';
import { RUN_CAPABILITIES } from '../capabilities.js';
import type { RunningCapability } from '../run-capability.js';
import type { EmbeddedController, EmbeddedControllerOptions, StartEmbeddedController } from '../run-options.js';
import { InputError } from './input-error.js';
import type { Servers } from './phase-results.js';
import type { RunContext } from './run-context.js';

export async function startServers(ctx: RunContext): Promise<Servers> {
  const { opts, err, scenario, cleanups } = ctx;
  let target: TargetInfo;
  let admin: ControllerAdminApi | undefined;
  let controllerLoad: Servers['controllerLoad'];
  let adminShared = false;
  if (ctx.external) {
    target = ctx.external;
    admin = opts.controllerAdmin;
    adminShared = admin !== undefined;
  } else {
    const start = opts.startEmbeddedController ?? defaultEmbeddedController;
    const controller = await start({ stateDir: join(ctx.stateDir, 'controller'), onboardingCaPems: [ctx.store.fleetCaCertPem] });
    cleanups.add(() => controller.stop());
    target = { url: controller.url, ...(controller.v1Url ? { v1Url: controller.v1Url } : {}), rootCaPem: controller.rootCaPem, insecure: false };
    admin = controller.admin;
    if (controller.load) controllerLoad = () => controller.load!();
  }

  const capabilities: RunningCapability[] = [];
  for (const c of RUN_CAPABILITIES) {
    // A shared controller's figures (attestation outcomes, devices) are every shard's: the
    // capabilities see it as they see any real controller, without its admin API.
    const running = await c.start?.(ctx, adminShared ? undefined : admin);
    if (running) capabilities.push(running);
  }

  let metrics: MetricsServer | undefined;
  if (opts.metricsPort !== undefined) {
    try {
      metrics = await startMetricsServer(ctx.aggregate, opts.metricsPort, opts.metricsHost, {
        scenario: scenario.name,
        seed: scenario.seed,
        fleetId: ctx.fleetId,
        shard: `${ctx.plan.shard.index}/${ctx.plan.shard.count}`,
        endpoints: impliedEndpoints(scenario.groups),
      });
    } catch (e) {
      throw new InputError((e as Error).message);
    }
    const started = metrics;
    cleanups.add(() => started.close());
    err(`evesim: metrics on ${metrics.url}\n`);
    for (const c of capabilities) c.registerMetrics?.(metrics.registry);
  }
  const progress = opts.quiet ? undefined : new ProgressView({ aggregate: ctx.aggregate, totalDevices: ctx.totalDevices, durationMs: scenario.durationMs });
  if (progress) cleanups.add(() => progress.stop());
  return {
    target,
    ...(admin ? { admin } : {}),
    ...(controllerLoad ? { controllerLoad } : {}),
    ...(adminShared ? { adminShared: true as const } : {}),
    capabilities,
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
