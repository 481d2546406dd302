// A hostile controller for tests: a real HTTPS server on 127.0.0.1 that onboards each device
// correctly (certs, register, uuid, attest, its configuration, which sets fast timers and an 8 s
// timer.send.timeout) and, once the device shows it applied it (a config poll naming its hash),
// answers that device's requests with one fault after
// another, until `budget` hostile answers have been given; after that it is a correct controller
// again, so a run can settle. Faults, and the named cause a device (or its transport) counts each
// under:
//
//   random-bytes        200, protobuf type, random bytes         certs: bad-certs; uuid/attest/config: bad-envelope
//   wrong-chain         /certs: a signed ZControllerCert whose chain is another PKI's   bad-certs
//   bad-signature       a sealed answer signed by another key     bad-signature
//   unknown-signer      signed by another key and naming its certificate   unknown-signer (the device
//                       then fetches /certs again, which is how /certs meets its faults)
//   wrong-content-type  the correct answer served as text/html    wrong-content-type
//   truncated           Content-Length N, N/2 bytes, then the connection is closed   a transport error (one code)
//   huge-body           100 MB body (declared; or chunked on telemetry)   body-too-large
//   dribble             200, 64-byte body sent one byte a second  timeout (the device's send timeout)
//   server-error        a 5xx storm: 500, 502, 503, 504 in turn  the HTTP status
//
// Body faults go only to endpoints whose answer body a device reads (certs, uuid, attest, config);
// the others go to any endpoint. Which fault is next is a round robin per kind of endpoint, so a
// run is reproducible in what it sends, if not in which device gets what.

import { createHash, randomBytes, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { attest } from '../../src/gen/eve-types.js';
import { createControllerPki, type ControllerPki } from '../../src/identity/controller-pki.js';
import { generateP256 } from '../../src/identity/keys.js';
import { buildControllerCerts } from '../../src/protocol/controller-certs.js';
import { openUnverified, sealResponse } from '../../src/protocol/envelope.js';
import type { EndpointKey } from '../../src/protocol/endpoints.js';
import { endpointOf, uuidOf } from './bad-controller.js';
import { Msg } from '../../src/protocol/messages.js';

export const HOSTILE_KINDS = ['random-bytes', 'wrong-chain', 'bad-signature', 'unknown-signer', 'wrong-content-type', 'truncated', 'huge-body', 'dribble', 'server-error'] as const;
export type HostileKind = (typeof HOSTILE_KINDS)[number];

/** Faults per kind of endpoint (wrong-chain is /certs only, signatures only on sealed answers). */
const FAULTS_FOR: Record<'certs' | 'sealed' | 'other', readonly HostileKind[]> = {
  certs: ['random-bytes', 'wrong-chain', 'wrong-content-type', 'truncated', 'huge-body', 'dribble', 'server-error'],
  sealed: ['random-bytes', 'bad-signature', 'unknown-signer', 'wrong-content-type', 'truncated', 'huge-body', 'dribble', 'server-error'],
  other: ['truncated', 'huge-body', 'dribble', 'server-error'],
};

const PROTO = 'application/x-proto-binary';
const HUGE_BYTES = 100_000_000;
const DRIBBLE_BYTES = 64;
const STORM = [500, 502, 503, 504];
const TOKEN = new Uint8Array(Buffer.from('integrity-token-of-the-hostile-controller', 'utf8'));
/** Timers the first configuration sets: fast polling, and an 8 s whole-request deadline. */
const CONFIG_ITEMS = [
  { key: 'timer.config.interval', value: '5' },
  { key: 'timer.metric.interval', value: '5' },
  { key: 'timer.send.timeout', value: '8' },
];

interface Answer {
  status: number;
  body: Uint8Array;
  /** A sealed endpoint's full answer (also when the correct one is 304): what faults are made of. */
  full?: { payload: Uint8Array; sealed: Uint8Array };
}

/** At most this many dribbled answers at once (each holds a connection until the client's deadline). */
const MAX_DRIBBLING = 8;

export class HostileController {
  readonly pki: Omit<ControllerPki, 'dir'>;
  /** Hostile answers given, by kind. */
  readonly given: Record<HostileKind, number> = Object.fromEntries(HOSTILE_KINDS.map((k) => [k, 0])) as Record<HostileKind, number>;
  /** Statuses given in 5xx storms. */
  readonly storm: Record<string, number> = {};
  /** Hostile answers of body kinds given to /certs (random bytes there is a bad-certs finding). */
  certsRandom = 0;
  /** Requests answered, hostile or not. */
  requests = 0;
  private readonly certsBody: Uint8Array;
  private readonly wrongChainCerts: Uint8Array;
  private readonly signingHash: Uint8Array;
  private readonly otherKey: KeyObject;
  /** The certificate hash of another controller's signing certificate (an unknown signer). */
  private readonly otherSigner: { key: KeyObject; hash: Uint8Array };
  /** Devices (by UUID) that have had their first configuration: hostile from then on. */
  private readonly configured = new Set<string>();
  private readonly turn = { certs: 0, sealed: 0, other: 0 };
  private stormTurn = 0;
  private dribbling = 0;
  private server!: Server;
  private readonly timers = new Set<NodeJS.Timeout>();
  url = '';

  private constructor(readonly budget: number, nowMs: number) {
    this.pki = createControllerPki({ nowMs });
    const built = buildControllerCerts({ signingPem: this.pki.signing.certPem + this.pki.intermediate.certPem, ecdhPem: this.pki.ecdh.certPem });
    this.signingHash = built.signingCertPemHash;
    this.certsBody = sealResponse(Msg.ZControllerCert.encode(built.msg), this.pki.signing.key, this.signingHash);
    // Another controller's PKI, signed by its own key: it verifies as an envelope but does not chain to our root.
    const other = createControllerPki({ nowMs });
    const otherBuilt = buildControllerCerts({ signingPem: other.signing.certPem + other.intermediate.certPem, ecdhPem: other.ecdh.certPem });
    this.wrongChainCerts = sealResponse(Msg.ZControllerCert.encode(otherBuilt.msg), other.signing.key, otherBuilt.signingCertPemHash);
    this.otherKey = generateP256().privateKey;
    this.otherSigner = { key: other.signing.key, hash: otherBuilt.signingCertPemHash };
  }

  static async start(opts: { budget: number; nowMs?: number }): Promise<HostileController> {
    const c = new HostileController(opts.budget, opts.nowMs ?? Date.now());
    c.server = createServer({ key: c.pki.tls.keyPem, cert: c.pki.tls.certPem }, (req, res) => c.handle(req, res));
    await new Promise<void>((resolve) => c.server.listen(0, '127.0.0.1', 511, resolve));
    c.url = `https://127.0.0.1:${(c.server.address() as AddressInfo).port}`;
    return c;
  }

  get rootCaPem(): string {
    return this.pki.root.certPem;
  }

  /** Hostile answers given so far. */
  get hostile(): number {
    let n = 0;
    for (const k of HOSTILE_KINDS) n += this.given[k];
    return n;
  }

  close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.requests++;
      const url = req.url ?? '';
      const endpoint = endpointOf(url);
      if (!endpoint) return void res.writeHead(404).end();
      const body = new Uint8Array(Buffer.concat(chunks));
      const answer = this.answer(endpoint, body, url);
      const kind = this.hostileKind(endpoint, url, req);
      if (kind === undefined) return void send(res, answer.status, answer.body, PROTO);
      this.given[kind]++;
      this.fault(kind, endpoint, answer, res);
    });
  }

  /** The fault for this request, or undefined for a correct answer. */
  private hostileKind(endpoint: EndpointKey, url: string, req: IncomingMessage): HostileKind | undefined {
    if (this.hostile >= this.budget) return undefined;
    if (endpoint === 'certs') {
      // Devices that still onboard send their serial; a device that knows its UUID does not (§13.1).
      if (req.headers['x-serial-number'] !== undefined) return undefined;
    } else {
      const uuid = /\/id\/([^/]+)\//.exec(url)?.[1];
      if (uuid === undefined || !this.configured.has(uuid)) return undefined;
    }
    const group = endpoint === 'certs' ? 'certs' : endpoint === 'uuid' || endpoint === 'attest' || endpoint === 'config' ? 'sealed' : 'other';
    const list = FAULTS_FOR[group];
    let kind = list[this.turn[group]++ % list.length]!;
    if (kind === 'dribble' && this.dribbling >= MAX_DRIBBLING) kind = list[this.turn[group]++ % list.length]!;
    return kind;
  }

  private fault(kind: HostileKind, endpoint: EndpointKey, answer: Answer, res: ServerResponse): void {
    switch (kind) {
      case 'random-bytes':
        if (endpoint === 'certs') this.certsRandom++;
        // 0xff first: field 31 with wire type 7, which no protobuf decoder accepts, so the bytes
        // never happen to decode (as an envelope naming an unknown signer, say).
        return send(res, 200, Buffer.concat([Buffer.of(0xff), randomBytes(63 + (this.hostile % 449))]), PROTO);
      case 'wrong-chain':
        return send(res, 200, this.wrongChainCerts, PROTO);
      case 'bad-signature':
        return send(res, 200, sealResponse(answer.full!.payload, this.otherKey, this.signingHash), PROTO);
      case 'unknown-signer':
        return send(res, 200, sealResponse(answer.full!.payload, this.otherSigner.key, this.otherSigner.hash), PROTO);
      case 'wrong-content-type':
        return send(res, 200, answer.full?.sealed ?? answer.body, 'text/html; charset=utf-8');
      case 'truncated': {
        const full = answer.body.length >= 2 ? answer.body : randomBytes(256);
        res.writeHead(200, { 'content-type': PROTO, 'content-length': String(full.length) });
        res.write(full.subarray(0, full.length >> 1), () => res.socket?.destroy());
        return;
      }
      case 'huge-body':
        return this.huge(res, endpoint !== 'certs' && endpoint !== 'uuid' && endpoint !== 'attest' && endpoint !== 'config' && this.given['huge-body'] % 2 === 0);
      case 'dribble':
        return this.dribble(res);
      case 'server-error': {
        const status = STORM[this.stormTurn++ % STORM.length]!;
        this.storm[status] = (this.storm[status] ?? 0) + 1;
        return void res.writeHead(status).end();
      }
    }
  }

  /**
   * 100 MB of zeros, declared up front or chunked, 64 KiB every 5 ms until the client hangs up (it
   * should after its cap; pacing keeps this server from encrypting megabytes nobody reads).
   */
  private huge(res: ServerResponse, chunked: boolean): void {
    res.writeHead(200, chunked ? { 'content-type': PROTO } : { 'content-type': PROTO, 'content-length': String(HUGE_BYTES) });
    const chunk = Buffer.alloc(64 * 1024);
    let left = HUGE_BYTES;
    const timer = setInterval(() => {
      if (res.destroyed || left <= 0) {
        clearInterval(timer);
        this.timers.delete(timer);
        if (!res.destroyed) res.end();
        return;
      }
      left -= chunk.length;
      res.write(chunk);
    }, 5);
    this.timers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      this.timers.delete(timer);
    });
  }

  /** Headers at once, then one byte a second until the client gives up. */
  private dribble(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': PROTO, 'content-length': String(DRIBBLE_BYTES) });
    this.dribbling++;
    let sent = 0;
    const timer = setInterval(() => {
      if (res.destroyed || sent >= DRIBBLE_BYTES) {
        clearInterval(timer);
        this.timers.delete(timer);
        if (!res.destroyed) res.end();
        return;
      }
      res.write(Buffer.of(0x2a));
      sent++;
    }, 1000);
    this.timers.add(timer);
    res.on('close', () => {
      this.dribbling--;
      clearInterval(timer);
      this.timers.delete(timer);
    });
  }

  /** What a correct (if trusting) controller answers. */
  private answer(endpoint: EndpointKey, body: Uint8Array, url: string): Answer {
    const seal = (status: number, payload: Uint8Array): Answer => {
      const sealed = sealResponse(payload, this.pki.signing.key, this.signingHash);
      return { status, body: sealed, full: { payload, sealed } };
    };
    const empty = new Uint8Array(0);
    switch (endpoint) {
      case 'certs':
        return { status: 200, body: this.certsBody, full: { payload: new Uint8Array(0), sealed: this.certsBody } };
      case 'ping':
        return { status: 200, body: empty };
      case 'register':
        return { status: 201, body: empty };
      case 'uuid':
        return seal(200, Msg.UuidResponse.encode({ uuid: uuidOf(openUnverified(body).container.senderCertHash) }));
      case 'attest': {
        const req = Msg.ZAttestReq.decode(openUnverified(body).payload);
        let resp: attest.ZAttestResponse;
        if (req.reqType === attest.ZAttestReqType.ATTEST_REQ_NONCE) {
          resp = { respType: attest.ZAttestRespType.ATTEST_RESP_NONCE, nonce: { nonce: new Uint8Array(Buffer.from('hostile-controller-nonce', 'utf8')) } };
        } else if (req.reqType === attest.ZAttestReqType.ATTEST_REQ_QUOTE) {
          resp = { respType: attest.ZAttestRespType.ATTEST_RESP_QUOTE_RESP, quoteResp: { response: attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_SUCCESS, integrity_token: TOKEN } };
        } else resp = { respType: attest.ZAttestRespType.ATTEST_RESP_CERT };
        return seal(201, Msg.ZAttestResponse.encode(resp));
      }
      case 'config': {
        const uuid = /\/id\/([^/]+)\//.exec(url)?.[1] ?? '';
        const cfg = { id: { uuid, version: '1' }, configItems: CONFIG_ITEMS };
        const hash = createHash('sha256').update(Msg.EdgeDevConfig.encode(cfg)).digest('hex');
        // Correct until the device shows it applied this configuration (its poll names the hash):
        // from then on its requests carry the 8 s send timeout, and it gets hostile answers.
        const full = seal(200, Msg.ConfigResponse.encode({ config: cfg, configHash: hash }));
        if (Msg.ConfigRequest.decode(openUnverified(body).payload).configHash !== hash) return full;
        if (!this.configured.has(uuid)) queueMicrotask(() => this.configured.add(uuid));
        return { status: 304, body: empty, full: full.full! };
      }
      default:
        return { status: 201, body: empty };
    }
  }
}

function send(res: ServerResponse, status: number, body: Uint8Array, contentType: string): void {
  res.writeHead(status, body.length > 0 ? { 'content-type': contentType, 'content-length': String(body.length) } : {}).end(body);
}
