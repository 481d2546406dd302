// What the entry of an embedded server's own thread does (controller, LPS): start the server with
// the options the thread was given, post 'ready' with its addresses, stop when told and post
// 'stopped', or post 'error' with the reason. Each entry file only names its server.

import { parentPort, workerData } from 'node:worker_threads';

type ReadyMessage = { type: 'ready' } & Record<string, unknown>;

export function serveFromThisThread<S extends { stop(): Promise<void> }>(
  entry: string,
  start: (options: never) => Promise<S>,
  ready: (server: S) => ReadyMessage,
): void {
  const port = parentPort;
  if (!port) throw new Error(`${entry} must run in a worker thread`);
  const post = (m: ReadyMessage | { type: 'stopped' } | { type: 'error'; message: string }) => port.postMessage(m);
  start(workerData as never).then(
    (server) => {
      post(ready(server));
      port.on('message', (m: { type: string }) => {
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
}
