import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { keepSeal, sealedAgain } from '../src/protocol/repeated-seal.js';
import { openRequest, sealRequest } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import { VECTORS_DIR } from './vectors-dir.js';
import { onboard, payloadOf, rig } from './device-harness.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signer = { key: privateKey, certDerHash: new Uint8Array(32).fill(7) };
const open = (bytes: Uint8Array) => openRequest(bytes, () => ({ publicKey }), { acceptDer: false });
const configRequest = (configHash: string, token?: string) =>
  Msg.ConfigRequest.encode(token === undefined ? { configHash } : { configHash, integrity_token: new Uint8Array(Buffer.from(token)) });

describe('repeated-seal: an unchanged request goes out in its last envelope', () => {
  it('gives back the kept envelope, byte for byte, for a payload equal to the sealed one, and it verifies', () => {
    for (const payload of [configRequest('h'.repeat(43), 't'.repeat(128)), configRequest(''), new Uint8Array(0), new Uint8Array(300).fill(0xff)]) {
      const sealed = sealRequest(payload, signer);
      const kept = keepSeal(sealed, payload);
      expect(kept).toBeDefined();
      const again = sealedAgain(kept!, new Uint8Array(payload)); // a new array with the same bytes
      expect(Buffer.from(again!)).toEqual(Buffer.from(sealed));
      expect(Buffer.from(open(again!).payload)).toEqual(Buffer.from(payload));
    }
  });

  it('gives nothing back for a payload that differs in one byte, in length, or is empty', () => {
    const payload = configRequest('h'.repeat(43), 'token');
    const kept = keepSeal(sealRequest(payload, signer), payload)!;
    const flipped = new Uint8Array(payload);
    flipped[flipped.length - 1] ^= 1;
    expect(sealedAgain(kept, flipped)).toBeUndefined();
    expect(sealedAgain(kept, payload.subarray(0, payload.length - 1))).toBeUndefined();
    expect(sealedAgain(kept, new Uint8Array(0))).toBeUndefined();
    expect(sealedAgain(kept, configRequest('h'.repeat(43), 'tokeN'))).toBeUndefined();
  });

  it('finds the payload in EVE’s own config request envelope (Go field order)', () => {
    const vector = new Uint8Array(readFileSync(join(VECTORS_DIR, 'proto/auth/AuthContainer-config-request.bin')));
    const payload = new Uint8Array(readFileSync(join(VECTORS_DIR, 'proto/config/ConfigRequest.bin')));
    const kept = keepSeal(vector, payload);
    expect(kept).toBeDefined();
    expect(Buffer.from(sealedAgain(kept!, payload)!)).toEqual(Buffer.from(vector));
  });

  it('keeps nothing when the payload is not where it looks (field 1 not first, or wrong bytes)', () => {
    const payload = configRequest('abc');
    const sealed = sealRequest(payload, signer);
    const c = Msg.AuthContainer.decode(sealed);
    // Hand-built: algo (field 2) before protectedPayload (field 1).
    const algoFirst = Buffer.concat([Buffer.from([0x10, c.algo ?? 0]), Buffer.from(Msg.AuthContainer.encode({ ...c, algo: 0 }))]);
    expect(keepSeal(algoFirst, payload)).toBeUndefined();
    expect(keepSeal(sealed, configRequest('abd'))).toBeUndefined();
    expect(keepSeal(new Uint8Array([0x0a, 0x85]), new Uint8Array(0))).toBeUndefined(); // truncated varint
  });
});

describe('device: config polls reuse their envelope while nothing changed', () => {
  it('sends unchanged polls as the same bytes, and a new envelope when the hash changes', async () => {
    const r = rig();
    await onboard(r);
    const before = r.controller.of('config').length;
    await r.time.advance(5 * 60_000);
    const unchanged = r.controller.of('config').slice(before);
    expect(unchanged.length).toBeGreaterThanOrEqual(4);
    const first = Buffer.from(unchanged[0]!.body!);
    for (const p of unchanged) expect(Buffer.from(p.body!)).toEqual(first);
    expect(Msg.ConfigRequest.decode(payloadOf(r, unchanged[0]!)).configHash).toBe(r.controller.configHash);

    r.controller.config = { device_name: 'renamed' };
    await r.time.advance(3 * 60_000);
    const later = r.controller.of('config').slice(before + unchanged.length);
    expect(later.length).toBeGreaterThanOrEqual(2);
    // The poll that fetches the new configuration still carries the old hash (same bytes); the one after it does not.
    expect(Buffer.from(later[0]!.body!)).toEqual(first);
    const last = later[later.length - 1]!;
    expect(Msg.ConfigRequest.decode(payloadOf(r, last)).configHash).toBe(r.controller.configHash);
    expect(Buffer.from(last.body!)).not.toEqual(first);
  });
});
