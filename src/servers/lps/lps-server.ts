// An embedded local profile server for one site: the device API (plain HTTP/1.1, keep-alive) and
// the JSON admin API on loopback, over one LpsSite whose command requests are persisted to a state
// file before the admin call returns. Runs in the calling thread; lps-thread.ts runs it in its own.

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleAdminRequest } from './lps-admin-api.js';
import { LpsDeviceApi } from './lps-device-api.js';
import { NDJSON_MIME } from './lps-endpoints.js';
import { resolveLpsOptions, type LpsServerOptions } from './lps-options.js';
import { LpsSignalHub } from './lps-signal.js';
import { LpsSite, type LpsMutation } from './lps-site.js';
import { readStateFile, writeFileAtomic } from './lps-state-file.js';

export interface LpsServer {
  /** Base URL of the device API, e.g. http://127.0.0.1:41234 */
  url: string;
  /** host:port to put in local_profile_server. */
  address: string;
  /** Base URL of the admin API, e.g. http://127.0.0.1:41235 */
  adminUrl: string;
  /** server_token: goes into the devices' profile_server_token. */
  token: string;
  /** The state, for in-process use (tests, the thread entry). */
  site: LpsSite;
  api: LpsDeviceApi;
  /** Writes the state file now (if there is one). */
  persist(): void;
  stop(): Promise<void>;
}

export interface LpsServerExtras {
  /** Clock for issue and completion times and timestamps. Default Date.now. */
  now?: () => number;
}

const KEEP_ALIVE_MS = 120_000;

export async function createLpsServer(opts: LpsServerOptions = {}, extras: LpsServerExtras = {}): Promise<LpsServer> {
  const o = resolveLpsOptions(opts);
  const now = extras.now ?? Date.now;
  const saved = o.stateFile !== undefined ? readStateFile(o.stateFile) : undefined;
  const site =
    saved !== undefined
      ? LpsSite.fromJSON(saved, now, `LPS state file ${o.stateFile}`, o.token)
      : new LpsSite(o.token ?? randomBytes(16).toString('hex'), now, { profile: o.profile, radioSilence: o.radioSilence, throttle: o.throttle });

  // Commands and settings are on disk before the admin call answers; completions and bindings
  // follow shortly after (losing them costs nothing: the device reports them again).
  let timer: NodeJS.Timeout | undefined;
  const persist = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (o.stateFile !== undefined) writeFileAtomic(o.stateFile, JSON.stringify(site.toJSON()));
  };
  site.onMutation = (kind: LpsMutation) => {
    if (o.stateFile === undefined) return;
    if (kind === 'command' || kind === 'config') persist();
    else if (timer === undefined) {
      timer = setTimeout(() => {
        try {
          persist();
        } catch (e) {
          // A full disk must not kill the server; the next command write reports it to the admin.
          process.stderr.write(`LPS ${o.siteName}: ${(e as Error).message}\n`);
        }
      }, o.persistDelayMs);
      timer.unref();
    }
  };
  if (o.stateFile !== undefined) persist(); // the token is fixed from now on

  const api = new LpsDeviceApi(site, now);
  const signals = new LpsSignalHub();

  const device = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, (req, res) => onDeviceRequest(req, res));
  device.headersTimeout = 60_000;
  device.requestTimeout = 0; // the signal stream is long-lived
  const admin = createServer((req, res) => handleAdminRequest({ site, api, signals }, req, res));

  function onDeviceRequest(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= o.maxBodyBytes) chunks.push(c);
    });
    req.on('end', () => {
      if (size > o.maxBodyBytes) {
        const msg = `body of ${size} bytes is larger than this LPS accepts (${o.maxBodyBytes})\n`;
        res.writeHead(413, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(msg) });
        res.end(msg);
        return;
      }
      const remote = normaliseAddress(req.socket.remoteAddress ?? '');
      const ct = req.headers['content-type'];
      const reply = api.handle(req.method ?? 'GET', req.url ?? '/', req.headers.host ?? '', ct, remote, Buffer.concat(chunks));
      if (reply.stream !== undefined) {
        res.writeHead(200, { 'content-type': NDJSON_MIME, 'cache-control': 'no-cache' });
        res.flushHeaders();
        signals.add(reply.stream, res);
        return;
      }
      const headers: Record<string, string | number> = { 'content-length': reply.body?.length ?? 0 };
      if (reply.contentType !== undefined && reply.body !== undefined && reply.body.length > 0) headers['content-type'] = reply.contentType;
      res.writeHead(reply.status, headers);
      res.end(reply.body);
    });
    req.on('error', () => res.destroy());
  }

  try {
    await listen(device, o.port, o.host);
    await listen(admin, o.adminPort, '127.0.0.1');
  } catch (e) {
    device.close();
    admin.close();
    throw e;
  }
  const port = (device.address() as AddressInfo).port;
  const adminPort = (admin.address() as AddressInfo).port;
  const hostPart = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${hostPart}:${port}`,
    address: `${hostPart}:${port}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    token: site.token,
    site,
    api,
    persist,
    stop: async () => {
      signals.closeAll();
      await Promise.all([close(device), close(admin)]);
      persist();
    },
  };
}

function normaliseAddress(a: string): string {
  return a.startsWith('::ffff:') ? a.slice(7) : a;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) => reject(new Error(`LPS: cannot listen on ${host}:${port}: ${e.message}`));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
