// Test harness for the virtual device: a fake clock + scheduler (a tiny heap), and a fake
// controller that implements the Transport port, signs its answers with a test signing key through
// the envelope module, and records every request. Used by test/device-*.test.ts only.

import { createHash } from 'node:crypto';
import { attest, type config } from '../src/gen/eve-types.js';
import { buildControllerCerts } from '../src/protocol/controller-certs.js';
import { openRegisterRequest, openRequest, sealResponse } from '../src/protocol/envelope.js';
import type { EndpointKey } from '../src/protocol/endpoints.js';
import { Msg } from '../src/protocol/messages.js';
import { createControllerPki, type ControllerPki } from '../src/identity/controller-pki.js';
import { createDeviceIdentity, type DeviceIdentityMaterial } from '../src/identity/device-identity.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import type { DeviceBehaviour, DeviceFinding, DeviceLifecycle, DeviceOptions } from '../src/device/device-options.js';
import { TransportError, wake, type WakeTarget, type Clock, type Millis, type Scheduler, type TimerHandle, type Transport, type TransportRequest, type TransportResponse } from '../src/device/ports.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import { VirtualDevice } from '../src/device/virtual-device.js';
import type { LogSpill } from '../src/device/telemetry/log-spill-port.js';

/** 2026-05-28T…Z: certificates made "now" must be valid on the simulated clock. */
export const T0 = 1_780_000_000_000;

// ---------------------------------------------------------------------------------------------
// Clock and scheduler

interface Wakeup {
  at: Millis;
  seq: number;
  id: number;
  fn: (dueAt: Millis) => void;
}

export class FakeTime implements Clock, Scheduler {
  private t: Millis;
  private heap: Wakeup[] = [];
  private seq = 0;
  private nextId = 1;
  private cancelled = new Set<number>();

  constructor(start: Millis = T0) {
    this.t = start;
  }

  now(): Millis {
    return this.t;
  }

  at(at: Millis, target: WakeTarget): TimerHandle {
    const w: Wakeup = { at, seq: this.seq++, id: this.nextId++, fn: (dueAt) => wake(target, dueAt) };
    this.heap.push(w);
    this.up(this.heap.length - 1);
    return w.id;
  }

  cancel(handle: TimerHandle): void {
    this.cancelled.add(handle);
  }

  /** Wake-ups still armed. */
  get pending(): number {
    return this.heap.filter((w) => !this.cancelled.has(w.id)).length;
  }

  /** Runs every wake-up due up to `until` in time order, letting answers resolve in between. */
  async advanceTo(until: Millis): Promise<void> {
    await flush();
    for (;;) {
      const top = this.heap[0];
      if (!top || top.at > until) break;
      this.pop();
      if (this.cancelled.delete(top.id)) continue;
      if (top.at > this.t) this.t = top.at;
      top.fn(top.at);
      await flush();
    }
    if (until > this.t) this.t = until;
  }

  advance(ms: Millis): Promise<void> {
    return this.advanceTo(this.t + ms);
  }

  private less(a: Wakeup, b: Wakeup): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }
  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }
  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

/** Lets every pending promise continuation run (the fake transport answers without I/O). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

// ---------------------------------------------------------------------------------------------
// Fake controller

export interface RecordedRequest extends TransportRequest {
  /** Clock time the request reached the controller. */
  at: Millis;
}

/** What a test hook may answer instead of the default controller. */
export type HookAnswer = TransportResponse | 'transport-error' | undefined;

const PROTO = { 'content-type': 'application/x-proto-binary' };
const EMPTY = new Uint8Array(0);

export class FakeController implements Transport {
  readonly requests: RecordedRequest[] = [];
  /** Per-request override; return undefined for the default behaviour. */
  hook: ((req: TransportRequest) => HookAnswer) | undefined;
  /** The configuration served on /config. */
  config: config.EdgeDevConfig = {};
  /** Refuse /config without the current integrity token (as Adam does). */
  requireToken = true;
  readonly deviceUuid = '6ae3b91c-2f4d-4c8e-9b57-0d1e2f3a4b5c';
  readonly token = new Uint8Array(Buffer.from('a1'.repeat(64), 'latin1'));
  readonly certsBody: Uint8Array;
  readonly signingCertPemHash: Uint8Array;
  registered = false;
  /** Answer delay on the fake clock (0: answers resolve at once). */
  latencyMs = 0;
  private nonceSeq = 0;

  constructor(
    readonly time: FakeTime,
    readonly pki: Omit<ControllerPki, 'dir'>,
    readonly identity: DeviceIdentityMaterial,
  ) {
    const built = buildControllerCerts({ signingPem: pki.signing.certPem + pki.intermediate.certPem, ecdhPem: pki.ecdh.certPem });
    this.signingCertPemHash = built.signingCertPemHash;
    this.certsBody = sealResponse(Msg.ZControllerCert.encode(built.msg), pki.signing.key, built.signingCertPemHash);
  }

  /** Answers sealed with the controller signing key. */
  seal(payload: Uint8Array): Uint8Array {
    return sealResponse(payload, this.pki.signing.key, this.signingCertPemHash);
  }

  get configHash(): string {
    return createHash('sha256').update(Msg.EdgeDevConfig.encode(this.config)).digest('base64url');
  }

  of(endpoint: EndpointKey): RecordedRequest[] {
    return this.requests.filter((r) => r.endpoint === endpoint);
  }

  /** Endpoint keys in request order. */
  sequence(): EndpointKey[] {
    return this.requests.map((r) => r.endpoint);
  }

  /** Decoded ZInfoMsg bodies of /info requests. */
  infos() {
    return this.of('info').map((r) => Msg.ZInfoMsg.decode(openRequest(r.body!, () => ({ publicKey: this.identity.deviceKey })).payload));
  }

  async request(req: TransportRequest): Promise<TransportResponse> {
    this.requests.push({ ...req, at: this.time.now() });
    if (this.latencyMs > 0) await new Promise<void>((resolve) => this.time.at(this.time.now() + this.latencyMs, () => resolve()));
    const hooked = this.hook?.(req);
    if (hooked === 'transport-error') throw new TransportError('connection refused (test)', 'ECONNREFUSED');
    if (hooked !== undefined) return hooked;
    return this.answer(req);
  }

  private payloadOf(req: TransportRequest): Uint8Array {
    return openRequest(req.body!, () => ({ publicKey: this.identity.deviceKey })).payload;
  }

  private answer(req: TransportRequest): TransportResponse {
    const ok = (status: number, body: Uint8Array = EMPTY, headers: Record<string, string> = {}): TransportResponse => ({ status, headers, body });
    switch (req.endpoint) {
      case 'certs':
        return ok(200, this.certsBody, PROTO);
      case 'ping':
        return ok(200);
      case 'register':
        openRegisterRequest(req.body!);
        this.registered = true;
        return ok(201);
      case 'uuid':
        this.payloadOf(req);
        return ok(200, this.seal(Msg.UuidResponse.encode({ uuid: this.deviceUuid })), PROTO);
      case 'attest': {
        const r = Msg.ZAttestReq.decode(this.payloadOf(req));
        let resp: attest.ZAttestResponse;
        if (r.reqType === attest.ZAttestReqType.ATTEST_REQ_CERT) resp = { respType: attest.ZAttestRespType.ATTEST_RESP_CERT };
        else if (r.reqType === attest.ZAttestReqType.ATTEST_REQ_NONCE) {
          resp = { respType: attest.ZAttestRespType.ATTEST_RESP_NONCE, nonce: { nonce: Buffer.from(`nonce${String(++this.nonceSeq).padStart(7, '0')}`) } };
        } else {
          resp = {
            respType: attest.ZAttestRespType.ATTEST_RESP_QUOTE_RESP,
            quoteResp: { response: attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_SUCCESS, integrity_token: this.token },
          };
        }
        return ok(201, this.seal(Msg.ZAttestResponse.encode(resp)), PROTO);
      }
      case 'config': {
        const r = Msg.ConfigRequest.decode(this.payloadOf(req));
        if (this.requireToken && Buffer.compare(Buffer.from(r.integrity_token ?? EMPTY), Buffer.from(this.token)) !== 0) return ok(403);
        const hash = this.configHash;
        if (r.configHash === hash) return ok(304);
        return ok(200, this.seal(Msg.ConfigResponse.encode({ config: this.config, configHash: hash })), PROTO);
      }
      default:
        this.payloadOf(req);
        return ok(201);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Fixtures

let shared: { pki: Omit<ControllerPki, 'dir'>; identity: DeviceIdentityMaterial } | undefined;

/** Controller PKI and one device identity, made once per test file (key generation is slow-ish). */
export function fixtures(): { pki: Omit<ControllerPki, 'dir'>; identity: DeviceIdentityMaterial } {
  if (!shared) {
    const pki = createControllerPki({ nowMs: T0 });
    const ca = createFleetCa('device-tests', T0);
    const { identity } = createDeviceIdentity(ca, 'device-tests', 0, T0);
    shared = { pki, identity };
  }
  return shared;
}

export const BEHAVIOUR: DeviceBehaviour = {
  eveVersion: '14.5.2-kvm-amd64',
  logFormat: 'newlogs',
  logLinesPerSec: 1,
  flowlogIntervalMs: 120_000,
  preRegistered: false,
  appStepMs: 1_000,
  hardware: { ncpu: 4, memoryMB: 8192, storageMB: 65536, model: 'sim-1', manufacturer: 'evesim' },
};

export interface Rig {
  time: FakeTime;
  controller: FakeController;
  device: VirtualDevice;
  findings: DeviceFinding[];
  lifecycle: DeviceLifecycle[];
}

export function rig(over: { behaviour?: Partial<DeviceBehaviour>; seed?: number; options?: Partial<DeviceOptions>; logSpill?: LogSpill } = {}): Rig {
  const { pki, identity } = fixtures();
  const time = new FakeTime();
  const controller = new FakeController(time, pki, identity);
  const findings: DeviceFinding[] = [];
  const lifecycle: DeviceLifecycle[] = [];
  const opts: DeviceOptions = {
    index: 0,
    identity,
    behaviour: { ...BEHAVIOUR, ...over.behaviour },
    rootCertPem: pki.root.certPem,
    clock: time,
    scheduler: time,
    transport: controller,
    rng: SeededRng.create(over.seed ?? 7, 0, 'device'),
    onFinding: (f) => findings.push(f),
    onStateChange: (_from, to) => lifecycle.push(to),
    ...over.options,
    ...(over.logSpill ? { logSpill: over.logSpill } : {}),
  };
  return { time, controller, device: new VirtualDevice(opts), findings, lifecycle };
}

/** Starts the device and runs until it has applied the controller's configuration. */
export async function onboard(r: Rig, within: Millis = 300_000): Promise<void> {
  r.device.start();
  const end = r.time.now() + within;
  while (r.time.now() < end) {
    await r.time.advance(1_000);
    if (r.device.configHash !== '' && r.device.configHash === r.controller.configHash) return;
  }
  throw new Error(`device did not get its configuration within ${within} ms: ${r.controller.sequence().join(' ')}`);
}

/** Decodes the payload of a device request with the device's public key. */
export function payloadOf(r: Rig, req: TransportRequest): Uint8Array {
  return openRequest(req.body!, () => ({ publicKey: r.controller.identity.deviceKey })).payload;
}
