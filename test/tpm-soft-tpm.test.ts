// The software TPM: key public areas, quotes, clock and reset counter, measured boot per build,
// event logs that replay, the controller-side quote check, and the EK cache in the state directory.

import { createHash, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ByteWriter } from '../src/tpm/byte-writer.js';
import { EkStore } from '../src/tpm/ek-store.js';
import { parseEventLog } from '../src/tpm/event-log.js';
import { replayEventLog } from '../src/tpm/event-log-replay.js';
import { EV } from '../src/tpm/event-types.js';
import { gunzipEventLog, gzipEventLog } from '../src/tpm/event-log-gzip.js';
import { ekPublicFromModulus, publicKeyOf } from '../src/tpm/key-public-areas.js';
import { measuredBoot } from '../src/tpm/measured-boot.js';
import { pcrView } from '../src/tpm/pcr-bank.js';
import { pcrSelection } from '../src/tpm/pcr-selection.js';
import { checkQuote, type QuoteCheckInput } from '../src/tpm/quote-check.js';
import { SoftTpm } from '../src/tpm/soft-tpm.js';
import { parseQuoteAttest } from '../src/tpm/tpms-attest.js';
import { objectName, primaryQualifiedName } from '../src/tpm/tpm-name.js';
import { marshalTpm2bPublic, parseTpm2bPublic, type EccPublic, type RsaPublic } from '../src/tpm/tpm-public.js';
import { TPM_ALG_SHA1, TPM_RH_OWNER } from '../src/tpm/tpm-constants.js';
import { vectorPath } from './vectors-dir.js';

const BUILD = { eveVersion: '14.5.2-kvm-amd64', firmwareVersion: 'EDK II-1.16-02/02/2024' };
const T0 = 1_779_000_000_000;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const sha256 = (b: Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(b).digest());
const NONCE = new Uint8Array(Buffer.from('9c41f07be2d3', 'latin1'));

function newKey(): KeyObject {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
}

function pcrMap(tpm: SoftTpm): Map<number, Uint8Array> {
  return new Map(tpm.readAllPcrs().map((v, i) => [i, v]));
}

describe('quote key public area', () => {
  const key = newKey();
  const tpm = new SoftTpm({ quoteKey: key, boot: BUILD, powerOnAt: T0 });
  const area = tpm.quoteKeyPublicArea();

  it('has the layout of tpm-facts §3: 90 bytes, ECC P-256 ECDSA-SHA256 restricted signer, attributes 0x00050472', () => {
    expect(area.length).toBe(90);
    expect(hex(area.subarray(0, 2))).toBe('0058');
    expect(hex(area.subarray(2, 24))).toBe('0023' + '000b' + '00050472' + '0000' + '0010' + '0018000b' + '0003' + '0010' + '0020');
    expect(hex(area.subarray(56, 58))).toBe('0020');
    const p = parseTpm2bPublic(area).public as EccPublic;
    expect(p.objectAttributes).toBe(0x00050472);
    const jwk = createPublicKey(key).export({ format: 'jwk' });
    expect(Buffer.from(p.x).toString('base64url')).toBe(jwk.x);
    expect(Buffer.from(p.y).toString('base64url')).toBe(jwk.y);
    expect(publicKeyOf(p).equals(createPublicKey(key))).toBe(true);
  });

  it('signs quotes with the owner-hierarchy qualified name as qualifiedSigner', () => {
    const qn = primaryQualifiedName(TPM_RH_OWNER, objectName(parseTpm2bPublic(area).tpmtPublic));
    expect(hex(tpm.qualifiedSignerName())).toBe(hex(qn));
    expect(hex(parseQuoteAttest(tpm.quote(NONCE, T0).attest).qualifiedSigner)).toBe(hex(qn));
  });
});

describe('TPM2_Quote', () => {
  const key = newKey();
  const tpm = new SoftTpm({ quoteKey: key, boot: BUILD, powerOnAt: T0 });

  it('makes a 125-byte TPMS_ATTEST over SHA-256 PCR 0–15 with the nonce, signed over SHA-256(attest)', () => {
    const q = tpm.quote(NONCE, T0 + 1234);
    expect(q.attest.length).toBe(125);
    const a = parseQuoteAttest(q.attest);
    expect(a.magic).toBe(0xff544347);
    expect(a.type).toBe(0x8018);
    expect(hex(a.extraData)).toBe(hex(NONCE));
    expect(a.pcrSelect).toHaveLength(1);
    expect(hex(a.pcrSelect[0]!.bitmap)).toBe('ffff00');
    expect(a.pcrSelect[0]!.hash).toBe(0x000b);
    const pcrs = tpm.readAllPcrs();
    expect(hex(a.pcrDigest)).toBe(hex(sha256(Buffer.concat(pcrs.slice(0, 16)))));
    expect(a.clockInfo.clock).toBe(1234);
    expect(a.clockInfo.safe).toBe(true);
    const pub = createPublicKey(key);
    expect(verify('sha256', q.attest, { key: pub, dsaEncoding: 'der' }, q.signatureDer)).toBe(true);
    expect(verify('sha256', q.attest, { key: pub, dsaEncoding: 'ieee-p1363' }, q.signatureRs)).toBe(true);
    expect(q.signatureRs.length).toBe(64);
    expect(q.signatureDer[0]).toBe(0x30);
  });

  it('quotes another selection when asked, and refuses banks and PCRs it does not have', () => {
    const a = parseQuoteAttest(tpm.quote(NONCE, T0, [pcrSelection(0x000b, [0, 7, 23])]).attest);
    expect(a.pcrSelect[0]!.pcrs).toEqual([0, 7, 23]);
    expect(hex(a.pcrDigest)).toBe(hex(sha256(Buffer.concat([tpm.readPcr(0), tpm.readPcr(7), tpm.readPcr(23)]))));
    expect(() => tpm.quote(NONCE, T0, [pcrSelection(TPM_ALG_SHA1, [0])])).toThrow(/only the SHA-256 bank/);
    expect(() => tpm.quote(new Uint8Array(67), T0)).toThrow(/qualifyingData of 67 bytes/);
  });

  it('advances the clock while powered and counts resets on reboot (not obfuscated here)', () => {
    const t = new SoftTpm({ quoteKey: key, boot: BUILD, powerOnAt: T0, obfuscate: false, resetCount: 4, clock: 500 });
    const a1 = parseQuoteAttest(t.quote(NONCE, T0 + 10_000).attest);
    expect(a1.clockInfo).toEqual({ clock: 10_500, resetCount: 4, restartCount: 0, safe: true });
    expect(a1.firmwareVersion).toBe(0x2019102300163636n);
    t.reboot(T0 + 20_000);
    const a2 = parseQuoteAttest(t.quote(NONCE, T0 + 25_000).attest);
    expect(a2.clockInfo).toEqual({ clock: 25_500, resetCount: 5, restartCount: 0, safe: true });
  });

  it('carries a clock beyond 2^32 ms exactly, and rejects bad counters', () => {
    const t = new SoftTpm({ quoteKey: key, boot: BUILD, powerOnAt: T0, obfuscate: false, clock: 2 ** 40 + 5 });
    expect(parseQuoteAttest(t.quote(NONCE, T0 + 7).attest).clockInfo.clock).toBe(2 ** 40 + 12);
    expect(() => new SoftTpm({ quoteKey: key, boot: BUILD, powerOnAt: T0, resetCount: -1 })).toThrow(/resetCount must be a u32/);
    expect(() => new SoftTpm({ quoteKey: createPublicKey(key), boot: BUILD, powerOnAt: T0 })).toThrow(/private KeyObject/);
  });

  it('obfuscates resetCount, restartCount and firmwareVersion by a per-key constant (owner hierarchy), still +1 per reboot', () => {
    const t = new SoftTpm({ quoteKey: key, boot: BUILD, powerOnAt: T0 });
    const a1 = parseQuoteAttest(t.quote(NONCE, T0).attest);
    expect(a1.firmwareVersion).not.toBe(0x2019102300163636n);
    t.reboot(T0 + 1000);
    const a2 = parseQuoteAttest(t.quote(NONCE, T0 + 1000).attest);
    expect(a2.clockInfo.resetCount).toBe((a1.clockInfo.resetCount + 1) >>> 0);
    expect(a2.clockInfo.restartCount).toBe(a1.clockInfo.restartCount);
    expect(a2.firmwareVersion).toBe(a1.firmwareVersion);
    const other = new SoftTpm({ quoteKey: newKey(), boot: BUILD, powerOnAt: T0 });
    expect(parseQuoteAttest(other.quote(NONCE, T0).attest).firmwareVersion).not.toBe(a1.firmwareVersion);
  });
});

describe('measured boot', () => {
  it('gives every device of one build the same PCRs, with 17–22 at 0xFF', () => {
    const a = new SoftTpm({ quoteKey: newKey(), boot: BUILD, powerOnAt: T0 });
    const b = new SoftTpm({ quoteKey: newKey(), boot: { ...BUILD }, powerOnAt: T0 + 99 });
    expect(a.readAllPcrs().map(hex)).toEqual(b.readAllPcrs().map(hex));
    for (let i = 0; i < 24; i++) {
      const v = hex(a.readPcr(i));
      if (i <= 9) expect(v, `PCR ${i} is measured`).not.toMatch(/^(00)+$/);
      else if (i >= 17 && i <= 22) expect(v).toBe('ff'.repeat(32));
      else expect(v).toBe('00'.repeat(32));
    }
    expect(hex(a.readPcr(2))).toBe('3d458cfe55cc03ea1f443f1562beec8df51c75e14a9fcf9a7234a13f198e7969');
  });

  it('a tampered device differs in PCR 9 only; another EVE or firmware version changes its PCRs', () => {
    const good = measuredBoot(BUILD).pcrs;
    const bad = measuredBoot({ ...BUILD, tampered: true }).pcrs;
    const differing = (x: Uint8Array, y: Uint8Array): number[] =>
      Array.from({ length: 24 }, (_, i) => i).filter((i) => hex(pcrView(x, i)) !== hex(pcrView(y, i)));
    expect(differing(good, bad)).toEqual([9]);
    expect(differing(good, measuredBoot({ ...BUILD, eveVersion: '14.5.3-kvm-amd64' }).pcrs)).toEqual([4, 9]);
    expect(differing(good, measuredBoot({ ...BUILD, firmwareVersion: 'EDK II-1.17' }).pcrs)).toEqual([0]);
  });

  it('writes an event log that parses, replays to the PCRs and is shared by the build; gzip is the log', () => {
    const t = new SoftTpm({ quoteKey: newKey(), boot: BUILD, powerOnAt: T0 });
    const log = parseEventLog(t.eventLog());
    expect(log.events.filter((e) => e.eventType === EV.SEPARATOR).map((e) => e.pcrIndex)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(log.events.some((e) => e.eventType === EV.EFI_BOOT_SERVICES_APPLICATION)).toBe(true);
    expect(log.events.some((e) => Buffer.from(e.data).toString('latin1').startsWith('kernel_cmdline: '))).toBe(true);
    expect(log.events.some((e) => e.eventType === EV.NO_ACTION)).toBe(false); // tpm2-tools 5.4 would extend it
    expect(hex(replayEventLog(log).bank)).toBe(hex(Buffer.concat(t.readAllPcrs())));
    expect(t.eventLog()).toBe(measuredBoot(BUILD).logBytes);
    expect(hex(new Uint8Array(gunzipSync(t.eventLogGzip())))).toBe(hex(t.eventLog()));
    expect(t.eventLog().length).toBeLessThan(63488);
  });

  it('keeps the log replaying when an event is logged after boot, and resets on reboot', () => {
    const t = new SoftTpm({ quoteKey: newKey(), boot: BUILD, powerOnAt: T0 });
    const before = hex(t.readPcr(14));
    const data = new Uint8Array(Buffer.from('MokList', 'latin1'));
    const digest0to15 = (): string => hex(parseQuoteAttest(t.quote(NONCE, T0).attest).pcrDigest);
    const bootDigest = digest0to15();
    expect(bootDigest).toBe(hex(sha256(Buffer.concat(t.readAllPcrs().slice(0, 16)))));
    t.extend(14, sha256(data), { eventType: EV.IPL, data });
    expect(hex(t.readPcr(14))).not.toBe(before);
    expect(digest0to15()).toBe(hex(sha256(Buffer.concat(t.readAllPcrs().slice(0, 16)))));
    expect(digest0to15()).not.toBe(bootDigest);
    expect(hex(replayEventLog(parseEventLog(t.eventLog())).bank)).toBe(hex(Buffer.concat(t.readAllPcrs())));
    t.reboot(T0 + 5000);
    expect(hex(t.readPcr(14))).toBe(before);
    expect(digest0to15()).toBe(bootDigest);
    expect(t.eventLog()).toBe(measuredBoot(BUILD).logBytes);
  });

  it('boots a new build on reboot (an EVE update)', () => {
    const t = new SoftTpm({ quoteKey: newKey(), boot: BUILD, powerOnAt: T0 });
    const next = { ...BUILD, eveVersion: '14.6.0-kvm-amd64' };
    t.reboot(T0 + 5000, next);
    expect(t.measuredBoot.build.eveVersion).toBe('14.6.0-kvm-amd64');
    expect(hex(Buffer.concat(t.readAllPcrs()))).toBe(hex(measuredBoot(next).pcrs));
  });

  it('rejects a build without versions, naming the field', () => {
    expect(() => measuredBoot({ eveVersion: '', firmwareVersion: 'x' })).toThrow(/eveVersion must be a non-empty string/);
  });
});

describe('checkQuote (controller side)', () => {
  const key = newKey();
  const tpm = new SoftTpm({ quoteKey: key, boot: BUILD, powerOnAt: T0 });
  const q = tpm.quote(NONCE, T0 + 1000);
  const base = (): QuoteCheckInput => ({
    attest: q.attest,
    signature: q.signatureDer,
    publicKey: createPublicKey(key),
    nonce: NONCE,
    pcrValues: pcrMap(tpm),
    eventLog: tpm.eventLog(),
  });

  it('accepts a good quote with DER or r||s signature, with or without the event log', () => {
    expect(checkQuote(base()).outcome).toBe('ok');
    expect(checkQuote({ ...base(), signature: q.signatureRs }).outcome).toBe('ok');
    expect(checkQuote({ ...base(), eventLog: undefined }).outcome).toBe('ok');
  });

  it('rejects each kind of bad quote with its own outcome', () => {
    expect(checkQuote({ ...base(), nonce: new Uint8Array(Buffer.from('9c41f07be2d4')) }).outcome).toBe('nonce-mismatch');
    expect(checkQuote({ ...base(), publicKey: createPublicKey(newKey()) }).outcome).toBe('bad-signature');
    const msg = new Uint8Array(q.attest);
    msg[msg.length - 1]! ^= 1;
    expect(checkQuote({ ...base(), attest: msg }).outcome).toBe('bad-signature');
    const pcrs = pcrMap(tpm);
    const p5 = new Uint8Array(pcrs.get(5)!);
    p5[0]! ^= 1;
    pcrs.set(5, p5);
    const r = checkQuote({ ...base(), pcrValues: pcrs, eventLog: undefined });
    expect(r.outcome).toBe('pcr-digest-mismatch');
    expect(r.reason).toMatch(/quote says/);
    const missing = pcrMap(tpm);
    missing.delete(15);
    expect(checkQuote({ ...base(), pcrValues: missing }).reason).toBe('PCR 15 is selected in the quote but not reported');
    const foreignLog = checkQuote({ ...base(), eventLog: measuredBoot({ ...BUILD, tampered: true }).logBytes });
    expect(foreignLog.outcome).toBe('event-log-mismatch');
    expect(foreignLog.reason).toMatch(/^event log replays PCR 9 to/);
    expect(checkQuote({ ...base(), eventLog: new Uint8Array(10) }).outcome).toBe('event-log-mismatch');
  });

  it('inflates a received gzip log, refusing more than EVE would send and non-gzip bytes', () => {
    expect(hex(gunzipEventLog(tpm.eventLogGzip()))).toBe(hex(tpm.eventLog()));
    expect(() => gunzipEventLog(gzipEventLog(new Uint8Array(200_000)), 'device 7 quote')).toThrow(/device 7 quote: inflates to more than 126976 bytes/);
    expect(() => gunzipEventLog(new Uint8Array([1, 2, 3]))).toThrow(/tpm_binary_event_log: not a gzip stream/);
  });

  it('calls a signed non-quote structure not-a-quote, naming the field', () => {
    const bogus = new Uint8Array(q.attest);
    bogus[5] = 0x17; // TPM_ST_ATTEST_CERTIFY
    const sig = sign('sha256', bogus, { key, dsaEncoding: 'der' });
    const r = checkQuote({ ...base(), attest: bogus, signature: sig });
    expect(r.outcome).toBe('not-a-quote');
    expect(r.reason).toMatch(/attestData: field type at byte 4/);
  });
});

describe('EK store (fleet state directory)', () => {
  const root = mkdtempSync(join(tmpdir(), 'evesim-ek-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('generates an RSA-2048 EK once, keeps it 0600, and loads it in a second run without generating', async () => {
    const first = EkStore.open({ stateDir: root, seed: 'seed-1' });
    const ek = first.ek(3);
    expect(first.stats).toMatchObject({ created: 1, loaded: 0 });
    const files = readdirSync(first.dir!);
    expect(files).toEqual(['3.json']);
    expect(statSync(join(first.dir!, '3.json')).mode & 0o777).toBe(0o600);
    expect(statSync(first.dir!).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(first.dir!, '3.json'), 'utf8')).toMatch(/"d":/);

    const second = EkStore.open({ stateDir: root, seed: 'seed-1' });
    const again = second.ek(3);
    expect(second.stats).toMatchObject({ created: 0, loaded: 1 });
    expect(hex(again.tpm2bPublic)).toBe(hex(ek.tpm2bPublic));
    // The private key still matches the public area.
    const sig = sign('sha256', Buffer.from('x'), again.privateKey());
    expect(verify('sha256', Buffer.from('x'), publicKeyOf(parseTpm2bPublic(again.tpm2bPublic).public), sig)).toBe(true);

    const otherSeed = EkStore.open({ stateDir: root, seed: 'seed-2' });
    expect(otherSeed.dir).not.toBe(first.dir);

    const viaAsync = await second.ekAsync(4);
    expect(second.stats.created).toBe(1);
    expect(viaAsync.tpm2bPublic.length).toBe(316);
  });

  it('makes the TCG L-1 public area: same size and bytes as swtpm’s EK except the modulus', () => {
    const store = EkStore.open({ stateDir: root, seed: 'seed-1' });
    const ours = store.ek(3).tpm2bPublic;
    const swtpm = new Uint8Array(readFileSync(vectorPath('tpm', 'eve-quote', 'ek.tpm2b_public.bin')));
    expect(ours.length).toBe(swtpm.length);
    const MOD_AT = 316 - 256;
    expect(hex(ours.subarray(0, MOD_AT))).toBe(hex(swtpm.subarray(0, MOD_AT)));
    expect(hex(ours.subarray(MOD_AT))).not.toBe(hex(swtpm.subarray(MOD_AT)));
    const p = parseTpm2bPublic(ours).public as RsaPublic;
    expect(hex(marshalTpm2bPublic(ekPublicFromModulus(p.modulus)))).toBe(hex(ours));
    expect(hex(store.ek(3).name)).toBe(hex(objectName(ours.subarray(2))));
    const spki = store.ek(3).publicKey().export({ format: 'jwk' });
    expect(Buffer.from(spki.n!, 'base64url').toString('hex')).toBe(hex(p.modulus));
  });

  it('names the file when a stored EK is damaged', () => {
    const store = EkStore.open({ stateDir: root, seed: 'seed-3' });
    writeFileSync(join(store.dir!, '0.json'), '{"version":1,"index":7}');
    expect(() => store.ek(0)).toThrow(/0\.json: not a version-1 EK record/);
  });
});

describe('ByteWriter', () => {
  it('grows without losing bytes written before', () => {
    const w = new ByteWriter(16);
    for (let i = 0; i < 100; i++) w.u16be(i).u32le(i).u8(i);
    w.bytes(new Uint8Array(300).fill(7));
    const out = w.finish();
    expect(out.length).toBe(100 * 7 + 300);
    const b = Buffer.from(out);
    for (let i = 0; i < 100; i++) {
      expect(b.readUInt16BE(i * 7)).toBe(i);
      expect(b.readUInt32LE(i * 7 + 2)).toBe(i);
      expect(b[i * 7 + 6]).toBe(i);
    }
    expect(out[out.length - 1]).toBe(7);
  });
});
