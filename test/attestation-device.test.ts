// A virtual device with a software TPM going through EVE's attestation state machine (§5.3, §5.4)
// against the fake controller on a fake clock: what it sends (certificates with the EK, real
// quotes, escrow), and how it reacts to every answer code, to reboots and to EVE's size limits.

import { createHash, X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { attest, certs, info } from '../src/gen/eve-types.js';
import { Attestation, EVE_MAX_ATTEST_REQ, type AttestationHost } from '../src/device/lifecycle/attestation.js';
import type { DeviceOptions, DeviceTpm } from '../src/device/device-options.js';
import type { TransportRequest } from '../src/device/ports.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import { VirtualDevice } from '../src/device/virtual-device.js';
import { createEkCertificate } from '../src/identity/ek-certificate.js';
import { Msg } from '../src/protocol/messages.js';
import { EkStore } from '../src/tpm/ek-store.js';
import { gunzipEventLog } from '../src/tpm/event-log-gzip.js';
import { checkQuote } from '../src/tpm/quote-check.js';
import { parseQuoteAttest } from '../src/tpm/tpms-attest.js';
import { EV } from '../src/tpm/event-types.js';
import { BEHAVIOUR, FakeController, FakeTime, T0, fixtures, payloadOf, type HookAnswer, type Rig } from './device-harness.js';

const FW = 'EDK II-1.16-02/02/2024';
const A = info.AttestationState;
const Code = attest.ZAttestResponseCode;
const KeysCode = attest.AttestStorageKeysResponseCode;
const Req = attest.ZAttestReqType;

let tpmSpec: DeviceTpm;

beforeAll(() => {
  const { identity } = fixtures();
  const ek = EkStore.open({ seed: 'attestation-device-test' }).ek(0); // in memory: one RSA key for the file
  tpmSpec = { tampered: false, ekCertPem: createEkCertificate(ek.publicKey(), { privateKey: identity.deviceKey, certPem: identity.deviceCertPem }).pem, ekPublicArea: ek.tpm2bPublic };
});

/**
 * The fake controller's attestation answers, scripted: quote and STORE_KEYS codes are taken from
 * the queues (SUCCESS when empty); escrowed keys are kept and handed back on quote SUCCESS.
 */
class AttestScript {
  readonly quoteCodes: number[] = [];
  readonly storeCodes: number[] = [];
  stored: attest.AttestVolumeKey[] = [];
  /** Overrides the keys handed back on SUCCESS. */
  returnKeys: attest.AttestVolumeKey[] | undefined;
  nonceBytes = 16;
  private seq = 0;

  constructor(private readonly c: FakeController) {}

  answer(req: TransportRequest): HookAnswer {
    if (req.endpoint !== 'attest') return undefined;
    const r = Msg.ZAttestReq.decode(openPayload(this.c, req));
    let resp: attest.ZAttestResponse;
    switch (r.reqType) {
      case Req.ATTEST_REQ_NONCE: {
        const n = Buffer.alloc(this.nonceBytes, 0x41 + (this.seq++ % 26));
        resp = { respType: attest.ZAttestRespType.ATTEST_RESP_NONCE, nonce: { nonce: n } };
        break;
      }
      case Req.ATTEST_REQ_QUOTE: {
        const code = this.quoteCodes.shift() ?? Code.Z_ATTEST_RESPONSE_CODE_SUCCESS;
        const ok = code === Code.Z_ATTEST_RESPONSE_CODE_SUCCESS;
        resp = {
          respType: attest.ZAttestRespType.ATTEST_RESP_QUOTE_RESP,
          quoteResp: ok ? { response: code, integrity_token: this.c.token, keys: this.returnKeys ?? this.stored } : { response: code },
        };
        break;
      }
      case Req.Z_ATTEST_REQ_TYPE_STORE_KEYS: {
        const code = this.storeCodes.shift() ?? KeysCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_SUCCESS;
        if (code === KeysCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_SUCCESS) this.stored = r.storage_keys?.keys ?? [];
        resp = { respType: attest.ZAttestRespType.Z_ATTEST_RESP_TYPE_STORE_KEYS, storage_keys_resp: { response: code } };
        break;
      }
      default:
        return undefined;
    }
    return { status: 201, headers: {}, body: this.c.seal(Msg.ZAttestResponse.encode(resp)) };
  }
}

function openPayload(c: FakeController, req: TransportRequest): Uint8Array {
  return payloadOf({ controller: c } as Rig, req);
}

interface TpmRig extends Rig {
  script: AttestScript;
}

function tpmRig(tampered = false): TpmRig {
  const { pki, identity } = fixtures();
  const time = new FakeTime();
  const controller = new FakeController(time, pki, identity);
  const script = new AttestScript(controller);
  controller.hook = (req) => script.answer(req);
  const findings: Rig['findings'] = [];
  const lifecycle: Rig['lifecycle'] = [];
  const opts: DeviceOptions = {
    index: 0,
    identity,
    behaviour: { ...BEHAVIOUR, firmwareVersion: FW },
    rootCertPem: pki.root.certPem,
    clock: time,
    scheduler: time,
    transport: controller,
    rng: SeededRng.create(7, 0, 'device'),
    onFinding: (f) => findings.push(f),
    onStateChange: (_from, to) => lifecycle.push(to),
    tpm: { ...tpmSpec, tampered },
  };
  return { time, controller, device: new VirtualDevice(opts), findings, lifecycle, script };
}

const attests = (r: Rig) => r.controller.of('attest').map((q) => ({ at: q.at, body: q.body!, req: Msg.ZAttestReq.decode(payloadOf(r, q)) }));
const ofType = (r: Rig, t: attest.ZAttestReqType) => attests(r).filter((x) => x.req.reqType === t);

async function runUntil(r: Rig, pred: () => boolean, within = 120_000): Promise<void> {
  const end = r.time.now() + within;
  while (r.time.now() < end) {
    if (pred()) return;
    await r.time.advance(250);
  }
  throw new Error(`condition not reached within ${within} ms; attest requests: ${attests(r).map((x) => x.req.reqType).join(' ')}`);
}

describe('TPM device: certificates, quote and escrow', () => {
  it('posts ECDH, attestation and EK certificates, sends a real quote, escrows its volume key and completes', async () => {
    const r = tpmRig();
    r.device.start();
    await runUntil(r, () => r.device.attestationState === A.ATTESTATION_STATE_COMPLETE);
    const id = r.controller.identity;

    // Certificates (§5.3): 13, 11 and 12 with the EK's TPM2B_PUBLIC, hashes over the PEM bytes.
    const sent = ofType(r, Req.ATTEST_REQ_CERT)[0]!.req.certs!;
    expect(sent.map((c) => c.type)).toEqual([13, 11, 12]);
    for (const c of sent) expect(Buffer.from(c.certHash!)).toEqual(createHash('sha256').update(c.cert!).digest().subarray(0, 16));
    const ek = sent[2]!;
    expect(ek.meta_data_items).toHaveLength(1);
    expect(ek.meta_data_items![0]!.type).toBe(certs.ZCertMetaDataType.Z_CERT_META_DATA_TYPE_TPM2_PUBLIC);
    expect(Buffer.from(ek.meta_data_items![0]!.meta_data!)).toEqual(Buffer.from(tpmSpec.ekPublicArea));
    const deviceCert = new X509Certificate(id.deviceCertPem);
    const ekCert = new X509Certificate(Buffer.from(ek.cert!));
    expect(ekCert.verify(deviceCert.publicKey)).toBe(true);
    expect(ekCert.subject).toContain('CN=Device Endorsement Key certificate');
    expect(ekCert.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);

    // The quote: a TPMS_ATTEST over the nonce, a DER signature by the certified attestation key,
    // PCR 0–23, EVE and firmware versions, and a gzip'd log that replays to the PCRs.
    const nonce = Buffer.alloc(16, 0x41);
    const q = ofType(r, Req.ATTEST_REQ_QUOTE)[0]!.req.quote!;
    expect(q.signature![0]).toBe(0x30);
    expect(q.pcr_values!.map((p) => p.index)).toEqual(Array.from({ length: 24 }, (_, i) => i));
    expect(q.pcr_values!.every((p) => p.hash_algo === attest.TpmHashAlgo.TPM_HASH_ALGO_SHA256 && p.value!.length === 32)).toBe(true);
    expect(q.versions).toEqual([
      { version_type: attest.AttestVersionType.ATTEST_VERSION_TYPE_EVE, version: BEHAVIOUR.eveVersion },
      { version_type: attest.AttestVersionType.ATTEST_VERSION_TYPE_FIRMWARE, version: FW },
    ]);
    const check = checkQuote({
      attest: q.attestData!,
      signature: q.signature!,
      publicKey: new X509Certificate(id.attestCertPem).publicKey,
      nonce,
      pcrValues: new Map(q.pcr_values!.map((p) => [p.index ?? 0, p.value!])),
      eventLog: gunzipEventLog(q.tpm_binary_event_log!),
    });
    expect(check.outcome).toBe('ok');

    // Escrow (step 4): STORE_KEYS with the token and one VSK whose key is an AttestVolumeKeyData.
    const esc = ofType(r, Req.Z_ATTEST_REQ_TYPE_STORE_KEYS);
    expect(esc).toHaveLength(1);
    expect(Buffer.from(esc[0]!.req.storage_keys!.integrity_token!)).toEqual(Buffer.from(r.controller.token));
    // The device keeps its own copy of the token, not a view that keeps the whole quote answer
    // alive: a view into the thread's counter slab (64 KiB blocks shared by every device).
    const kept = (r.device as unknown as { attestation: { token: Uint8Array } }).attestation.token;
    expect(kept.byteLength).toBe(r.controller.token.byteLength);
    expect(kept.buffer.byteLength).toBe(64 * 1024);
    expect(Buffer.from(kept)).toEqual(Buffer.from(r.controller.token));
    const vsk = esc[0]!.req.storage_keys!.keys!;
    expect(vsk.map((k) => k.key_type)).toEqual([attest.AttestVolumeKeyType.ATTEST_VOLUME_KEY_TYPE_VSK]);
    const data = Msg.AttestVolumeKeyData.decode(vsk[0]!.key!);
    expect(data.encrypted_key).toHaveLength(32);
    expect(data.digest_sha256).toHaveLength(32);
    expect(data.version).toBe(attest.AttestVolumeKeyVersion.ATTEST_VOLUME_KEY_VERSION_V1);

    // Info: HSM enabled, attestation COMPLETE; config then carries the token (next poll within 60 s).
    await r.time.advance(61_000);
    expect(r.device.attestationState).toBe(A.ATTESTATION_STATE_COMPLETE);
    expect(ofType(r, Req.ATTEST_REQ_NONCE)).toHaveLength(1);
    const dinfo = r.controller.infos().filter((m) => m.dinfo).pop()!.dinfo!;
    expect(dinfo.HSMStatus).toBe(info.HwSecurityModuleStatus.ENABLED);
    expect(dinfo.attestation_info!.state).toBe(A.ATTESTATION_STATE_COMPLETE);
    const cfg = r.controller.of('config').map((c) => Msg.ConfigRequest.decode(payloadOf(r, c)));
    expect(Buffer.from(cfg[cfg.length - 1]!.integrity_token!)).toEqual(Buffer.from(r.controller.token));
    expect(r.findings).toEqual([]);
  });

  it('a tampered boot quotes a different PCR 9 whose log still replays', async () => {
    const clean = tpmRig();
    const bad = tpmRig(true);
    for (const r of [clean, bad]) {
      r.device.start();
      await runUntil(r, () => ofType(r, Req.ATTEST_REQ_QUOTE).length > 0);
    }
    const pcrs = (r: Rig) => ofType(r, Req.ATTEST_REQ_QUOTE)[0]!.req.quote!.pcr_values!.map((p) => Buffer.from(p.value!).toString('hex'));
    const a = pcrs(clean);
    const b = pcrs(bad);
    expect(a.map((v, i) => (v === b[i] ? -1 : i)).filter((i) => i >= 0)).toEqual([9]);
  });
});

describe('TPM device: answers to the quote and to STORE_KEYS', () => {
  for (const [name, code] of [
    ['NONCE_MISMATCH', Code.Z_ATTEST_RESPONSE_CODE_NONCE_MISMATCH],
    ['NO_CERT_FOUND', Code.Z_ATTEST_RESPONSE_CODE_NO_CERT_FOUND],
    ['QUOTE_FAILED', Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED],
  ] as const) {
    it(`${name}: RESTART_WAIT, a new nonce 15 s later, a quote over it, then COMPLETE`, async () => {
      const r = tpmRig();
      r.script.quoteCodes.push(code);
      r.device.start();
      await runUntil(r, () => r.device.attestationState === A.ATTESTATION_STATE_RESTART_WAIT);
      const firstQuote = ofType(r, Req.ATTEST_REQ_QUOTE)[0]!;
      await runUntil(r, () => r.device.attestationState === A.ATTESTATION_STATE_COMPLETE);
      const nonces = ofType(r, Req.ATTEST_REQ_NONCE);
      expect(nonces).toHaveLength(2);
      expect(nonces[1]!.at - firstQuote.at).toBe(15_000);
      const quotes = ofType(r, Req.ATTEST_REQ_QUOTE);
      expect(quotes).toHaveLength(2);
      const extra = (i: number) => Buffer.from(parseQuoteAttest(quotes[i]!.req.quote!.attestData!).extraData).toString();
      expect(extra(0)).toBe('A'.repeat(16));
      expect(extra(1)).toBe('B'.repeat(16));
      // The certificates are not posted again (EVE does not resend them on NO_CERT_FOUND).
      expect(ofType(r, Req.ATTEST_REQ_CERT)).toHaveLength(1);
      const errs = r.controller.infos().map((m) => m.dinfo?.attestation_info?.error?.description).filter(Boolean);
      expect(errs.some((e) => /quote refused/.test(e!))).toBe(true);
    });
  }

  it('INVALID: the same quote, same nonce, 15 s later', async () => {
    const r = tpmRig();
    r.script.quoteCodes.push(Code.Z_ATTEST_RESPONSE_CODE_INVALID);
    r.device.start();
    await runUntil(r, () => r.device.attestationState === A.ATTESTATION_STATE_COMPLETE);
    const quotes = ofType(r, Req.ATTEST_REQ_QUOTE);
    expect(quotes).toHaveLength(2);
    expect(quotes[1]!.at - quotes[0]!.at).toBe(15_000);
    expect(Buffer.from(quotes[1]!.req.quote!.attestData!)).toEqual(Buffer.from(quotes[0]!.req.quote!.attestData!));
    expect(ofType(r, Req.ATTEST_REQ_NONCE)).toHaveLength(1);
  });

  it('ITOKEN_MISMATCH on STORE_KEYS restarts attestation; INVALID retries the escrow alone', async () => {
    const r = tpmRig();
    r.script.storeCodes.push(KeysCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_ITOKEN_MISMATCH, KeysCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_INVALID);
    r.device.start();
    await runUntil(r, () => r.device.attestationState === A.ATTESTATION_STATE_COMPLETE);
    const nonces = ofType(r, Req.ATTEST_REQ_NONCE);
    const stores = ofType(r, Req.Z_ATTEST_REQ_TYPE_STORE_KEYS);
    expect(nonces).toHaveLength(2); // restarted once, after ITOKEN_MISMATCH
    expect(nonces[1]!.at - stores[0]!.at).toBe(15_000);
    expect(stores).toHaveLength(3); // mismatch, INVALID, success
    expect(stores[2]!.at - stores[1]!.at).toBe(15_000);
    expect(ofType(r, Req.ATTEST_REQ_QUOTE)).toHaveLength(2);
  });

  it('a nonce outside 12–32 bytes gets an empty quote (and a finding)', async () => {
    const r = tpmRig();
    r.script.nonceBytes = 8;
    r.device.start();
    await runUntil(r, () => ofType(r, Req.ATTEST_REQ_QUOTE).length > 0);
    const q = ofType(r, Req.ATTEST_REQ_QUOTE)[0]!.req.quote!;
    expect(q.attestData ?? new Uint8Array(0)).toHaveLength(0);
    expect(q.pcr_values ?? []).toHaveLength(0);
    expect(r.findings.map((f) => f.detail).join()).toMatch(/nonce of 8 bytes/);
  });
});

describe('TPM device: reboot', () => {
  it('attests again after a reboot with a TPM reset count one higher, and checks the key it gets back', async () => {
    const r = tpmRig();
    r.device.start();
    await runUntil(r, () => r.device.attestationState === A.ATTESTATION_STATE_COMPLETE);
    r.device.rebootNow();
    expect(r.device.attestationState).toBe(A.ATTESTATION_STATE_UNSPECIFIED);
    await runUntil(r, () => ofType(r, Req.ATTEST_REQ_QUOTE).length === 2);
    await runUntil(r, () => r.device.attestationState === A.ATTESTATION_STATE_COMPLETE);
    const [q1, q2] = ofType(r, Req.ATTEST_REQ_QUOTE).map((x) => parseQuoteAttest(x.req.quote!.attestData!));
    expect((q2!.clockInfo.resetCount - q1!.clockInfo.resetCount) >>> 0).toBe(1);
    expect(q2!.clockInfo.clock).toBeGreaterThan(q1!.clockInfo.clock);
    // After the reboot the same certificates go out again (byte-identical: a controller keeps them).
    const posts = ofType(r, Req.ATTEST_REQ_CERT);
    expect(posts).toHaveLength(2);
    expect(Buffer.from(Msg.ZAttestReq.encode(posts[1]!.req))).toEqual(Buffer.from(Msg.ZAttestReq.encode(posts[0]!.req)));
    // The escrowed key came back with the second SUCCESS and unwrapped to the device's key.
    expect(r.findings).toEqual([]);

    // A controller handing back someone else's key is a finding.
    r.script.returnKeys = [{ key_type: attest.AttestVolumeKeyType.ATTEST_VOLUME_KEY_TYPE_VSK, key: Msg.AttestVolumeKeyData.encode({ encrypted_key: new Uint8Array(32), digest_sha256: new Uint8Array(32) }) }];
    r.device.rebootNow();
    await runUntil(r, () => ofType(r, Req.ATTEST_REQ_QUOTE).length === 3);
    await r.time.advance(1_000);
    expect(r.findings.map((f) => f.detail)).toEqual(['returned volume key does not unwrap to the key this device escrowed']);
  });
});

describe('TPM device: tpm-reset fault', () => {
  it('PCRs back to their power-on values and reset counters to 0; the device attests again with the reset TPM', async () => {
    const r = tpmRig();
    r.device.start();
    await runUntil(r, () => r.device.attestationState === A.ATTESTATION_STATE_COMPLETE);
    r.device.rebootNow(); // resetCount 1 from here
    await runUntil(r, () => ofType(r, Req.ATTEST_REQ_QUOTE).length === 2 && r.device.attestationState === A.ATTESTATION_STATE_COMPLETE);
    expect(r.device.tpmReset()).toBe(true);
    await runUntil(r, () => ofType(r, Req.ATTEST_REQ_QUOTE).length === 3);
    const quotes = ofType(r, Req.ATTEST_REQ_QUOTE).map((x) => x.req.quote!);
    const [c1, c2, c3] = quotes.map((q) => parseQuoteAttest(q.attestData!).clockInfo);
    expect((c2!.resetCount - c1!.resetCount) >>> 0).toBe(1);
    expect(c3!.resetCount).toBe(c1!.resetCount); // the counter went back to where a new TPM starts
    expect(c3!.restartCount).toBe(c1!.restartCount);
    expect(c3!.clock).toBeGreaterThan(c2!.clock); // the TPM clock keeps running
    const pcr = (q: (typeof quotes)[number], i: number) => Buffer.from(q.pcr_values!.find((p) => p.index === i)!.value!).toString('hex');
    expect(pcr(quotes[1]!, 0)).not.toBe('00'.repeat(32)); // measured at boot
    expect(pcr(quotes[2]!, 0)).toBe('00'.repeat(32));
    expect(pcr(quotes[2]!, 9)).toBe('00'.repeat(32));
    expect(pcr(quotes[2]!, 17)).toBe('ff'.repeat(32)); // DRTM PCRs start at all ones
  });

  it('a device without a TPM is not touched', async () => {
    const r = tpmRig();
    const plain = new VirtualDevice({ ...r.device.opts, tpm: undefined });
    plain.start();
    expect(plain.tpmReset()).toBe(false);
  });
});

describe('quote size limits (EVE drops the event log)', () => {
  function attestation(): Attestation {
    const { identity } = fixtures();
    const time = new FakeTime();
    const found: string[] = [];
    const host = {
      opts: { index: 0, identity, behaviour: { ...BEHAVIOUR, firmwareVersion: FW }, clock: time, scheduler: time, tpm: tpmSpec } as unknown as DeviceOptions,
      finding: (_e: string, _k: string, d: string) => found.push(d),
    } as unknown as AttestationHost;
    return new Attestation(host);
  }
  const nonce = new Uint8Array(20).fill(1);
  const logOf = (bytes: Uint8Array) => Msg.ZAttestReq.decode(bytes).quote!.tpm_binary_event_log ?? new Uint8Array(0);

  it('keeps the log of a normal boot', () => {
    const a = attestation();
    const req = a.encodeQuoteRequest(nonce, T0);
    expect(logOf(req).length).toBeGreaterThan(0);
    expect(a.eventLogDropped).toBe(false);
  });

  it('drops a raw log over 126976 bytes', () => {
    const a = attestation();
    a.softTpm!.extend(14, new Uint8Array(32).fill(3), { eventType: EV.IPL, data: new Uint8Array(127_000).fill(0x61) });
    const req = a.encodeQuoteRequest(nonce, T0);
    expect(logOf(req)).toHaveLength(0);
    expect(a.eventLogDropped).toBe(true);
    expect(Msg.ZAttestReq.decode(req).quote!.pcr_values).toHaveLength(24);
  });

  it('drops a log whose request would exceed 63488 bytes, keeps one just under', () => {
    const a = attestation();
    // Incompressible data: the gzip is about as big as the raw log (which is under 126976 bytes).
    const noise = new Uint8Array(createHash('sha512').update('x').digest().length * 1100);
    for (let i = 0; i < noise.length; i += 64) noise.set(createHash('sha512').update(String(i)).digest(), i);
    a.softTpm!.extend(14, new Uint8Array(32).fill(4), { eventType: EV.IPL, data: noise });
    const req = a.encodeQuoteRequest(nonce, T0);
    expect(a.eventLogDropped).toBe(true);
    expect(req.length).toBeLessThanOrEqual(EVE_MAX_ATTEST_REQ);
    const b = attestation();
    b.softTpm!.extend(14, new Uint8Array(32).fill(4), { eventType: EV.IPL, data: noise.subarray(0, 50_000) });
    const kept = b.encodeQuoteRequest(nonce, T0);
    expect(b.eventLogDropped).toBe(false);
    expect(kept.length).toBeGreaterThan(50_000);
    expect(kept.length).toBeLessThanOrEqual(EVE_MAX_ATTEST_REQ);
  });
});
