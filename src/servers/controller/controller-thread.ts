// Runs the embedded controller in a worker thread of its own, so it never shares the simulator's
// event loop: its latency is its own and the devices' timers are not delayed by it.

import type { Worker } from 'node:worker_threads';
import { ControllerAdminClient } from './controller-admin-client.js';
import type { ControllerOptions } from './controller-options.js';
import type { FromControllerThread, ToControllerThread } from './controller-thread-messages.js';
import { startSourceAwareWorker } from './source-worker.js';

export interface ControllerThread {
  url: string;
  adminUrl: string;
  /** Controller API v1 (mutual TLS) base URL, when served. */
  v1Url?: string;
  rootCaPem: string;
  rootCaPath: string;
  admin: ControllerAdminClient;
  /** Requests answered so far and the controller thread's busy time so far (ms): cheap, no admin call. */
  load(): { requests: number; activeMs: number };
  /** Stops the servers and the thread. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;

export async function startControllerInThread(opts: ControllerOptions): Promise<ControllerThread> {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const requestTally = new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT);
  const tally = new BigInt64Array(requestTally);
  const worker = startSourceAwareWorker(new URL(`./controller-thread-entry${ext}`, import.meta.url), {
    workerData: { ...opts, requestTally },
    name: 'evesim-controller',
  });
  const ready = await new Promise<Extract<FromControllerThread, { type: 'ready' }>>((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`controller thread did not start within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    const onMessage = (m: FromControllerThread) => {
      done();
      if (m.type === 'ready') resolve(m);
      else {
        void worker.terminate();
        reject(new Error(`controller thread: ${m.type === 'error' ? m.message : 'stopped before it was ready'}`));
      }
    };
    const onError = (e: Error) => {
      done();
      reject(new Error(`controller thread failed: ${e.message}`));
    };
    const onExit = (code: number) => {
      done();
      reject(new Error(`controller thread exited with code ${code} before it was ready`));
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
  // Once running, a crash of the controller thread must not take the simulator down with an
  // unhandled 'error' event: say what happened; device requests will then fail as transport errors.
  worker.on('error', (e) => console.error(`evesim controller thread failed: ${e.stack ?? e.message}`));
  const admin = new ControllerAdminClient(ready.adminUrl);
  let stopping: Promise<void> | undefined;
  return {
    url: ready.url,
    adminUrl: ready.adminUrl,
    ...(ready.v1Url ? { v1Url: ready.v1Url } : {}),
    rootCaPem: ready.rootCaPem,
    rootCaPath: ready.rootCaPath,
    admin,
    load: () => ({ requests: Number(Atomics.load(tally, 0)), activeMs: worker.performance.eventLoopUtilization().active }),
    stop: () => (stopping ??= stopThread(worker, admin)),
  };
}

async function stopThread(worker: Worker, admin: ControllerAdminClient): Promise<void> {
  await admin.close();
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => void worker.terminate().then(() => resolve()), 10_000);
    worker.on('message', (m: FromControllerThread) => {
      if (m.type === 'stopped') {
        clearTimeout(timer);
        void worker.terminate().then(() => resolve());
      }
    });
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    worker.postMessage({ type: 'stop' } satisfies ToControllerThread);
  });
}
