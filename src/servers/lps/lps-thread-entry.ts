// Entry of an LPS's own thread: starts the servers with the options it was given, reports their
// addresses, and stops when told. The logic is in lps-server.ts.

import { parentPort, workerData } from 'node:worker_threads';
import { createLpsServer } from './lps-server.js';
import type { LpsServerOptions } from './lps-options.js';
import type { FromLpsThread, ToLpsThread } from './lps-thread-messages.js';

const port = parentPort;
if (!port) throw new Error('lps-thread-entry must run in a worker thread');

function post(m: FromLpsThread): void {
  port!.postMessage(m);
}

createLpsServer(workerData as LpsServerOptions).then(
  (server) => {
    post({ type: 'ready', url: server.url, address: server.address, adminUrl: server.adminUrl, token: server.token });
    port.on('message', (m: ToLpsThread) => {
      if (m.type !== 'stop') return;
      server.stop().then(
        () => {
          post({ type: 'stopped' });
          port.close();
        },
        (e: unknown) => post({ type: 'error', message: `stop failed: ${(e as Error).message}` }),
      );
    });
  },
  (e: unknown) => post({ type: 'error', message: (e as Error).message }),
);
