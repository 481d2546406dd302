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

const KEEP_ALIVE_MS = 120_000;

export function createV1Server(core: ControllerCore, maxBodyBytes: number): { server: HttpsServer; v1: V1Core } {
  const v1 = new V1Core(core);
  const server = createHttpsServer(
    { key: core.pki.tls.keyPem, cert: core.pki.tls.certPem, minVersion: 'TLSv1.2', requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let tooBig = false;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBodyBytes) tooBig = true;
        else chunks.push(c);
      });
      req.on('end', () => {
        if (tooBig) {
          const msg = `body of ${size} bytes is larger than the controller's limit of ${maxBodyBytes}\n`;
          const key = matchV1Route(req.method ?? 'GET', req.url ?? '/')?.endpoint ?? 'unknown';
          core.stats.record(key, 413, size, msg.length);
          v1.stats.record(key, 413, size, msg.length);
          res.writeHead(413, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(msg) });
          res.end(msg);
          return;
        }
        const reply = v1.handle(req.method ?? 'GET', req.url ?? '/', Buffer.concat(chunks), peerOf(req.socket as TLSSocket));
        const headers: Record<string, string | number> = { 'content-length': reply.body?.length ?? 0 };
        if (reply.contentType && reply.body && reply.body.length > 0) headers['content-type'] = reply.contentType;
        res.writeHead(reply.status, headers);
        res.end(reply.body);
      });
      req.on('error', () => res.destroy());
    },
  );
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = 60_000;
  server.requestTimeout = 300_000;
  return { server, v1 };
}
