// What the loopback JSON admin APIs (controller and LPS) share: a size-limited body read and a
// JSON answer. Each API keeps its own routes and error types.

import type { IncomingMessage, ServerResponse } from 'node:http';

/** The whole request body; rejects with `tooLarge()` (and drops the request) past `maxBytes`. */
export function readLimitedBody(req: IncomingMessage, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) {
        reject(tooLarge());
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function sendJson(res: ServerResponse, status: number, json: unknown): void {
  const body = Buffer.from(JSON.stringify(json));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}
