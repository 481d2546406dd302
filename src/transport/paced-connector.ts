// The socket factory undici calls for every new pooled connection. Ours instead of undici's own
// so that (a) bursts of connects go through the ConnectPacer, (b) the TLS session is held by a
// strong reference (undici's cache holds it weakly, so a GC can silently turn every reconnect
// into a full handshake), and (c) connects, resumed handshakes and failures are counted.

import net from 'node:net';
import tls from 'node:tls';
import type { buildConnector } from 'undici';
import type { ConnectPacer } from './connect-pacer.js';

export interface PacedConnectorOptions {
  pacer: ConnectPacer;
  /** TLS only: shared context (trusted roots, ciphers, minimum version), built once. */
  secureContext?: tls.SecureContext;
  /** TLS only: false disables certificate verification (insecureSkipVerify). */
  rejectUnauthorized: boolean;
  /** TLS only: SNI and name to verify, when it differs from the URL host. */
  servername?: string;
  /** Time allowed for TCP connect plus TLS handshake. */
  connectTimeoutMs: number;
  /**
   * Where the TLS session is kept (the newest ticket wins). Given when the session must outlive
   * this connector (a device's connection lost to the network, then made again: it resumes);
   * otherwise the connector keeps its own.
   */
  sessionHolder?: TlsSessionHolder;
  /** TCP keep-alive probe delay on idle pooled sockets. */
  keepAliveInitialDelayMs: number;
  /**
   * Told of every socket once connected (a device's transport keeps its current one). `tcp` is
   * the TCP socket under it (the socket itself without TLS) when `resettable` asked for one.
   */
  onConnected?: (socket: net.Socket, tcp: net.Socket | undefined) => void;
  /**
   * TLS only: open the TCP socket first and run TLS over it, so the owner can later close the
   * connection with a reset (net.Socket.resetAndDestroy) instead of a FIN, as a rebooted device's
   * kernel or a reset on the path does. A TLS socket Node opens itself offers no reset. Costs one
   * more socket object per connection, so only the devices' own connections ask for it.
   */
  resettable?: boolean;
}

/** A TLS session kept between connects. */
export interface TlsSessionHolder {
  session: Buffer | undefined;
}

export interface ConnectorCounters {
  /** Connects that completed (TCP, and TLS handshake when https). */
  connected: number;
  /** TLS handshakes that resumed a cached session (abbreviated handshake, about half the CPU). */
  resumed: number;
  /** Connect attempts that failed (refused, reset, TLS verification, timeout). */
  failed: number;
}

export class ConnectTimeoutError extends Error {
  readonly code = 'connect-timeout';
  constructor(host: string, port: number, ms: number) {
    super(`connect to ${host}:${port} took longer than ${ms} ms`);
    this.name = 'ConnectTimeoutError';
  }
}

export function makePacedConnector(
  opts: PacedConnectorOptions,
  counters: ConnectorCounters,
): buildConnector.connector {
  // One origin per transport, so one session slot; the newest ticket wins.
  const held: TlsSessionHolder = opts.sessionHolder ?? { session: undefined };

  return (target, callback) => {
    opts.pacer.run((done) => {
      const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
      const host = target.hostname;
      let socket: net.Socket;
      let tcp: net.Socket | undefined;
      if (target.protocol === 'https:') {
        const servername = opts.servername ?? target.servername ?? (net.isIP(host) ? undefined : host);
        if (opts.resettable) tcp = net.connect({ host, port });
        const tlsSocket = tls.connect({
          // With `socket`, host only names the server to verify; port is ignored.
          ...(tcp ? { socket: tcp } : {}),
          host,
          port,
          servername,
          secureContext: opts.secureContext,
          rejectUnauthorized: opts.rejectUnauthorized,
          session: held.session,
          ALPNProtocols: ['http/1.1'],
        });
        tlsSocket.on('session', (s: Buffer) => {
          held.session = s;
        });
        socket = tlsSocket;
      } else {
        socket = net.connect({ host, port });
        if (opts.resettable) tcp = socket;
      }
      socket.setNoDelay(true);
      socket.setKeepAlive(true, opts.keepAliveInitialDelayMs);

      let settled = false;
      const timer = setTimeout(() => {
        socket.destroy(new ConnectTimeoutError(host, port, opts.connectTimeoutMs));
      }, opts.connectTimeoutMs);

      const onReady = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.off('error', onError);
        counters.connected++;
        if (socket instanceof tls.TLSSocket && socket.isSessionReused()) counters.resumed++;
        opts.onConnected?.(socket, tcp);
        done();
        callback(null, socket);
      };
      const onError = (err: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        counters.failed++;
        socket.on('error', ignore); // late errors from the dying socket
        // A session the server refuses must not be offered again and again.
        if (isTlsFailure(err)) held.session = undefined;
        done();
        callback(err, null);
      };
      socket.once(target.protocol === 'https:' ? 'secureConnect' : 'connect', onReady);
      socket.once('error', onError);
    });
  };
}

function ignore(): void {}

function isTlsFailure(err: Error): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS'));
}
