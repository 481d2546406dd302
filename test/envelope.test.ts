import { describe, expect, test } from 'vitest';
import { X509Certificate, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Msg } from '../src/protocol/messages.js';
import { certs } from '../src/gen/eve-types.js';
import {
  EnvelopeError,
  openRegisterRequest,
  openRequest,
  openResponse,
  openUnverified,
  sealRequest,
  sealResponse,
  signRequestPayload,
  type EnvelopeErrorKind,
} from '../src/protocol/envelope.js';
import { bytesOf } from '../src/protocol/decoded-bytes.js';
import { pemSha256, senderCertHash, toHex, trimPem } from '../src/protocol/cert-hash.js';
import { certificateDer } from '../src/protocol/pem.js';
import { FleetIdentityStore } from '../src/identity/fleet-identity-store.js';
import { VECTORS_DIR } from './vectors-dir.js';

const V = VECTORS_DIR;
const vec = (p: string): Uint8Array => new Uint8Array(readFileSync(join(V, p)));
const pem = (name: string): string => readFileSync(join(V, 'pki', name), 'utf8');

const devicePem = pem('device.cert.pem');
const onboardPem = pem('onboard.cert.pem');
const deviceCert = new X509Certificate(devicePem);
const onboardCert = new X509Certificate(onboardPem);

// The signing certificate exactly as carried in certs/ZControllerCert (trimmed PEM).
const controllerCertMsg = Msg.ZControllerCert.decode(vec('proto/certs/ZControllerCert.bin'));
const servedSigning = controllerCertMsg.certs!.find((c) => c.type === certs.ZCertType.CERT_TYPE_CONTROLLER_SIGNING)!.cert!;
const controllerTrust = {
  signingCertPemHash: pemSha256(servedSigning),
  signingKey: new X509Certificate(Buffer.from(servedSigning)).publicKey,
};

const REQUESTS = [
  ['AuthContainer-uuid-request', 'proto/uuid/UuidRequest.bin', 'device'],
  ['AuthContainer-config-request', 'proto/config/ConfigRequest.bin', 'device'],
  ['AuthContainer-attest-quote-request', 'proto/attest/ZAttestReq-quote.bin', 'device'],
  ['AuthContainer-register', 'proto/register/ZRegisterMsg.bin', 'onboard'],
] as const;
const RESPONSES = [
  ['AuthContainer-certs-response', 'proto/certs/ZControllerCert.bin'],
  ['AuthContainer-config-response', 'proto/config/ConfigResponse.bin'],
  ['AuthContainer-uuid-response', 'proto/uuid/UuidResponse.bin'],
  ['AuthContainer-attest-nonce-response', 'proto/attest/ZAttestResponse-nonce.bin'],
] as const;

function kindOf(fn: () => unknown): EnvelopeErrorKind | 'none' {
  try {
    fn();
    return 'none';
  } catch (e) {
    if (e instanceof EnvelopeError) return e.kind;
    throw e;
  }
}

/** Re-encodes a decoded container with some fields replaced. */
function tamper(bytes: Uint8Array, change: (c: ReturnType<typeof Msg.AuthContainer.decode>) => void): Uint8Array {
  const c = Msg.AuthContainer.decode(bytes);
  change(c);
  return Msg.AuthContainer.encode(c);
}

describe('real EVE vectors: device → controller requests', () => {
  const registry = new Map<string, { publicKey: KeyObject; name: string }>([
    [toHex(senderCertHash(certificateDer(devicePem))), { publicKey: deviceCert.publicKey, name: 'device' }],
  ]);
  const lookup = (h: Uint8Array) => registry.get(toHex(h));

  for (const [name, payloadFile, signer] of REQUESTS) {
    test(`${name}: SHA-256(DER) sender hash, r‖s signature over the payload`, () => {
      const bytes = vec(`proto/auth/${name}.bin`);
      const c = Msg.AuthContainer.decode(bytes);
      const cert = signer === 'device' ? devicePem : onboardPem;
      expect(c.algo).toBe(2);
      expect(toHex(c.senderCertHash!)).toBe(toHex(senderCertHash(certificateDer(cert))));
      expect(c.signatureHash!.length).toBe(64);
      expect(Buffer.from(c.protectedPayload?.payload ?? new Uint8Array())).toEqual(Buffer.from(vec(payloadFile)));
      if (signer === 'device') {
        const opened = openRequest(bytes, lookup, { acceptDer: false });
        expect(opened.signer.name).toBe('device');
        expect(Buffer.from(opened.payload)).toEqual(Buffer.from(vec(payloadFile)));
      } else {
        // senderCert = bytes of base64(onboarding PEM file)
        expect(Buffer.from(c.senderCert!).toString('latin1')).toBe(Buffer.from(onboardPem).toString('base64'));
        const opened = openRegisterRequest(bytes);
        expect(opened.onboardCert.fingerprint256).toBe(onboardCert.fingerprint256);
        expect(Buffer.from(opened.payload)).toEqual(Buffer.from(vec(payloadFile)));
      }
    });
  }

  test('negative: unknown signer, empty hash, wrong signature, bad body', () => {
    const bytes = vec('proto/auth/AuthContainer-config-request.bin');
    expect(kindOf(() => openRequest(bytes, () => undefined))).toBe('unknown-signer');
    expect(kindOf(() => openRequest(tamper(bytes, (c) => (c.senderCertHash = new Uint8Array())), lookup))).toBe('empty-hash');
    // a 16-byte hash never matches at Adam, even if it is the right prefix
    expect(kindOf(() => openRequest(tamper(bytes, (c) => (c.senderCertHash = c.senderCertHash!.subarray(0, 16))), lookup))).toBe('unknown-signer');
    const flipped = tamper(bytes, (c) => {
      const s = new Uint8Array(c.signatureHash!);
      s[10]! ^= 1;
      c.signatureHash = s;
    });
    expect(kindOf(() => openRequest(flipped, lookup))).toBe('bad-signature');
    const otherPayload = tamper(bytes, (c) => (c.protectedPayload = { payload: new Uint8Array([1, 2, 3]) }));
    expect(kindOf(() => openRequest(otherPayload, lookup))).toBe('bad-signature');
    expect(kindOf(() => openRequest(new Uint8Array(), lookup))).toBe('bad-envelope');
    expect(kindOf(() => openRequest(Buffer.from('not a protobuf at all \xff\xff\xff'), lookup))).toBe('bad-envelope');
  });

  test('register negatives: bad base64, PEM without certificate, signature by another key', () => {
    const bytes = vec('proto/auth/AuthContainer-register.bin');
    expect(kindOf(() => openRegisterRequest(tamper(bytes, (c) => (c.senderCert = Buffer.from('***'))))) ).toBe('bad-sender-cert');
    expect(kindOf(() => openRegisterRequest(tamper(bytes, (c) => (c.senderCert = Buffer.from(Buffer.from('hello').toString('base64'))))))).toBe(
      'bad-sender-cert',
    );
    expect(kindOf(() => openRegisterRequest(tamper(bytes, (c) => (c.senderCert = Buffer.from(Buffer.from(devicePem).toString('base64'))))))).toBe(
      'bad-signature',
    );
    expect(kindOf(() => openRegisterRequest(tamper(bytes, (c) => (c.senderCertHash = new Uint8Array()))))).toBe('empty-hash');
  });
});

describe('real EVE vectors: controller → device responses', () => {
  for (const [name, payloadFile] of RESPONSES) {
    test(`${name}: verifies with SHA-256 of the served (trimmed) signing PEM`, () => {
      const bytes = vec(`proto/auth/${name}.bin`);
      const { payload } = openResponse(bytes, controllerTrust);
      expect(Buffer.from(payload)).toEqual(Buffer.from(vec(payloadFile)));
    });
  }

  test('the served PEM is the trimmed pki/controller-signing.pem, and the untrimmed file would be a cert miss', () => {
    const file = pem('controller-signing.pem');
    expect(Buffer.from(servedSigning).toString('utf8')).toBe(trimPem(file));
    const bytes = vec('proto/auth/AuthContainer-uuid-response.bin');
    expect(kindOf(() => openResponse(bytes, { ...controllerTrust, signingCertPemHash: pemSha256(file) }))).toBe('cert-miss');
  });

  test('negative: wrong hash, hash size, algo, wrong signature, DER signature, garbage', () => {
    const bytes = vec('proto/auth/AuthContainer-uuid-response.bin');
    const otherHash = pemSha256('something else');
    expect(kindOf(() => openResponse(bytes, { ...controllerTrust, signingCertPemHash: otherHash }))).toBe('cert-miss');
    expect(kindOf(() => openResponse(tamper(bytes, (c) => (c.senderCertHash = new Uint8Array(20))), controllerTrust))).toBe('hash-size');
    expect(kindOf(() => openResponse(tamper(bytes, (c) => (c.algo = 0)), controllerTrust))).toBe('algo');
    // algo 1 compares only the first 16 bytes
    const algo1 = tamper(bytes, (c) => {
      c.algo = 1;
      c.senderCertHash = c.senderCertHash!.subarray(0, 16);
    });
    expect(kindOf(() => openResponse(algo1, controllerTrust))).toBe('none');
    // algo 1 with the full 32-byte hash does not equal the 16-byte prefix
    expect(kindOf(() => openResponse(tamper(bytes, (c) => (c.algo = 1)), controllerTrust))).toBe('cert-miss');
    const flipped = tamper(bytes, (c) => {
      const s = new Uint8Array(c.signatureHash!);
      s[40]! ^= 0x80;
      c.signatureHash = s;
    });
    expect(kindOf(() => openResponse(flipped, controllerTrust))).toBe('bad-signature');
    // the same valid signature re-encoded as ASN.1 DER: EVE accepts only r‖s
    const der = tamper(bytes, (c) => (c.signatureHash = rawToDer(c.signatureHash!)));
    expect(kindOf(() => openResponse(der, controllerTrust))).toBe('bad-signature');
    expect(kindOf(() => openResponse(new Uint8Array([0x0a, 0x05, 1]), controllerTrust))).toBe('bad-envelope');
    // a device key is not the controller key
    expect(kindOf(() => openResponse(bytes, { ...controllerTrust, signingKey: deviceCert.publicKey }))).toBe('bad-signature');
  });

  test('an answer verified once opens again, and its signature over another payload is still refused', () => {
    const bytes = vec('proto/auth/AuthContainer-uuid-response.bin');
    const first = openResponse(bytes, controllerTrust).payload;
    // The second time the same bytes are a lookup (verified-signatures.ts) with the same result.
    expect(Buffer.from(openResponse(bytes, controllerTrust).payload)).toEqual(Buffer.from(first));
    const other = tamper(bytes, (c) => {
      const p = new Uint8Array(c.protectedPayload!.payload!);
      p[p.length - 1]! ^= 0x01;
      c.protectedPayload = { payload: p };
    });
    expect(kindOf(() => openResponse(other, controllerTrust))).toBe('bad-signature');
    // Nor does another key take the remembered result.
    expect(kindOf(() => openResponse(bytes, { ...controllerTrust, signingKey: deviceCert.publicKey }))).toBe('bad-signature');
  });

  test('AuthContainer-encrypted: decodes, carries cipher fields, and its signature is real', () => {
    const bytes = vec('proto/auth/AuthContainer-encrypted.bin');
    const opened = openUnverified(bytes);
    expect(opened.payload.length).toBe(0);
    expect(opened.container.cipherContext).toBeTruthy();
    expect(opened.container.cipherData).toBeTruthy();
    const hash = toHex(opened.container.senderCertHash!);
    if (hash === toHex(controllerTrust.signingCertPemHash)) {
      expect(kindOf(() => openResponse(bytes, controllerTrust))).toBe('none');
    } else {
      expect(hash).toBe(toHex(senderCertHash(certificateDer(devicePem))));
      expect(openRequest(bytes, () => ({ publicKey: deviceCert.publicKey })).payload.length).toBe(0);
    }
  });
});

describe('sealing (our devices and our controller) round trips', () => {
  const store = FleetIdentityStore.open({ seed: 'envelope-test' });
  const dev = store.device(3);

  test('sealRequest: exactly EVE’s layout, opened by the strict controller side', () => {
    const payload = new Uint8Array([8, 1, 18, 3, 97, 98, 99]);
    const bytes = sealRequest(payload, { key: dev.deviceKey, certDerHash: dev.deviceCertHash });
    const c = Msg.AuthContainer.decode(bytes);
    expect(c.algo).toBe(2);
    expect(toHex(c.senderCertHash!)).toBe(toHex(senderCertHash(certificateDer(dev.deviceCertPem))));
    expect(c.signatureHash!.length).toBe(64);
    expect(c.senderCert?.length ?? 0).toBe(0);
    const opened = openRequest(bytes, (h) => (toHex(h) === toHex(dev.deviceCertHash) ? { publicKey: createPublicKey(dev.deviceKey) } : undefined), {
      acceptDer: false,
    });
    expect(Buffer.from(opened.payload)).toEqual(Buffer.from(payload));
  });

  test('empty payload is carried as a present, empty AuthBody (0a 00), as EVE sends /uuid', () => {
    const bytes = sealRequest(new Uint8Array(), { key: dev.deviceKey, certDerHash: dev.deviceCertHash });
    expect(Buffer.from(bytes.subarray(0, 2)).toString('hex')).toBe('0a00');
    expect(Msg.AuthContainer.toJSON(Msg.AuthContainer.decode(bytes)).protectedPayload).toEqual({});
  });

  test('register envelope carries base64(PEM) of the onboarding cert and opens like Adam', () => {
    const payload = Msg.ZRegisterMsg.encode({ pemCert: Buffer.from(Buffer.from(dev.deviceCertPem).toString('base64')), serial: dev.serial, softSerial: dev.softSerial });
    const bytes = sealRequest(payload, { key: dev.onboardKey, certDerHash: dev.onboardCertHash, senderCertB64Pem: dev.onboardCertB64Pem });
    const opened = openRegisterRequest(bytes, { acceptDer: false });
    expect(opened.onboardCertPem).toBe(dev.onboardCertPem);
    expect(toHex(opened.onboardCertDer)).toBe(toHex(dev.onboardCertDer));
  });

  test('controller accepts ASN.1 DER signatures when asked (Adam), refuses them otherwise', () => {
    const payload = new Uint8Array([1, 2, 3, 4]);
    const derSig = new Uint8Array(sign('sha256', payload, dev.deviceKey)); // DER by default
    const bytes = Msg.AuthContainer.encode({ protectedPayload: { payload }, algo: 2, senderCertHash: dev.deviceCertHash, signatureHash: derSig });
    const lookup = () => ({ publicKey: createPublicKey(dev.deviceKey) });
    expect(kindOf(() => openRequest(bytes, lookup))).toBe('none');
    expect(kindOf(() => openRequest(bytes, lookup, { acceptDer: false }))).toBe('bad-signature');
  });

  test('sealResponse / openResponse round trip with ECDSA and RSA signing keys', () => {
    const payload = new Uint8Array([10, 4, 116, 101, 115, 116]);
    for (const keys of [generateKeyPairSync('ec', { namedCurve: 'P-256' }), generateKeyPairSync('rsa', { modulusLength: 2048 })]) {
      const hash = pemSha256('-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----');
      const bytes = sealResponse(payload, keys.privateKey, hash);
      const c = Msg.AuthContainer.decode(bytes);
      expect(c.algo).toBe(2);
      expect(c.senderCert?.length ?? 0).toBe(0);
      expect(Buffer.from(openResponse(bytes, { signingCertPemHash: hash, signingKey: keys.publicKey }).payload)).toEqual(Buffer.from(payload));
      expect(kindOf(() => openResponse(bytes, { signingCertPemHash: pemSha256('x'), signingKey: keys.publicKey }))).toBe('cert-miss');
    }
  });

  test('r‖s signatures are fixed-width on P-256 and P-384 (short r and s left-padded) and verify as IEEE P1363', () => {
    // Signed as DER and converted (envelope.ts says why); about 1 in 128 signatures has an r or s
    // shorter than the curve. A fixed 600 rounds missed that about once in a hundred runs
    // ((127/128)^600 ≈ 0.9 % per curve), so sign until padding has been seen, at least 200 times,
    // and at most 20,000 times ((127/128)^20000 ≈ e^-156: reached only when padding never happens).
    for (const [curve, size] of [['P-256', 32], ['P-384', 48]] as const) {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: curve });
      let padded = 0;
      for (let i = 0; (padded === 0 || i < 200) && i < 20_000; i++) {
        const payload = new Uint8Array([i & 255, i >> 8, 7]);
        const rs = signRequestPayload(payload, privateKey);
        expect(rs.length).toBe(2 * size);
        if (rs[0] === 0 || rs[size] === 0) padded++;
        expect(verify('sha256', payload, { key: publicKey, dsaEncoding: 'ieee-p1363' }, rs)).toBe(true);
      }
      expect(padded, `${curve}: no signature needed padding`).toBeGreaterThan(0);
    }
  });

  test('a response signature of the wrong width or a mangled one is refused', () => {
    const payload = new Uint8Array([10, 4, 116, 101, 115, 116]);
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const hash = pemSha256('-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----');
    const reseal = (f: (sig: Uint8Array) => Uint8Array): Uint8Array => {
      const c = Msg.AuthContainer.decode(sealResponse(payload, privateKey, hash));
      return Msg.AuthContainer.encode({ ...c, signatureHash: f(bytesOf(c.signatureHash)) });
    };
    const trust = { signingCertPemHash: hash, signingKey: publicKey };
    expect(kindOf(() => openResponse(reseal((sig) => sig), trust))).toBe('none');
    expect(kindOf(() => openResponse(reseal((sig) => sig.subarray(0, 62)), trust))).toBe('bad-signature');
    expect(kindOf(() => openResponse(reseal((sig) => new Uint8Array([...sig, 0])), trust))).toBe('bad-signature');
    expect(kindOf(() => openResponse(reseal((sig) => new Uint8Array(64)), trust))).toBe('bad-signature');
    expect(kindOf(() => openResponse(reseal((sig) => sig.map((b, i) => (i === 40 ? b ^ 1 : b))), trust))).toBe('bad-signature');
    expect(kindOf(() => openResponse(reseal((sig) => new Uint8Array(sign('sha256', payload, privateKey))), trust))).toBe('bad-signature');
  });

  test('EVE refuses to sign requests with RSA or P-521 keys', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
    const p521 = generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey;
    expect(() => sealRequest(new Uint8Array(), { key: rsa, certDerHash: new Uint8Array(32) })).toThrow(/ECDSA/);
    expect(() => sealRequest(new Uint8Array(), { key: p521, certDerHash: new Uint8Array(32) })).toThrow(/multiple of 8/);
  });
});

/** r‖s (64 bytes) → ASN.1 DER SEQUENCE { INTEGER r, INTEGER s }. */
function rawToDer(raw: Uint8Array): Uint8Array {
  const int = (b: Uint8Array): number[] => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    const v = [...b.subarray(i)];
    if (v[0]! & 0x80) v.unshift(0);
    return [0x02, v.length, ...v];
  };
  const body = [...int(raw.subarray(0, 32)), ...int(raw.subarray(32))];
  return Uint8Array.from([0x30, body.length, ...body]);
}
