// The embedded controller's quote verification, one failure at a time: quotes made by the software
// TPM with the device's real attestation key, sent through the controller's request handling
// (ControllerCore.handle: envelopes, registry, counters) without sockets; outcomes read back
// through the admin API over loopback HTTP.

import { sign } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attest, certs, common } from '../src/gen/eve-types.js';
import { createDeviceIdentity, type DeviceIdentityMaterial } from '../src/identity/device-identity.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import { generateP256 } from '../src/identity/keys.js';
import { zcertHash16 } from '../src/protocol/cert-hash.js';
import { openUnverified, sealRequest } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import type { GroupSpec } from '../src/scenario/scenario-types.js';
import { ControllerAdminClient } from '../src/servers/controller/controller-admin-client.js';
import { createControllerServer, type ControllerServer } from '../src/servers/controller/controller-server.js';
import { gzipEventLog } from '../src/tpm/event-log-gzip.js';
import { measuredBoot } from '../src/tpm/measured-boot.js';
import { SoftTpm } from '../src/tpm/soft-tpm.js';
import { testGroup } from './fixtures/test-group.js';

const NOW = Date.now();
const SEED = 'attestation-controller-test';
const EVE = '14.5.2-kvm-amd64';
const FW = 'EDK II-1.16-02/02/2024';
const P = '/api/v2/edgedevice';
const Code = attest.ZAttestResponseCode;
const Req = attest.ZAttestReqType;

const GROUP: GroupSpec = testGroup('g', 4, {
  eveVersion: EVE,
  preRegistered: true,
  hardware: { ncpu: 1, memoryMB: 1024, storageMB: 1024, model: 'm', manufacturer: 'x' },
});

function zcert(pem: string, type: number, mutable = false): certs.ZCert {
  const bytes = new Uint8Array(Buffer.from(pem));
  return {
    hashAlgo: common.HashAlgorithm.HASH_ALGORITHM_SHA256_16BYTES,
    certHash: zcertHash16(bytes),
    type,
    cert: bytes,
    ...(mutable ? { attributes: { is_mutable: true } } : {}),
  };
}

/** A TPM quote as EVE's tpmmgr sends it (log: gzip of the TPM's own log unless given). */
function quoteOf(tpm: SoftTpm, nonce: Uint8Array, over: Partial<attest.ZAttestQuote> = {}): attest.ZAttestQuote {
  const q = tpm.quote(nonce, NOW);
  return {
    attestData: q.attest,
    signature: q.signatureDer,
    pcr_values: tpm.readAllPcrs().map((value, index) => ({ index, hash_algo: attest.TpmHashAlgo.TPM_HASH_ALGO_SHA256, value })),
    versions: [
      { version_type: attest.AttestVersionType.ATTEST_VERSION_TYPE_EVE, version: EVE },
      { version_type: attest.AttestVersionType.ATTEST_VERSION_TYPE_FIRMWARE, version: FW },
    ],
    tpm_binary_event_log: tpm.eventLogGzip(),
    ...over,
  };
}

describe('embedded controller: TPM quote verification', () => {
  let stateDir: string;
  let server: ControllerServer;
  let admin: ControllerAdminClient;
  const devs: DeviceIdentityMaterial[] = [];
  const uuids: string[] = [];

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'evesim-attest-ctl-'));
    const ca = createFleetCa(SEED, NOW);
    server = await createControllerServer({ stateDir: join(stateDir, 'pki'), onboardingCaPems: [ca.certPem] });
    admin = new ControllerAdminClient(server.adminUrl);
    for (let i = 0; i < 4; i++) devs.push(createDeviceIdentity(ca, SEED, i, NOW).identity);
    setFleet();
    for (const d of devs) uuids.push(server.core.registry.find(d.serial)!.uuid);
  });

  afterAll(async () => {
    await admin.close();
    await server.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  function setFleet(attestation?: { templates: { eveVersion: string; firmwareVersion: string; pcrs: Record<string, string> | 'reference' }[] }): void {
    server.core.registry.setFleet({
      groups: [GROUP],
      devices: devs.map((d) => ({ serial: d.serial, group: 'g', deviceCertPem: d.deviceCertPem })),
      ...(attestation ? { attestation } : {}),
    });
  }

  /** One attest request of device i through the controller; status and decoded answer. */
  function send(i: number, req: attest.ZAttestReq): { status: number; resp?: attest.ZAttestResponse } {
    const d = devs[i]!;
    const body = sealRequest(Msg.ZAttestReq.encode(req), { key: d.deviceKey, certDerHash: d.deviceCertHash });
    const reply = server.core.handle('POST', `${P}/id/${uuids[i]}/attest`, body);
    if (reply.status !== 201) return { status: reply.status };
    return { status: reply.status, resp: Msg.ZAttestResponse.decode(openUnverified(reply.body!).payload) };
  }
  const nonce = (i: number): Uint8Array => send(i, { reqType: Req.ATTEST_REQ_NONCE }).resp!.nonce!.nonce!;
  const quote = (i: number, q: attest.ZAttestQuote) => send(i, { reqType: Req.ATTEST_REQ_QUOTE, quote: q }).resp!.quoteResp!;
  const lastReason = (i: number): string | undefined => server.core.registry.find(devs[i]!.serial)!.attest?.lastQuoteReasonKey;
  const tpmOf = (i: number, tampered = false) =>
    new SoftTpm({ quoteKey: devs[i]!.attestKey, boot: { eveVersion: EVE, firmwareVersion: FW, tampered }, powerOnAt: NOW });
  const postCerts = (i: number, list: certs.ZCert[]) => send(i, { reqType: Req.ATTEST_REQ_CERT, certs: list });

  it('answers NO_CERT_FOUND before the attestation certificate is posted, then verifies a good quote', () => {
    const tpm = tpmOf(0);
    expect(quote(0, quoteOf(tpm, nonce(0))).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_NO_CERT_FOUND);
    expect(postCerts(0, [zcert(devs[0]!.ecdhCertPem, 13), zcert(devs[0]!.attestCertPem, 11)]).status).toBe(201);
    const ok = quote(0, quoteOf(tpm, nonce(0)));
    expect(ok.response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
    expect(ok.integrity_token?.length).toBeGreaterThan(0);
    expect(ok.keys ?? []).toEqual([]);
    expect(lastReason(0)).toBe('ok');
  });

  it('escrows volume keys with the token, refuses a wrong token, and returns the keys on the next success', () => {
    const tpm = tpmOf(0);
    const token = quote(0, quoteOf(tpm, nonce(0))).integrity_token!;
    const key: attest.AttestVolumeKey = { key_type: attest.AttestVolumeKeyType.ATTEST_VOLUME_KEY_TYPE_VSK, key: new Uint8Array([1, 2, 3]) };
    const store = (t: Uint8Array) =>
      send(0, { reqType: Req.Z_ATTEST_REQ_TYPE_STORE_KEYS, storage_keys: { integrity_token: t, keys: [key] } }).resp!.storage_keys_resp!.response;
    expect(store(new Uint8Array(32))).toBe(attest.AttestStorageKeysResponseCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_ITOKEN_MISMATCH);
    expect(store(token)).toBe(attest.AttestStorageKeysResponseCode.ATTEST_STORAGE_KEYS_RESPONSE_CODE_SUCCESS);
    const again = quote(0, quoteOf(tpm, nonce(0)));
    expect(again.response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
    expect(Buffer.from(again.integrity_token!).equals(Buffer.from(token))).toBe(true); // one token per device
    expect(again.keys?.map((k) => ({ key_type: k.key_type, key: Buffer.from(k.key!) }))).toEqual([{ key_type: key.key_type, key: Buffer.from(key.key!) }]);
  });

  it('NONCE_MISMATCH for a quote over another nonce and for a nonce used twice', () => {
    const tpm = tpmOf(0);
    nonce(0);
    expect(quote(0, quoteOf(tpm, new Uint8Array(Buffer.from('not-the-nonce-issued')))).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_NONCE_MISMATCH);
    expect(lastReason(0)).toBe('nonce-mismatch');
    const n = nonce(0);
    const q = quoteOf(tpm, n);
    expect(quote(0, q).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
    expect(quote(0, q).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_NONCE_MISMATCH); // replayed
    expect(lastReason(0)).toBe('no-nonce');
  });

  it('QUOTE_FAILED for a bad signature, a changed PCR, a log that does not replay, bad logs and bad banks', () => {
    const tpm = tpmOf(0);
    // Signed by a key the attestation certificate does not certify.
    const other = new SoftTpm({ quoteKey: generateP256().privateKey, boot: { eveVersion: EVE, firmwareVersion: FW }, powerOnAt: NOW });
    let n = nonce(0);
    expect(quote(0, { ...quoteOf(tpm, n), signature: quoteOf(other, n).signature }).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);
    expect(lastReason(0)).toBe('bad-signature');
    // A reported PCR that is not what was quoted.
    n = nonce(0);
    const q = quoteOf(tpm, n);
    q.pcr_values![3] = { ...q.pcr_values![3]!, value: new Uint8Array(32).fill(7) };
    expect(quote(0, q).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);
    expect(lastReason(0)).toBe('pcr-digest-mismatch');
    // The log of a tampered boot with the PCRs of a clean one: the digest matches, the log does not.
    n = nonce(0);
    const tamperedLog = measuredBoot({ eveVersion: EVE, firmwareVersion: FW, tampered: true }).logGzip();
    expect(quote(0, quoteOf(tpm, n, { tpm_binary_event_log: tamperedLog })).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);
    expect(lastReason(0)).toBe('event-log-mismatch');
    // Not gzip.
    n = nonce(0);
    expect(quote(0, quoteOf(tpm, n, { tpm_binary_event_log: new Uint8Array([1, 2, 3, 4]) })).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);
    expect(lastReason(0)).toBe('event-log-unreadable');
    // A PCR value from another bank.
    n = nonce(0);
    const sha1 = quoteOf(tpm, n);
    sha1.pcr_values![0] = { ...sha1.pcr_values![0]!, hash_algo: attest.TpmHashAlgo.TPM_HASH_ALGO_SHA1 };
    expect(quote(0, sha1).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);
    expect(lastReason(0)).toBe('pcr-not-sha256');
    // Signed correctly but not a quote structure (wrong magic).
    n = nonce(0);
    const good = tpm.quote(n, NOW).attest;
    const bad = new Uint8Array(good);
    bad[0] = 0;
    const sig = sign('sha256', bad, devs[0]!.attestKey);
    expect(quote(0, quoteOf(tpm, n, { attestData: bad, signature: sig })).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);
    expect(lastReason(0)).toBe('not-a-quote');
    // Without the log the clean quote still passes: the log is optional.
    n = nonce(0);
    const noLog = quoteOf(tpm, n);
    delete noLog.tpm_binary_event_log;
    expect(quote(0, noLog).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
  });

  it('QUOTE_FAILED when the attestation certificate was not issued by the registered device key', () => {
    // Device 1 posts device 2's attestation certificate (valid, but signed by device 2's key) and
    // quotes with device 2's attestation key: the signature verifies, the chain does not.
    expect(postCerts(1, [zcert(devs[2]!.attestCertPem, 11)]).status).toBe(201);
    const tpm = new SoftTpm({ quoteKey: devs[2]!.attestKey, boot: { eveVersion: EVE, firmwareVersion: FW }, powerOnAt: NOW });
    expect(quote(1, quoteOf(tpm, nonce(1))).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);
    expect(lastReason(1)).toBe('cert-not-from-device');
    // Replacing it is refused: the stored certificate is not mutable (403, nothing changes).
    expect(postCerts(1, [zcert(devs[1]!.attestCertPem, 11)]).status).toBe(403);
    expect(quote(1, quoteOf(tpm, nonce(1))).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);
  });

  it('a mutable certificate may be replaced', () => {
    expect(postCerts(3, [zcert(devs[2]!.attestCertPem, 11, true)]).status).toBe(201);
    expect(postCerts(3, [zcert(devs[3]!.attestCertPem, 11)]).status).toBe(201);
    expect(quote(3, quoteOf(tpmOf(3), nonce(3))).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
  });

  it('holds quotes to PCR templates: reference values of the build, explicit values, unknown builds', () => {
    postCerts(2, [zcert(devs[2]!.attestCertPem, 11)]);
    setFleet({ templates: [{ eveVersion: EVE, firmwareVersion: FW, pcrs: 'reference' }] });
    try {
      expect(quote(2, quoteOf(tpmOf(2), nonce(2))).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
      // A tampered kernel: its log replays to its PCRs, but PCR 9 is not the reference.
      expect(quote(2, quoteOf(tpmOf(2, true), nonce(2))).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);
      expect(lastReason(2)).toBe('template-mismatch');
      expect(server.core.registry.find(devs[2]!.serial)!.attest!.lastQuoteReason).toMatch(/^PCR 9 is /);
      // Another build: no template.
      const other = quoteOf(tpmOf(2), nonce(2));
      other.versions = [{ version_type: attest.AttestVersionType.ATTEST_VERSION_TYPE_EVE, version: '13.0.0-kvm-amd64' }];
      expect(quote(2, other).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);
      expect(lastReason(2)).toBe('no-template');
      // Explicit values with wildcards: only the listed PCR counts.
      const pcr9 = Buffer.from(measuredBoot({ eveVersion: EVE, firmwareVersion: FW, tampered: true }).pcrs.subarray(9 * 32, 10 * 32)).toString('hex');
      setFleet({ templates: [{ eveVersion: '*', firmwareVersion: '*', pcrs: { 9: pcr9 } }] });
      expect(quote(2, quoteOf(tpmOf(2, true), nonce(2))).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
      expect(quote(2, quoteOf(tpmOf(2), nonce(2))).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);
      // A quote without PCR values is "TPM disabled": templates do not apply.
      nonce(2);
      expect(quote(2, { versions: [{ version_type: 1, version: EVE }] }).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
    } finally {
      setFleet();
    }
  });

  it('counts outcomes in GET /admin/stats: by code, by reason, devices by last answer, TPM resets', async () => {
    const tpm = tpmOf(3);
    expect(quote(3, quoteOf(tpm, nonce(3))).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
    tpm.reboot(NOW + 1000);
    expect(quote(3, quoteOf(tpm, nonce(3))).response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
    const stats = (await admin.stats()) as { attestation: import('../src/servers/controller/attest-outcomes.js').AttestOutcomesJson };
    const a = stats.attestation;
    // Every answer given in this file so far, from the per-test expectations above.
    expect(a.byCode.SUCCESS).toBeGreaterThanOrEqual(10);
    expect(a.byCode.NONCE_MISMATCH).toBe(2);
    expect(a.byCode.NO_CERT_FOUND).toBe(1);
    expect(a.tpmDisabled).toBe(1);
    expect(a.storeKeys).toEqual({ ITOKEN_MISMATCH: 1, SUCCESS: 1 });
    expect(a.failureReasons).toMatchObject({
      'bad-signature': 1,
      'pcr-digest-mismatch': 1,
      'event-log-mismatch': 1,
      'event-log-unreadable': 1,
      'pcr-not-sha256': 1,
      'not-a-quote': 1,
      'cert-not-from-device': 2,
      'template-mismatch': 2,
      'no-template': 1,
      'nonce-mismatch': 1,
      'no-nonce': 1,
      'no-attest-cert': 1,
    });
    // Devices 0 and 3 ended on SUCCESS, device 1 on QUOTE_FAILED, device 2 on "TPM disabled".
    expect(a.devices.byLastCode).toEqual({ QUOTE_FAILED: 1, SUCCESS: 3 });
    expect(a.devices.tpmDisabled).toBe(1);
    expect(a.devices.tpmReset).toBe(1); // device 3: resetCount changed between two verified quotes
  });
});

describe("quoteVerifier 'adam'", () => {
  it('skips the chain check and answers INVALID for a bad signature, as Adam does', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'evesim-attest-adam-'));
    const ca = createFleetCa(SEED, NOW);
    const server = await createControllerServer({ stateDir, onboardingCaPems: [ca.certPem], quoteVerifier: 'adam' });
    try {
      const a = createDeviceIdentity(ca, SEED, 10, NOW).identity;
      const b = createDeviceIdentity(ca, SEED, 11, NOW).identity;
      server.core.registry.setFleet({ groups: [GROUP], devices: [{ serial: a.serial, group: 'g', deviceCertPem: a.deviceCertPem }] });
      const uuid = server.core.registry.find(a.serial)!.uuid;
      const send = (req: attest.ZAttestReq) => {
        const reply = server.core.handle('POST', `${P}/id/${uuid}/attest`, sealRequest(Msg.ZAttestReq.encode(req), { key: a.deviceKey, certDerHash: a.deviceCertHash }));
        return Msg.ZAttestResponse.decode(openUnverified(reply.body!).payload);
      };
      send({ reqType: Req.ATTEST_REQ_CERT, certs: [zcert(b.attestCertPem, 11)] });
      const tpm = new SoftTpm({ quoteKey: b.attestKey, boot: { eveVersion: EVE, firmwareVersion: FW }, powerOnAt: NOW });
      let n = send({ reqType: Req.ATTEST_REQ_NONCE }).nonce!.nonce!;
      expect(send({ reqType: Req.ATTEST_REQ_QUOTE, quote: quoteOf(tpm, n) }).quoteResp!.response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
      n = send({ reqType: Req.ATTEST_REQ_NONCE }).nonce!.nonce!;
      const q = quoteOf(tpm, n, { signature: new Uint8Array(64) });
      expect(send({ reqType: Req.ATTEST_REQ_QUOTE, quote: q }).quoteResp!.response).toBe(Code.Z_ATTEST_RESPONSE_CODE_INVALID);
      // Adam does not read the binary log.
      n = send({ reqType: Req.ATTEST_REQ_NONCE }).nonce!.nonce!;
      const log = gzipEventLog(new Uint8Array(100));
      expect(send({ reqType: Req.ATTEST_REQ_QUOTE, quote: quoteOf(tpm, n, { tpm_binary_event_log: log }) }).quoteResp!.response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
    } finally {
      await server.stop();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('refuses an unknown verifier mode', async () => {
    await expect(createControllerServer({ stateDir: '/nonexistent-evesim', quoteVerifier: 'lenient' as 'adam' })).rejects.toThrow(/quoteVerifier must be one of strict, adam/);
  });
});
