// The TPM structures against real bytes from swtpm and tpm2-tools (test/vectors/tpm, see its
// README): every parser reproduces the decoded fields, every writer reproduces the real bytes.

import { createPublicKey, verify } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { TpmParseError } from '../src/tpm/byte-reader.js';
import { ByteWriter } from '../src/tpm/byte-writer.js';
import { ecdsaDerParts, ecdsaDerToRs, ecdsaRsToDer } from '../src/protocol/ecdsa-signature-forms.js';
import { parseEventLog, serializeEventLog } from '../src/tpm/event-log.js';
import { replayEventLog } from '../src/tpm/event-log-replay.js';
import { eventTypeName } from '../src/tpm/event-types.js';
import { ekPublicFromModulus, publicKeyOf, quoteKeyPublic } from '../src/tpm/key-public-areas.js';
import { extendPcr, newPcrBank, pcrView } from '../src/tpm/pcr-bank.js';
import { computePcrDigest, pcrSelection, writePcrSelectionList, EVE_QUOTE_SELECTION } from '../src/tpm/pcr-selection.js';
import { marshalQuoteAttest, parseQuoteAttest } from '../src/tpm/tpms-attest.js';
import { pcrsSerialized } from '../src/tpm/tpm2-tools-files.js';
import { childQualifiedName, objectName, primaryQualifiedName } from '../src/tpm/tpm-name.js';
import { marshalTpm2bPublic, marshalTpmtPublic, parseTpm2bPublic, type EccPublic, type RsaPublic } from '../src/tpm/tpm-public.js';
import { ecdsaDerFromTpmt, ecdsaTpmtFromDer, ecdsaTpmtFromRs, marshalTpmtSignature, parseTpmtSignature } from '../src/tpm/tpmt-signature.js';
import {
  TCG_EK_ATTRIBUTES,
  TPM_ALG_AES,
  TPM_ALG_CFB,
  TPM_ALG_ECC,
  TPM_ALG_ECDSA,
  TPM_ALG_RSA,
  TPM_ALG_SHA256,
  TPM_RH_ENDORSEMENT,
  TPM_RH_OWNER,
} from '../src/tpm/tpm-constants.js';
import { vectorPath } from './vectors-dir.js';

const tpmDir = vectorPath('tpm');
const QUOTES = ['eve-quote', 'swtpm-ak-quote'] as const;

function file(dir: string, name: string): Uint8Array {
  const p = path.join(tpmDir, dir, name);
  if (!existsSync(p)) throw new Error(`TPM vector missing: ${p} (test/vectors/, checked in)`);
  return new Uint8Array(readFileSync(p));
}
const json = (dir: string, name: string): any => JSON.parse(Buffer.from(file(dir, name)).toString('utf8'));
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));

interface DecodedAttest {
  size: number;
  magic: string;
  type: string;
  qualifiedSigner: string;
  extraData: string;
  clockInfo: { clock: number; resetCount: number; restartCount: number; safe: number };
  firmwareVersion: string;
  firmwareVersion_decimal: string;
  pcrSelect: { hash: number; sizeofSelect: number; pcrSelect: string; pcrs: number[] }[];
  pcrDigest: string;
  ak_name: string;
  signature: { sigAlg: string; hashAlg: string; r: string; s: string };
  signature_der: string;
}

describe.each(QUOTES)('TPM vector %s', (dir) => {
  const attestBytes = file(dir, 'attest.bin');
  const decoded = json(dir, 'attest.decoded.json') as DecodedAttest;
  const pcrs = json(dir, 'pcrs.json') as { selected: { index: number; value: string }[] };
  const nonce = unhex(Buffer.from(file(dir, 'nonce.hex')).toString('utf8').trim());
  const akPem = Buffer.from(file(dir, 'ak.pem')).toString('utf8');

  it('parses TPMS_ATTEST into exactly the decoded fields', () => {
    const a = parseQuoteAttest(attestBytes, `${dir}/attest.bin`);
    expect(attestBytes.length).toBe(decoded.size);
    expect(a.magic.toString(16)).toBe(decoded.magic);
    expect(a.type.toString(16)).toBe(decoded.type);
    expect(hex(a.qualifiedSigner)).toBe(decoded.qualifiedSigner);
    expect(hex(a.extraData)).toBe(decoded.extraData);
    expect(hex(a.extraData)).toBe(hex(nonce));
    expect(a.clockInfo).toEqual({ ...decoded.clockInfo, safe: decoded.clockInfo.safe === 1 });
    expect(a.firmwareVersion.toString(16).padStart(16, '0')).toBe(decoded.firmwareVersion);
    expect(a.firmwareVersion.toString()).toBe(decoded.firmwareVersion_decimal);
    expect(a.pcrSelect.map((s) => ({ hash: s.hash, sizeofSelect: s.sizeofSelect, pcrSelect: hex(s.bitmap), pcrs: s.pcrs }))).toEqual(
      decoded.pcrSelect.map((s) => ({ hash: s.hash, sizeofSelect: s.sizeofSelect, pcrSelect: s.pcrSelect, pcrs: s.pcrs })),
    );
    expect(hex(a.pcrDigest)).toBe(decoded.pcrDigest);
  });

  it('marshals the parsed TPMS_ATTEST back to the same bytes', () => {
    const a = parseQuoteAttest(attestBytes);
    expect(hex(marshalQuoteAttest(a))).toBe(hex(attestBytes));
  });

  it('verifies signature.der and signature.rs.bin over SHA-256(attest) with ak.pem', () => {
    const key = createPublicKey(akPem);
    expect(verify('sha256', attestBytes, { key, dsaEncoding: 'der' }, file(dir, 'signature.der'))).toBe(true);
    expect(verify('sha256', attestBytes, { key, dsaEncoding: 'ieee-p1363' }, file(dir, 'signature.rs.bin'))).toBe(true);
    const flipped = new Uint8Array(attestBytes);
    flipped[flipped.length - 1]! ^= 1;
    expect(verify('sha256', flipped, { key, dsaEncoding: 'der' }, file(dir, 'signature.der'))).toBe(false);
  });

  it('converts between TPMT_SIGNATURE, DER and r||s byte-exactly', () => {
    const tpmt = file(dir, 'signature.tpmt.bin');
    const der = file(dir, 'signature.der');
    const rs = file(dir, 'signature.rs.bin');
    const sig = parseTpmtSignature(tpmt, `${dir}/signature.tpmt.bin`);
    expect(sig.sigAlg).toBe(TPM_ALG_ECDSA);
    if (sig.sigAlg !== TPM_ALG_ECDSA) return;
    expect(sig.hashAlg).toBe(TPM_ALG_SHA256);
    expect(hex(sig.r)).toBe(decoded.signature.r);
    expect(hex(sig.s)).toBe(decoded.signature.s);
    expect(hex(der)).toBe(decoded.signature_der);
    expect(hex(marshalTpmtSignature(sig))).toBe(hex(tpmt));
    expect(hex(ecdsaDerFromTpmt(sig))).toBe(hex(der));
    expect(hex(marshalTpmtSignature(ecdsaTpmtFromDer(der)))).toBe(hex(tpmt));
    expect(hex(marshalTpmtSignature(ecdsaTpmtFromRs(rs)))).toBe(hex(tpmt));
    expect(hex(ecdsaDerToRs(der))).toBe(hex(rs));
    expect(hex(ecdsaRsToDer(rs))).toBe(hex(der));
  });

  it('recomputes pcrDigest from pcrs.json and writes the tpm2-tools pcrs file byte-exactly', () => {
    const a = parseQuoteAttest(attestBytes);
    const byIndex = new Map(pcrs.selected.map((p) => [p.index, unhex(p.value)]));
    expect(pcrs.selected.map((p) => p.index)).toEqual(a.pcrSelect[0]!.pcrs);
    const digest = computePcrDigest(a.pcrSelect, (_h, i) => byIndex.get(i)!);
    expect(hex(digest)).toBe(decoded.pcrDigest);
    expect(hex(pcrsSerialized(a.pcrSelect, (_h, i) => byIndex.get(i)!))).toBe(hex(file(dir, 'pcrs.serialized.bin')));
  });

  it('parses ak.tpm2b_public.bin: an ECC P-256 ECDSA-SHA256 restricted signer whose Name is ak_name', () => {
    const bytes = file(dir, 'ak.tpm2b_public.bin');
    const { public: p, tpmtPublic } = parseTpm2bPublic(bytes, `${dir}/ak.tpm2b_public.bin`);
    expect(p.type).toBe(TPM_ALG_ECC);
    const ecc = p as EccPublic;
    expect(ecc.nameAlg).toBe(TPM_ALG_SHA256);
    expect(ecc.objectAttributes).toBe(dir === 'eve-quote' ? 0x00050472 : 0x00050072);
    expect(ecc.scheme).toEqual({ scheme: TPM_ALG_ECDSA, hashAlg: TPM_ALG_SHA256 });
    expect(ecc.curveId).toBe(3);
    expect(ecc.symmetric).toBeNull();
    expect(ecc.kdf).toBeNull();
    expect(hex(objectName(tpmtPublic))).toBe(decoded.ak_name);
    expect(hex(marshalTpm2bPublic(p))).toBe(hex(bytes));
    // The same public area, rebuilt from ak.pem alone with our template.
    expect(hex(marshalTpm2bPublic(quoteKeyPublic(createPublicKey(akPem), ecc.objectAttributes)))).toBe(hex(bytes));
    // And back to a key: the same SPKI as ak.pem.
    expect(publicKeyOf(p).export({ type: 'spki', format: 'pem' })).toBe(createPublicKey(akPem).export({ type: 'spki', format: 'pem' }));
  });

  it('reproduces qualifiedSigner from the key Name as attest.decoded.json explains', () => {
    const akName = objectName(parseTpm2bPublic(file(dir, 'ak.tpm2b_public.bin')).tpmtPublic);
    let qn: Uint8Array;
    if (dir === 'eve-quote') {
      qn = primaryQualifiedName(TPM_RH_OWNER, akName);
    } else {
      const ekName = objectName(parseTpm2bPublic(file(dir, 'ek.tpm2b_public.bin')).tpmtPublic);
      qn = childQualifiedName(primaryQualifiedName(TPM_RH_ENDORSEMENT, ekName), akName);
    }
    expect(hex(qn)).toBe(decoded.qualifiedSigner);
  });

  it('parses ek.tpm2b_public.bin as the TCG L-1 template and rebuilds it from the modulus', () => {
    const bytes = file(dir, 'ek.tpm2b_public.bin');
    expect(bytes.length).toBe(316);
    const p = parseTpm2bPublic(bytes).public;
    expect(p.type).toBe(TPM_ALG_RSA);
    const rsa = p as RsaPublic;
    expect(rsa.objectAttributes).toBe(TCG_EK_ATTRIBUTES);
    expect(hex(rsa.authPolicy)).toBe('837197674484b3f81a90cc8d46a5d724fd52d76e06520b64f2a1da1b331469aa');
    expect(rsa.symmetric).toEqual({ algorithm: TPM_ALG_AES, keyBits: 128, mode: TPM_ALG_CFB });
    expect(rsa.scheme).toBeNull();
    expect(rsa.keyBits).toBe(2048);
    expect(rsa.exponent).toBe(0);
    expect(rsa.modulus.length).toBe(256);
    expect(hex(marshalTpm2bPublic(ekPublicFromModulus(rsa.modulus)))).toBe(hex(bytes));
    expect(publicKeyOf(p).asymmetricKeyDetails).toMatchObject({ modulusLength: 2048, publicExponent: 65537n });
  });
});

describe('TPM vector eve-quote event log', () => {
  const dir = 'eve-quote';
  const logBytes = file(dir, 'eventlog.bin');
  const expected = json(dir, 'eventlog.json') as {
    events: { pcr: number; type: number; digest: string; data_len: number; index: number; type_name: string }[];
    replayed_pcrs: Record<string, string>;
  };
  const allPcrs = (json(dir, 'pcrs.json') as { all_sha256_pcrs_0_23: Record<string, string> }).all_sha256_pcrs_0_23;

  it('parses every record as eventlog.json lists it', () => {
    const log = parseEventLog(logBytes, `${dir}/eventlog.bin`);
    expect(log.specId).toMatchObject({ platformClass: 0, specVersionMinor: 0, specVersionMajor: 2, uintnSize: 2, algorithms: [{ algId: 0x000b, digestSize: 32 }] });
    expect(log.events.map((e, i) => ({ pcr: e.pcrIndex, type: e.eventType, digest: hex(e.digests[0]!.digest), data_len: e.data.length, index: i + 1, type_name: eventTypeName(e.eventType) }))).toEqual(
      expected.events,
    );
  });

  it('serializes the parsed log back to the same bytes', () => {
    expect(hex(serializeEventLog(parseEventLog(logBytes)))).toBe(hex(logBytes));
  });

  it('replays to the PCR values in eventlog.json and to all 24 PCRs of the quote', () => {
    const r = replayEventLog(parseEventLog(logBytes));
    for (const [i, v] of Object.entries(expected.replayed_pcrs)) expect(hex(pcrView(r.bank, Number(i)))).toBe(v);
    for (let i = 0; i < 24; i++) expect(hex(pcrView(r.bank, i)), `PCR ${i}`).toBe(allPcrs[String(i)]);
    expect([...r.extended].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('eventlog.bin.gz is the gzip of eventlog.bin', () => {
    expect(hex(new Uint8Array(gunzipSync(file(dir, 'eventlog.bin.gz'))))).toBe(hex(logBytes));
  });

  it('names the record, field and offset of a damaged log', () => {
    const cut = logBytes.subarray(0, logBytes.length - 5);
    expect(() => parseEventLog(cut, 'cut.bin')).toThrow(/cut\.bin: field record 21 Event at byte \d+: needs 13 bytes but only 8 remain/);
    const notAgile = new Uint8Array(logBytes);
    notAgile[4] = 1;
    expect(() => parseEventLog(notAgile, 'x.bin')).toThrow(TpmParseError);
    expect(() => parseEventLog(notAgile, 'x.bin')).toThrow(/not a crypto-agile log/);
  });
});

describe('PCR bank and selections', () => {
  it('starts PCR 17–22 at all 0xFF and the others at zero', () => {
    const bank = newPcrBank();
    for (let i = 0; i < 24; i++) expect(hex(pcrView(bank, i))).toBe((i >= 17 && i <= 22 ? 'ff' : '00').repeat(32));
  });

  it('extends as swtpm does (PCR 16 of the swtpm quote; a separator-only PCR)', () => {
    const bank = newPcrBank();
    extendPcr(bank, 16, unhex('00'.repeat(31) + '01'));
    expect(hex(pcrView(bank, 16))).toBe('90f4b39548df55ad6187a1d20d731ecee78c545b94afd16f42ef7592d99cd365');
    extendPcr(bank, 2, unhex('df3f619804a92fdb4057192dc43dd748ea778adc52bc498ce80524c014b81119'));
    expect(hex(pcrView(bank, 2))).toBe('3d458cfe55cc03ea1f443f1562beec8df51c75e14a9fcf9a7234a13f198e7969');
    expect(() => extendPcr(bank, 24, new Uint8Array(32))).toThrow(/PCR index 24/);
    expect(() => extendPcr(bank, 0, new Uint8Array(20))).toThrow(/32 bytes, got 20/);
  });

  it('marshals TPML_PCR_SELECTION as EVE and swtpm do', () => {
    const w = new ByteWriter();
    writePcrSelectionList(w, [EVE_QUOTE_SELECTION]);
    expect(hex(w.finish())).toBe('00000001000b03ffff00');
    const w2 = new ByteWriter();
    writePcrSelectionList(w2, [pcrSelection(TPM_ALG_SHA256, [0, 1, 2, 3, 4, 5, 6, 7, 16])]);
    expect(hex(w2.finish())).toBe('00000001000b03ff0001');
  });
});

describe('parse errors', () => {
  const attestBytes = file('eve-quote', 'attest.bin');
  it('rejects a wrong magic, a non-quote type and a truncated structure, naming the field', () => {
    const badMagic = new Uint8Array(attestBytes);
    badMagic[0] = 0;
    expect(() => parseQuoteAttest(badMagic, 'attestData')).toThrow(/attestData: field magic at byte 0: 0x00544347 is not TPM_GENERATED_VALUE/);
    const badType = new Uint8Array(attestBytes);
    badType[5] = 0x17;
    expect(() => parseQuoteAttest(badType, 'attestData')).toThrow(/field type at byte 4: 0x8017/);
    expect(() => parseQuoteAttest(attestBytes.subarray(0, 100), 'attestData')).toThrow(/field attested\.quote\.pcrDigest/);
    expect(() => parseQuoteAttest(new Uint8Array([...attestBytes, 0]), 'attestData')).toThrow(/1 unexpected trailing bytes/);
  });
  it('rejects malformed TPM2B_PUBLIC and TPMT_SIGNATURE', () => {
    const ak = file('eve-quote', 'ak.tpm2b_public.bin');
    expect(() => parseTpm2bPublic(ak.subarray(0, 60), 'ak.pub')).toThrow(/ak\.pub: field size at byte 0: says 88 bytes but 58 follow/);
    expect(() => parseTpmtSignature(new Uint8Array([0x00, 0x99]), 'quote.sig')).toThrow(/quote\.sig: field sigAlg at byte 0: 0x0099/);
    expect(() => ecdsaDerParts(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]))).toThrow(/ECDSA DER signature/);
  });
  it('keeps marshalTpmtPublic consistent with the TPM2B form', () => {
    const ak = file('eve-quote', 'ak.tpm2b_public.bin');
    const p = parseTpm2bPublic(ak).public;
    expect(hex(marshalTpmtPublic(p))).toBe(hex(ak.subarray(2)));
  });
});
