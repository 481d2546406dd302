// The HTTPS listener of controller API v1: mutual TLS on a port of its own. The server asks every
// client for a certificate but completes every handshake (requestCert, rejectUnauthorized false),
// so that v1-core.ts can answer a missing or refused certificate with the document's 401 or 403
// instead of a TLS alert the device cannot tell from a network failure. Keep-alive and TLS session
// resumption as on the v2 port; a resumed session keeps the client certificate it was made with.

import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { ControllerCore } from './controller-core.js';
import { peerOf } from './v1-client-cert.js';
import { V1Core } from './v1-core.js';
import { matchV1Route } from './v1-route.js';
import { applyListenerTimeouts, replyHandler } from './reply-handler.js';

export function createV1Server(core: ControllerCore, maxBodyBytes: number): { server: HttpsServer; v1: V1Core } {
  const v1 = new V1Core(core);
  const server = createHttpsServer(
    { key: core.pki.tls.keyPem, cert: core.pki.tls.certPem, minVersion: 'TLSv1.2', requestCert: true, rejectUnauthorized: false },
    replyHandler({
      maxBodyBytes,
      handle: (req, body) => v1.handle(req.method ?? 'GET', req.url ?? '/', body, peerOf(req.socket as TLSSocket)),
      onTooLarge: (req, size, answerBytes) => {
        const key = matchV1Route(req.method ?? 'GET', req.url ?? '/')?.endpoint ?? 'unknown';
        core.stats.record(key, 413, size, answerBytes);
        v1.stats.record(key, 413, size, answerBytes);
      },
    }),
  );
  applyListenerTimeouts(server);
  core.connections.v1.watch(server);
  return { server, v1 };
}
