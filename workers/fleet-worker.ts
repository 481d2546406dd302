// piscina entry of a fleet worker: one task per worker, lasting the whole run. All logic is in
// src/fleet/shard-runner.ts; this file only wires the MessagePort and the device class.

import type { MessagePort } from 'node:worker_threads';
import { VirtualDevice } from '../src/device/virtual-device.js';
import { ShardRunner } from '../src/fleet/shard-runner.js';
import type { MainToWorker, ShardResult, ShardTask, WorkerToMain } from '../src/fleet/worker-protocol.js';

export interface FleetWorkerInput {
  task: ShardTask;
  port: MessagePort;
}

export default async function runFleetWorker({ task, port }: FleetWorkerInput): Promise<ShardResult> {
  const post = (m: WorkerToMain) => port.postMessage(m);
  const runner = new ShardRunner(task, { createDevice: (opts) => new VirtualDevice(opts), post });
  let stopRequested = false;
  let go: (startAtMs: number | undefined) => void = () => {};
  const started = new Promise<number | undefined>((resolve) => (go = resolve));
  port.on('message', (m: MainToWorker) => {
    if (m.type === 'go') go(m.startAtMs);
    else if (m.type === 'stop') {
      stopRequested = true;
      runner.stop();
      go(undefined);
    }
    // Before 'go' too: run() then skips the run phase and drains at once.
    else if (m.type === 'end-run-phase') runner.endRunPhase();
  });
  // A stray rejection in device code must not take the worker (and its shard's figures) down.
  const onRejection = (reason: unknown) => runner.onStrayError(reason);
  process.on('unhandledRejection', onRejection);
  try {
    const prep = await runner.prepare((prepared, total) => post({ type: 'progress', workerId: task.workerId, prepared, total }));
    post({
      type: 'ready',
      workerId: task.workerId,
      devices: prep.devices,
      identities: { created: prep.created, loaded: prep.loaded },
      ...(prep.tpm ? { tpm: prep.tpm } : {}),
    });
    const startAtMs = await started;
    // Stopped before the start: run for no time, so the result still has its (empty) shape.
    return await runner.run(stopRequested || startAtMs === undefined ? Date.now() : startAtMs);
  } finally {
    process.off('unhandledRejection', onRejection);
    port.close();
  }
}
