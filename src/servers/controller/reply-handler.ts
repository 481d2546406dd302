// The HTTP side both device-API listeners (v2 and v1) share: read the body up to a limit (413
// beyond it, counted by the caller), hand method, path and body to the core, write its Reply.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Reply } from './controller-context.js';

export const KEEP_ALIVE_MS = 120_000;

export interface ReplyHandlerOptions {
  maxBodyBytes: number;
  /** Answers one request whose body fits. */
  handle(req: IncomingMessage, body: Buffer): Reply;
  /** Counts a request refused with 413 (its body was `size` bytes, the answer `answerBytes`). */
  onTooLarge(req: IncomingMessage, size: number, answerBytes: number): void;
}

export function replyHandler(o: ReplyHandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > o.maxBodyBytes) tooBig = true;
      else chunks.push(c);
    });
    req.on('end', () => {
      if (tooBig) {
        const msg = `body of ${size} bytes is larger than the controller's limit of ${o.maxBodyBytes}\n`;
        o.onTooLarge(req, size, msg.length);
        res.writeHead(413, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(msg) });
        res.end(msg);
        return;
      }
      const reply = o.handle(req, Buffer.concat(chunks));
      const headers: Record<string, string | number> = { 'content-length': reply.body?.length ?? 0 };
      if (reply.contentType && reply.body && reply.body.length > 0) headers['content-type'] = reply.contentType;
      res.writeHead(reply.status, headers);
      res.end(reply.body);
    });
    req.on('error', () => res.destroy());
  };
}

/** Keep-alive and slow-client limits of a device-API listener. */
export function applyListenerTimeouts(server: HttpsServer): void {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = 60_000;
  server.requestTimeout = 300_000;
}
