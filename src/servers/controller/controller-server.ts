// The embedded controller as servers: the device API over HTTPS (HTTP/1.1, keep-alive, TLS 1.2+
// with the PKI's server certificate) and the admin API over plain HTTP on loopback. Runs in
// whatever thread calls it; startControllerInThread() puts it in a thread of its own.

import type { Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadOrCreateControllerPki } from '../../identity/controller-pki.js';
import { createAdminServer } from './admin-api.js';
import { ControllerCore } from './controller-core.js';
import { resolveControllerOptions, type ControllerOptions } from './controller-options.js';
import type { QuoteVerifier } from './quote-verifier.js';
import { matchRoute } from './route.js';
import { RegistryStore } from './registry-store.js';
import { createV1Server } from './v1-server.js';
import { applyListenerTimeouts, replyHandler } from './reply-handler.js';

export interface ControllerServer {
  /** Base URL of the device API, e.g. https://127.0.0.1:41234 */
  url: string;
  /** Base URL of the admin API, e.g. http://127.0.0.1:41235 */
  adminUrl: string;
  /** Base URL of controller API v1 (mutual TLS, its own port); absent when apiV1 is off. */
  v1Url?: string;
  /** Root CA devices must trust (PEM text) and the file holding it. */
  rootCaPem: string;
  rootCaPath: string;
  /** The controller's state, for in-process use (tests, the thread entry). */
  core: ControllerCore;
  stop(): Promise<void>;
}

export interface ControllerExtras {
  /** Replaces the TPM quote verifier chosen by options.quoteVerifier (in-process tests only). */
  quoteVerifier?: QuoteVerifier;
}

export async function createControllerServer(opts: ControllerOptions, extras: ControllerExtras = {}): Promise<ControllerServer> {
  const options = resolveControllerOptions(opts);
  const pki = loadOrCreateControllerPki(options.stateDir);
  const store = options.persistRegistry ? RegistryStore.open(options.stateDir) : undefined;
  let core: ControllerCore;
  try {
    core = new ControllerCore(options, pki, extras.quoteVerifier, store);
  } catch (e) {
    await store?.close();
    throw e;
  }

  const api = createHttpsServer(
    { key: pki.tls.keyPem, cert: pki.tls.certPem, minVersion: 'TLSv1.2' },
    replyHandler({
      maxBodyBytes: options.maxBodyBytes,
      handle: (req, body) => core.handle(req.method ?? 'GET', req.url ?? '/', body),
      onTooLarge: (req, size, answerBytes) =>
        core.stats.record(matchRoute(req.method ?? 'GET', req.url ?? '/')?.endpoint ?? 'unknown', 413, size, answerBytes),
    }),
  );
  applyListenerTimeouts(api);
  core.connections.v2.watch(api);

  const admin = createAdminServer(core);
  const v1 = options.apiV1 ? createV1Server(core, options.maxBodyBytes).server : undefined;
  try {
    await listen(api, options.port, options.host);
    await listen(admin, options.adminPort, options.host);
    if (v1) await listen(v1, options.v1Port, options.host);
  } catch (e) {
    api.close();
    admin.close();
    v1?.close();
    await store?.close();
    throw e;
  }
  const apiPort = (api.address() as AddressInfo).port;
  const adminPort = (admin.address() as AddressInfo).port;
  const hostPart = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `https://${hostPart}:${apiPort}`,
    adminUrl: `http://${hostPart}:${adminPort}`,
    ...(v1 ? { v1Url: `https://${hostPart}:${(v1.address() as AddressInfo).port}` } : {}),
    rootCaPem: pki.root.certPem,
    rootCaPath: join(pki.dir, 'root-certificate.pem'),
    core,
    stop: async () => {
      await Promise.all([close(api), close(admin), ...(v1 ? [close(v1)] : [])]);
      await store?.close();
    },
  };
}

function listen(server: HttpsServer | HttpServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) => reject(new Error(`controller: cannot listen on ${host}:${port}: ${e.message}`));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function close(server: HttpsServer | HttpServer): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
