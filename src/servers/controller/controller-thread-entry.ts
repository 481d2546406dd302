// Entry of the controller's own thread: starts the servers with the options it was given, reports
// their addresses, and stops when told. Thin on purpose; the logic is in controller-server.ts.

import { parentPort, workerData } from 'node:worker_threads';
import { createControllerServer } from './controller-server.js';
import type { ControllerOptions } from './controller-options.js';
import type { FromControllerThread, ToControllerThread } from './controller-thread-messages.js';

const port = parentPort;
if (!port) throw new Error('controller-thread-entry must run in a worker thread');

function post(m: FromControllerThread): void {
  port!.postMessage(m);
}

createControllerServer(workerData as ControllerOptions).then(
  (server) => {
    post({
      type: 'ready',
      url: server.url,
      adminUrl: server.adminUrl,
      ...(server.v1Url ? { v1Url: server.v1Url } : {}),
      rootCaPem: server.rootCaPem,
      rootCaPath: server.rootCaPath,
    });
    port.on('message', (m: ToControllerThread) => {
      if (m.type === 'stop') {
        server.stop().then(
          () => {
            post({ type: 'stopped' });
            port.close();
          },
          (e: unknown) => post({ type: 'error', message: `stop failed: ${(e as Error).message}` }),
        );
      }
    });
  },
  (e: unknown) => post({ type: 'error', message: (e as Error).message }),
);
