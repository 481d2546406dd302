// A misbehaving controller for tests: a real HTTPS server on 127.0.0.1 that speaks enough of API
// v2 to onboard and attest devices (it does not check their envelopes), and misbehaves in one of
// several ways on the endpoints it is told to:
//
//   garbage          enveloped answers carry a body that is not an AuthContainer (a proxy's HTML page)
//   wrong-signature  enveloped answers name the right signing certificate but are signed by another key
//   der-signature    enveloped answers signed with the right key, the signature ASN.1 DER instead of r||s
//   status-500       every request answered 500 with an empty body
//   truncated        answers announce their length, send half of it and close the connection
//   reset            the connection is destroyed as soon as the request has arrived
//
// The PKI comes from the identity module and answers are sealed with the envelope module, so only
// the chosen fault differs from a correct controller.

import { createHash, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { attest } from '../../src/gen/eve-types.js';
import { createControllerPki, type ControllerPki } from '../../src/identity/controller-pki.js';
import { generateP256 } from '../../src/identity/keys.js';
import { buildControllerCerts } from '../../src/protocol/controller-certs.js';
import { openUnverified, sealResponse } from '../../src/protocol/envelope.js';
import { ENDPOINT_KEYS, V2_PREFIX, type EndpointKey } from '../../src/protocol/endpoints.js';
import { Msg } from '../../src/protocol/messages.js';

export type BadMode = 'garbage' | 'wrong-signature' | 'der-signature' | 'status-500' | 'truncated' | 'reset';
export const BAD_MODES: readonly BadMode[] = ['garbage', 'wrong-signature', 'der-signature', 'status-500', 'truncated', 'reset'];

const PROTO = { 'content-type': 'application/x-proto-binary' };
const GARBAGE = new Uint8Array(Buffer.from('<html><body><h1>502 Bad Gateway</h1></body></html>\n', 'utf8'));
const TOKEN = new Uint8Array(Buffer.from('integrity-token-of-the-bad-controller', 'utf8'));

export interface BadControllerOptions {
  mode: BadMode;
  /** Endpoints that misbehave (default: every one). Garbage and signature faults only touch enveloped answers. */
  on?: readonly EndpointKey[];
  /** Epoch ms the certificates are valid from (a day before) — the devices' clock. */
  nowMs?: number;
}

export class BadController {
  readonly pki: Omit<ControllerPki, 'dir'>;
  /** Requests seen, per endpoint. */
  readonly seen = new Map<EndpointKey, number>();
  private readonly certsBody: Uint8Array;
  private readonly signingHash: Uint8Array;
  private readonly otherKey: KeyObject;
  private readonly faulty: ReadonlySet<EndpointKey>;
  private server!: Server;
  url = '';

  private constructor(readonly opts: BadControllerOptions) {
    this.pki = createControllerPki({ nowMs: opts.nowMs ?? Date.now() });
    const built = buildControllerCerts({ signingPem: this.pki.signing.certPem + this.pki.intermediate.certPem, ecdhPem: this.pki.ecdh.certPem });
    this.signingHash = built.signingCertPemHash;
    this.certsBody = sealResponse(Msg.ZControllerCert.encode(built.msg), this.pki.signing.key, this.signingHash);
    this.otherKey = generateP256().privateKey;
    this.faulty = new Set(opts.on ?? ENDPOINT_KEYS);
  }

  static async start(opts: BadControllerOptions): Promise<BadController> {
    const c = new BadController(opts);
    c.server = createServer({ key: c.pki.tls.keyPem, cert: c.pki.tls.certPem }, (req, res) => c.handle(req, res));
    await new Promise<void>((resolve) => c.server.listen(0, '127.0.0.1', resolve));
    c.url = `https://127.0.0.1:${(c.server.address() as AddressInfo).port}`;
    return c;
  }

  get rootCaPem(): string {
    return this.pki.root.certPem;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const endpoint = endpointOf(req.url ?? '');
      if (endpoint) this.seen.set(endpoint, (this.seen.get(endpoint) ?? 0) + 1);
      const body = new Uint8Array(Buffer.concat(chunks));
      const faulty = endpoint !== undefined && this.faulty.has(endpoint);
      const mode = this.opts.mode;
      if (faulty && mode === 'reset') return void req.socket.destroy();
      if (faulty && mode === 'status-500') return void res.writeHead(500).end();
      const answer = endpoint ? this.answer(endpoint, body, req.url ?? '') : { status: 404, body: new Uint8Array(0) };
      let out = answer.body;
      if (faulty && answer.sealed) out = this.corrupt(answer.payload!, out);
      if (faulty && mode === 'truncated' && out.length > 1) {
        res.writeHead(answer.status, { ...PROTO, 'content-length': String(out.length) });
        res.write(out.subarray(0, out.length >> 1), () => res.socket?.destroy());
        return;
      }
      res.writeHead(answer.status, out.length > 0 ? PROTO : {}).end(out);
    });
  }

  /** The misbehaving version of an enveloped answer (or the answer itself for other modes). */
  private corrupt(payload: Uint8Array, sealed: Uint8Array): Uint8Array {
    switch (this.opts.mode) {
      case 'garbage':
        return GARBAGE;
      case 'wrong-signature':
        return sealResponse(payload, this.otherKey, this.signingHash);
      case 'der-signature':
        return Msg.AuthContainer.encode({
          protectedPayload: { payload },
          algo: 2, // SHA256_32BYTES
          senderCertHash: this.signingHash,
          signatureHash: new Uint8Array(sign('sha256', payload, { key: this.pki.signing.key, dsaEncoding: 'der' })),
        });
      default:
        return sealed;
    }
  }

  /** What a correct (if trusting) controller would answer. */
  private answer(endpoint: EndpointKey, body: Uint8Array, url: string): { status: number; body: Uint8Array; sealed?: boolean; payload?: Uint8Array } {
    const seal = (status: number, payload: Uint8Array) => ({ status, body: sealResponse(payload, this.pki.signing.key, this.signingHash), sealed: true, payload });
    switch (endpoint) {
      case 'certs':
        return { status: 200, body: this.certsBody };
      case 'ping':
        return { status: 200, body: new Uint8Array(0) };
      case 'register':
        return { status: 201, body: new Uint8Array(0) };
      case 'uuid':
        return seal(200, Msg.UuidResponse.encode({ uuid: uuidOf(openUnverified(body).container.senderCertHash) }));
      case 'attest': {
        const req = Msg.ZAttestReq.decode(openUnverified(body).payload);
        let resp: attest.ZAttestResponse;
        if (req.reqType === attest.ZAttestReqType.ATTEST_REQ_NONCE) {
          resp = { respType: attest.ZAttestRespType.ATTEST_RESP_NONCE, nonce: { nonce: new Uint8Array(Buffer.from('bad-controller-nonce', 'utf8')) } };
        } else if (req.reqType === attest.ZAttestReqType.ATTEST_REQ_QUOTE) {
          resp = {
            respType: attest.ZAttestRespType.ATTEST_RESP_QUOTE_RESP,
            quoteResp: { response: attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_SUCCESS, integrity_token: TOKEN },
          };
        } else resp = { respType: attest.ZAttestRespType.ATTEST_RESP_CERT };
        return seal(201, Msg.ZAttestResponse.encode(resp));
      }
      case 'config': {
        // A trusting controller: no integrity token needed; fast timers so devices poll often.
        const cfg = {
          id: { uuid: /\/id\/([^/]+)\//.exec(url)?.[1] ?? '', version: '1' },
          configItems: [{ key: 'timer.config.interval', value: '10' }],
        };
        const hash = createHash('sha256').update(Msg.EdgeDevConfig.encode(cfg)).digest('hex');
        if (Msg.ConfigRequest.decode(openUnverified(body).payload).configHash === hash) return { status: 304, body: new Uint8Array(0) };
        return seal(200, Msg.ConfigResponse.encode({ config: cfg, configHash: hash }));
      }
      default:
        return { status: 201, body: new Uint8Array(0) };
    }
  }
}

/** Which endpoint a request path is (both spellings of edgedevice). */
export function endpointOf(url: string): EndpointKey | undefined {
  const path = url.split('?')[0]!.replace(/^\/api\/v2\/edgeDevice/, V2_PREFIX);
  if (!path.startsWith(V2_PREFIX)) return undefined;
  const rest = path.slice(V2_PREFIX.length + 1);
  if (['ping', 'certs', 'register', 'uuid'].includes(rest)) return rest as EndpointKey;
  if (/\/newlogs$/.test(rest)) return rest.includes('/apps/') ? 'appnewlogs' : 'newlogs';
  if (/\/apps\/instances\/id\/[^/]+\/logs$/.test(rest)) return 'applogs';
  const last = rest.split('/').at(-1) as EndpointKey;
  return (ENDPOINT_KEYS as readonly string[]).includes(last) ? last : undefined;
}

/** A stable UUID per device certificate hash. */
export function uuidOf(senderCertHash: Uint8Array | undefined): string {
  const h = Buffer.from(senderCertHash ?? new Uint8Array(16)).toString('hex').padEnd(32, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
