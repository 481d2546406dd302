// Runs an embedded LPS in a worker thread of its own, so a site's HTTP load does not share an event
// loop with the fleet or the controller.

import { startSourceAwareWorker } from '../controller/source-worker.js';
import type { LpsServerOptions } from './lps-options.js';
import type { FromLpsThread, ToLpsThread } from './lps-thread-messages.js';

export interface LpsThreadHandle {
  url: string;
  /** host:port for local_profile_server. */
  address: string;
  adminUrl: string;
  token: string;
  stop(): Promise<void>;
}

export function startLpsInThread(opts: LpsServerOptions = {}): Promise<LpsThreadHandle> {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const worker = startSourceAwareWorker(new URL(`./lps-thread-entry${ext}`, import.meta.url), { workerData: opts });
  const site = opts.siteName ?? 'site';
  return new Promise((resolve, reject) => {
    let stopped: (() => void) | undefined;
    let stopFailed: ((e: Error) => void) | undefined;
    worker.on('message', (m: FromLpsThread) => {
      if (m.type === 'ready') {
        resolve({
          url: m.url,
          address: m.address,
          adminUrl: m.adminUrl,
          token: m.token,
          stop: () =>
            new Promise<void>((res, rej) => {
              stopped = res;
              stopFailed = rej;
              worker.postMessage({ type: 'stop' } satisfies ToLpsThread);
            }),
        });
      } else if (m.type === 'stopped') {
        void worker.terminate().then(() => stopped?.());
      } else {
        const e = new Error(`LPS ${site}: ${m.message}`);
        if (stopFailed) stopFailed(e);
        else reject(e);
        void worker.terminate();
      }
    });
    worker.on('error', (e) => {
      const err = new Error(`LPS ${site} thread failed: ${e.message}`);
      if (stopFailed) stopFailed(err);
      else reject(err);
    });
  });
}
