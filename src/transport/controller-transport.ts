// The Transport (src/device/ports.ts) for one controller base URL, shared by every device of a
// worker: one undici Pool of keep-alive HTTP/1.1 connections (no pipelining), TLS verified against
// the system roots plus the controller's root CA (like EVE: system CAs + root-certificate.pem),
// TLS sessions resumed, new connections paced (connect-pacer.ts), one deadline per request.
//
// Any HTTP status resolves; only "no HTTP answer" rejects, with TransportError(code). Bodies are
// read to the end (so the socket goes back to the pool) and capped per endpoint
// (response-body-limits.ts); an answer over its cap fails as 'body-too-large' and its connection
// is dropped. The deadline covers the whole exchange, so an answer dribbled byte by byte ends at it.
//
// Requests go through pool.dispatch with a small handler instead of pool.request: no Readable
// stream per response, which is most of undici.request's per-request cost. Never global fetch.

import { responseBodyLimit } from './response-body-limits.js';
import tls from 'node:tls';
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { Transport, TransportRequest, TransportResponse } from '../device/ports.js';
import { TransportError } from '../device/ports.js';
import { ConnectPacer } from './connect-pacer.js';
import { makePacedConnector, type ConnectorCounters } from './paced-connector.js';
import { toTransportError } from './transport-errors.js';
import type { ControllerClientOptions } from './controller-client-options.js';

/**
 * EVE's client TLS settings (eve-wire-facts §13.1): TLS >= 1.2, and for 1.2 only these two suites.
 * TLS 1.3 suites are Go's fixed set.
 */
export const EVE_TLS_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES128-GCM-SHA256',
].join(':');

export interface ControllerTransportOptions extends ControllerClientOptions {
  /** Also trust Node's bundled root CAs, as EVE trusts the system store. Default true. */
  trustSystemRoots?: boolean;
  /** Most pooled connections. Default 64. */
  connections?: number;
  /**
   * Idle pooled sockets close after this (sooner if the server's Keep-Alive header asks). Default
   * 15 000: below common load-balancer idle timeouts (60 s and up), so we close first and a POST
   * is not written into a socket the server has just dropped.
   */
  keepAliveTimeoutMs?: number;
}

export interface ControllerTransportStats extends ConnectorCounters {
  /** Sockets open now. */
  sockets: number;
  /** Requests waiting in the pool for a free connection: generator-side queueing. */
  queued: number;
  /** Requests on the wire now. */
  running: number;
  /** Connects waiting in the pacer. */
  connectsWaiting: number;
  /** Connects that were delayed by the pacer because they were part of a burst. */
  connectsPaced: number;
}

/** Pooled connections per transport unless told otherwise. */
export const DEFAULT_POOL_CONNECTIONS = 64;
/** Whole-request deadline unless the device's own is shorter, ms. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

const DEFAULTS = {
  connections: DEFAULT_POOL_CONNECTIONS,
  timeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
  connectTimeoutMs: 10_000,
  maxBodyBytes: 16 * 1024 * 1024,
  keepAliveTimeoutMs: 15_000,
  maxConcurrentConnects: 16,
  connectJitterMs: 250,
};

export class ControllerTransport implements Transport {
  readonly origin: string;
  private readonly pathPrefix: string;
  private readonly pool: Pool;
  private readonly pacer: ConnectPacer;
  private readonly counters: ConnectorCounters = { connected: 0, resumed: 0, failed: 0 };
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;

  constructor(opts: ControllerTransportOptions) {
    const url = parseBaseUrl(opts.baseUrl);
    this.origin = url.origin;
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.timeoutMs = positive('timeoutMs', opts.timeoutMs ?? DEFAULTS.timeoutMs);
    this.maxBodyBytes = positive('maxBodyBytes', opts.maxBodyBytes ?? DEFAULTS.maxBodyBytes);
    const connections = positive('connections', opts.connections ?? DEFAULTS.connections);
    const keepAliveTimeoutMs = positive('keepAliveTimeoutMs', opts.keepAliveTimeoutMs ?? DEFAULTS.keepAliveTimeoutMs);

    this.pacer = new ConnectPacer({
      maxConcurrent: positive('maxConcurrentConnects', opts.maxConcurrentConnects ?? DEFAULTS.maxConcurrentConnects),
      jitterMs: nonNegative('connectJitterMs', opts.connectJitterMs ?? DEFAULTS.connectJitterMs),
      random: opts.random,
    });
    const https = url.protocol === 'https:';
    const connect = makePacedConnector(
      {
        pacer: this.pacer,
        secureContext: https ? buildSecureContext(opts, this.origin) : undefined,
        rejectUnauthorized: opts.insecureSkipVerify !== true,
        servername: opts.servername,
        connectTimeoutMs: positive('connectTimeoutMs', opts.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs),
        keepAliveInitialDelayMs: 60_000,
      },
      this.counters,
    );
    this.pool = new Pool(this.origin, {
      connections,
      pipelining: 1,
      connect,
      keepAliveTimeout: keepAliveTimeoutMs,
      keepAliveMaxTimeout: Math.max(keepAliveTimeoutMs, 600_000),
      // Backstops only: the per-request deadline below is the real limit.
      headersTimeout: this.timeoutMs + 1000,
      bodyTimeout: this.timeoutMs + 1000,
    });
  }

  request(req: TransportRequest): Promise<TransportResponse> {
    return new Promise<TransportResponse>((resolve, reject) => {
      const exchange = new Exchange(this, req, resolve, reject, responseBodyLimit(req.endpoint, this.maxBodyBytes), requestDeadlineMs(req, this.timeoutMs));
      exchange.timer = setTimeout(exchange.onDeadline, exchange.deadlineMs);
      try {
        this.pool.dispatch(
          {
            path: this.pathPrefix + req.path,
            method: req.method,
            headers: req.headers,
            body: req.body ?? null,
          },
          exchange,
        );
      } catch (err) {
        exchange.fail(err);
      }
    });
  }

  /** Pool, connection and pacer figures for the generator's own health report. */
  stats(): ControllerTransportStats {
    const p = this.pool.stats;
    const c = this.pacer.stats();
    return {
      ...this.counters,
      sockets: p.connected,
      queued: p.pending,
      running: p.running,
      connectsWaiting: c.waiting,
      connectsPaced: c.paced,
    };
  }

  /** Lets requests in flight finish, then closes every socket. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  /** Closes every socket now; requests in flight fail with TransportError('closed'). */
  async destroy(): Promise<void> {
    await this.pool.destroy();
  }

  /** "POST https://host/path (device 3, config)", for error messages. */
  describe(req: TransportRequest): string {
    return `${req.method} ${this.origin}${this.pathPrefix}${req.path} (device ${req.deviceIndex}, ${req.endpoint})`;
  }

  get requestTimeoutMs(): number {
    return this.timeoutMs;
  }
}

/** What an Exchange needs from the transport that dispatched it (for error messages). */
export interface ExchangeOwner {
  describe(req: TransportRequest): string;
  readonly requestTimeoutMs: number;
}

/**
 * One request in flight: undici's dispatch handler plus the promise it settles. Shared with the
 * per-device transport (mtls-transport.ts); the caller arms `timer` with `onDeadline`.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  timer: NodeJS.Timeout | undefined;
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private headers: Record<string, string | string[] | undefined> = {};
  private chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private abortReason: Error | undefined;

  constructor(
    private readonly owner: ExchangeOwner,
    private readonly req: TransportRequest,
    private readonly resolve: (r: TransportResponse) => void,
    private readonly reject: (e: Error) => void,
    private readonly maxBodyBytes: number,
    /** This request's whole deadline, ms (requestDeadlineMs). */
    readonly deadlineMs: number = owner.requestTimeoutMs,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // The deadline passed while the request waited in the pool: never put it on the wire.
    if (this.abortReason) controller.abort(this.abortReason);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return; // 1xx informational: the real answer follows
    this.status = statusCode;
    this.headers = headers;
    const declared = Number(headers['content-length']);
    if (declared > this.maxBodyBytes) this.abort(controller, this.tooLarge(declared));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size > this.maxBodyBytes) {
      this.abort(controller, this.tooLarge(this.size));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    const chunks = this.chunks;
    let body: Uint8Array;
    if (chunks.length === 0) body = new Uint8Array(0);
    else if (chunks.length > 1) body = Buffer.concat(chunks, this.size);
    else {
      // A lone chunk is a view into the socket's read buffer; copy a small view out of a big
      // buffer so a kept body does not pin the whole TLS record.
      const only = chunks[0]!;
      body = only.byteLength * 2 < only.buffer.byteLength ? new Uint8Array(only) : only;
    }
    this.chunks = [];
    this.resolve({ status: this.status, headers: this.headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.fail(this.abortReason ?? err);
  }

  /** Arrow function: handed to setTimeout without a bind per request. */
  readonly onDeadline = (): void => {
    const err = new TransportError(
      `${this.owner.describe(this.req)}: no HTTP answer within ${this.deadlineMs} ms (timeout)`,
      'timeout',
    );
    this.abortReason = err;
    this.fail(err);
    this.controller?.abort(err);
  };

  fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.chunks = [];
    this.reject(toTransportError(err, this.owner.describe(this.req)));
  }

  private abort(controller: Dispatcher.DispatchController, err: TransportError): void {
    this.abortReason = err;
    this.fail(err);
    controller.abort(err);
  }

  private tooLarge(bytes: number): TransportError {
    return new TransportError(
      `${this.owner.describe(this.req)}: response body of ${bytes} bytes or more exceeds the ${this.maxBodyBytes}-byte limit (body-too-large)`,
      'body-too-large',
    );
  }
}

/** A request's deadline: the transport's, or the device's own (EVE's timer.send.timeout) when shorter. */
export function requestDeadlineMs(req: TransportRequest, transportTimeoutMs: number): number {
  const own = req.timeoutMs;
  return own !== undefined && own > 0 && own < transportTimeoutMs ? own : transportTimeoutMs;
}

export function parseBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error(`controller transport: baseUrl ${JSON.stringify(baseUrl)} is not a URL (expected https://host:port)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`controller transport: baseUrl ${baseUrl} must start with https:// (or http:// for plain servers)`);
  }
  if (url.search || url.hash) throw new Error(`controller transport: baseUrl ${baseUrl} must not carry a query or fragment`);
  return url;
}

function buildSecureContext(opts: ControllerTransportOptions, origin: string): tls.SecureContext {
  const extra = opts.caPem === undefined ? [] : typeof opts.caPem === 'string' ? [opts.caPem] : [...opts.caPem];
  extra.forEach((pem, i) => {
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
      throw new Error(`controller transport for ${origin}: root CA #${i + 1} is not a PEM certificate (no "BEGIN CERTIFICATE" line)`);
    }
  });
  const systemRoots = opts.trustSystemRoots !== false;
  // No `ca` = Node's bundled roots; a given `ca` (even empty) replaces them, so add them back.
  const ca = systemRoots && extra.length === 0 ? undefined : systemRoots ? [...tls.rootCertificates, ...extra] : extra;
  try {
    return tls.createSecureContext({
      ca,
      ciphers: opts.tlsCiphers ?? EVE_TLS_CIPHERS,
      minVersion: 'TLSv1.2',
    });
  } catch (err) {
    throw new Error(`controller transport for ${origin}: bad TLS settings (root CA or ciphers): ${(err as Error).message}`, { cause: err });
  }
}

function positive(name: string, v: number): number {
  if (!(Number.isFinite(v) && v > 0)) throw new Error(`controller transport: ${name} must be a positive number, got ${v}`);
  return v;
}

function nonNegative(name: string, v: number): number {
  if (!(Number.isFinite(v) && v >= 0)) throw new Error(`controller transport: ${name} must be >= 0, got ${v}`);
  return v;
}
