// Phase 3: the fleet workers. Splits this process's devices (its shard of the fleet, fleet-plan.ts)
// over its workers (one piscina worker each, prepare-fleet planned them), lets every
// worker load or create its identities, stops the run when one fails there, then pushes the fleet
// map to the embedded controller (groups as the capabilities amend them) and tells the
// capabilities. The workers then wait for 'go' (run-timeline.ts).

import { setWorkerHeapFlags } from '../../fleet/worker-heap-flags.js';
import { workerHeapLimitMb } from '../../fleet/worker-memory-budget.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { ShardSpec } from '../../fleet/arrival-schedule.js';
import { describeShard } from '../../fleet/fleet-shard.js';
import type { MainToWorker, ReadyMessage, ShardResult, ShardTask, WorkerToMain } from '../../fleet/worker-protocol.js';
import { RUN_CAPABILITIES } from '../capabilities.js';
import { pushFleet } from '../controller-admin.js';
import type { ControllerFleet } from '../run-capability.js';
import { InputError } from './input-error.js';
import type { Servers, Workers } from './phase-results.js';
import { reason, type RunContext } from './run-context.js';

export async function startWorkers(ctx: RunContext, servers: Servers): Promise<Workers> {
  const { opts, err, scenario, totalDevices: total, plan } = ctx;
  const { admin } = servers;
  const shards = plan.workers;
  if (opts.recordDir) {
    // Checked here as well as by each worker, so a used directory stops the run before any worker writes.
    for (let w = 0; w < shards.length; w++) {
      const used = join(resolve(opts.recordDir), `worker-${w}`, 'index.ndjson');
      if (existsSync(used)) throw new InputError(`--record ${opts.recordDir}: ${used} is from an earlier recording; choose an empty directory`);
    }
  }
  const { tasks, ports, allReady } = launchShards(ctx, servers, shards);

  const ofFleet = plan.shard.count > 1 ? ` (shard ${describeShard(plan.shard)} of a fleet of ${plan.fleetDevices})` : '';
  if (!opts.quiet) err(`evesim: preparing ${total} devices${ofFleet} on ${shards.length} worker${shards.length === 1 ? '' : 's'}\n`);
  // Identities first: a worker that fails here (bad state directory, bad onboarding key) ends the run.
  // (The others wait for 'go' and never settle on their own: watch for the first rejection.)
  const firstFailure = new Promise<{ failed: unknown }>((res) => tasks.forEach((t) => t.catch((e: unknown) => res({ failed: e }))));
  const first = await Promise.race([allReady, firstFailure]);
  if ('failed' in first) {
    broadcast(ports, { type: 'stop' });
    throw new InputError(`preparing the fleet failed: ${reason(first.failed)}`);
  }
  const identitiesCreated = first.reduce((n, m) => n + m.identities.created, 0);
  if (identitiesCreated > 0) err(`evesim: created ${identitiesCreated} device identities in ${ctx.stateDir}\n`);
  for (const c of RUN_CAPABILITIES) for (const line of c.preparedLines?.(first) ?? []) err(`evesim: ${line}\n`);
  // The controller is told this shard's devices only. The embedded controller belongs to this
  // process (the other shards run their own), so its fleet is replaced; a controller the shards
  // share (--controller-admin) gets them added to what the other shards pushed (PATCH /admin/fleet).
  // There shard 0, which applies the controller-side timeline, has the scenario's groups made again
  // from their spec: a controller that served an earlier run would otherwise keep that run's
  // timeline changes (its config items, say) and this run would not start from its scenario.
  if (admin) {
    const devices = first.flatMap((m) => m.devices);
    const fleet = servers.capabilities.reduce((f, c) => (c.fleet ? c.fleet(f) : f), { groups: scenario.groups } as ControllerFleet);
    try {
      const how = servers.adminShared !== true ? 'replace' : ctx.plan.shard.index === 0 ? 'merge-owning-groups' : 'merge';
      await pushFleet(admin, fleet.groups, devices, fleet.attestation, how);
    } catch (e) {
      if (!servers.adminShared) throw e;
      broadcast(ports, { type: 'stop' });
      throw new InputError(`--controller-admin: adding the shard's ${devices.length} devices to the controller's fleet failed: ${reason(e)}`);
    }
  }
  for (const c of servers.capabilities) c.fleetPushed?.();
  return { tasks, ports };
}

/**
 * One piscina worker per shard, each given its shard and a message channel: deltas go to the
 * aggregate, identity progress to the progress line; `allReady` gives every worker's 'ready'
 * message (in arrival order) once all have sent one.
 */
function launchShards(ctx: RunContext, servers: Servers, shards: readonly ShardSpec[]): Workers & { allReady: Promise<ReadyMessage[]> } {
  const { opts, scenario, cleanups, aggregate, totalDevices: total } = ctx;
  // No compacting pause of a few hundred ms in each worker after onboarding, and fewer
  // mark-compacts at steady state (worker-heap-flags.ts).
  setWorkerHeapFlags(ctx.heapGrowingPercent);
  const pool = new Piscina({
    filename: ctx.workerFile,
    minThreads: shards.length,
    maxThreads: shards.length,
    idleTimeout: 1000,
    // The task runs for the whole scenario; the worker's own event loop must keep turning.
    atomics: 'disabled',
    // With an explicit heap limit a worker that runs out of memory is terminated (and reported)
    // instead of taking the whole process down; 3/4 of the machine's memory shared by workers.
    resourceLimits: { maxOldGenerationSizeMb: workerHeapLimitMb(shards.length) },
  });
  cleanups.add(() => pool.destroy());
  const ports: MessagePort[] = [];
  cleanups.add(() => ports.forEach((p) => p.close()));
  const prepared = new Map<number, number>();
  const ready = new Map<number, ReadyMessage>();
  let readyResolve: (all: ReadyMessage[]) => void = () => {};
  const allReady = new Promise<ReadyMessage[]>((r) => (readyResolve = r));

  const tasks = shards.map((shard, workerId) => {
    const { port1, port2 } = new MessageChannel();
    ports.push(port1);
    port1.on('message', (m: WorkerToMain) => {
      if (m.type === 'delta') {
        aggregate.merge(m.delta);
        watchProgress(ctx);
      } else if (m.type === 'progress') {
        prepared.set(m.workerId, m.prepared);
        const done = [...prepared.values()].reduce((a, b) => a + b, 0);
        servers.progress?.setNote(`preparing identities ${done}/${total}`);
      } else if (m.type === 'ready') {
        ready.set(m.workerId, m);
        if (ready.size === shards.length) readyResolve([...ready.values()]);
      }
    });
    const task: ShardTask = {
      workerId,
      scenario,
      shard,
      target: servers.target,
      stateDir: ctx.stateDir,
      fleetId: ctx.fleetId,
      ...(opts.recordDir ? { recordDir: resolve(opts.recordDir) } : {}),
      ...(opts.maxInFlight !== undefined ? { maxInFlight: opts.maxInFlight } : {}),
      ...(opts.tickMs ? { tickMs: opts.tickMs } : {}),
      ...(opts.logMemoryBytes !== undefined ? { logMemoryBytes: opts.logMemoryBytes } : {}),
    };
    return pool.run({ task, port: port2 }, { transferList: [port2] }) as Promise<ShardResult>;
  });
  return { tasks, ports, allReady };
}

/** Hands the aggregate to the caller's onProgress; its mistakes must not end the run. */
function watchProgress(ctx: RunContext): void {
  try {
    ctx.opts.onProgress?.(ctx.aggregate);
  } catch (e) {
    ctx.err(`evesim: onProgress failed: ${reason(e)}\n`);
  }
}

/** Sends one message to every worker that still listens. */
export function broadcast(ports: readonly MessagePort[], msg: MainToWorker): void {
  for (const p of ports) {
    try {
      p.postMessage(msg);
    } catch {
      // A closed port belongs to a worker that already ended.
    }
  }
}

