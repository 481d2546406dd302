import { describe, expect, test } from 'vitest';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Msg } from '../src/protocol/messages.js';
import { certs } from '../src/gen/eve-types.js';
import {
  ControllerCertsError,
  buildControllerCerts,
  controllerCertConfigHash,
  parseTrustedRoots,
  verifyControllerCerts,
  UNCHECKED_CHAIN,
  type ControllerCertsProblem,
} from '../src/protocol/controller-certs.js';
import { pemSha256, toHex, trimPem } from '../src/protocol/cert-hash.js';
import { openResponse, openUnverified, sealResponse } from '../src/protocol/envelope.js';
import { loadOrCreateControllerPki } from '../src/identity/controller-pki.js';
import { issueCertificate, randomSerial, type ExtKeyUsageName } from '../src/identity/certificate.js';
import { generateP256 } from '../src/identity/keys.js';
import { VECTORS_DIR } from './vectors-dir.js';

const V = VECTORS_DIR;
const pem = (name: string): string => readFileSync(join(V, 'pki', name), 'utf8');
const T = certs.ZCertType;
const vectorMsg = (): certs.ZControllerCert => Msg.ZControllerCert.decode(readFileSync(join(V, 'proto/certs/ZControllerCert.bin')));
const roots = parseTrustedRoots(pem('root-certificate.pem'));
const JUNE_2026 = Date.parse('2026-06-01T00:00:00Z');

function messageOf(fn: () => unknown): string {
  try {
    fn();
    return 'none';
  } catch (e) {
    return (e as Error).message;
  }
}

function problemOf(fn: () => unknown): ControllerCertsProblem | 'none' {
  try {
    fn();
    return 'none';
  } catch (e) {
    if (e instanceof ControllerCertsError) return e.problem;
    throw e;
  }
}

describe('EVE checks of /certs on the real vector', () => {
  test('ZControllerCert chains to the RSA-4096 root; signing PEM, hash and key come out as served', () => {
    expect(roots[0]!.publicKey.asymmetricKeyType).toBe('rsa');
    const msg = vectorMsg();
    const trusted = verifyControllerCerts(msg, roots, JUNE_2026);
    expect(Buffer.from(trusted.signingCertPem).toString()).toBe(trimPem(pem('controller-signing.pem')));
    expect(toHex(trusted.signingCertPemHash)).toBe(toHex(pemSha256(trimPem(pem('controller-signing.pem')))));
    expect(trusted.signingKey.asymmetricKeyType).toBe('ec');
    expect(trusted.ecdhCertPems.map((p) => Buffer.from(p).toString())).toEqual([trimPem(pem('controller-ecdh.pem'))]);
    expect(trusted.certHashesHex).toHaveLength(3);
    // The result verifies the real certs-response envelope.
    const env = readFileSync(join(V, 'proto/auth/AuthContainer-certs-response.bin'));
    expect(openResponse(env, trusted).payload.length).toBeGreaterThan(0);
  });

  test('the certs-response envelope unwraps without verification to the same ZControllerCert', () => {
    const env = readFileSync(join(V, 'proto/auth/AuthContainer-certs-response.bin'));
    const msg = Msg.ZControllerCert.decode(openUnverified(env).payload);
    expect(verifyControllerCerts(msg, roots, JUNE_2026).certHashesHex).toEqual(verifyControllerCerts(vectorMsg(), roots, JUNE_2026).certHashesHex);
  });

  test('negative: missing signing, two signing, extra disallowed type, no ECDH', () => {
    const without = (t: number): certs.ZControllerCert => ({ certs: vectorMsg().certs!.filter((c) => c.type !== t) });
    expect(problemOf(() => verifyControllerCerts(without(T.CERT_TYPE_CONTROLLER_SIGNING), roots, JUNE_2026))).toBe('signing-count');
    expect(problemOf(() => verifyControllerCerts(without(T.CERT_TYPE_CONTROLLER_ECDH_EXCHANGE), roots, JUNE_2026))).toBe('no-ecdh');
    const m = vectorMsg();
    const signing = m.certs!.find((c) => c.type === T.CERT_TYPE_CONTROLLER_SIGNING)!;
    expect(problemOf(() => verifyControllerCerts({ certs: [...m.certs!, { ...signing }] }, roots, JUNE_2026))).toBe('signing-count');
    const onboarding = { ...signing, type: T.CERT_TYPE_DEVICE_ONBOARDING };
    expect(problemOf(() => verifyControllerCerts({ certs: [...m.certs!, onboarding] }, roots, JUNE_2026))).toBe('bad-type');
    expect(problemOf(() => verifyControllerCerts({ certs: [...m.certs!, { ...signing, type: T.CERT_TYPE_CONTROLLER_NONE }] }, roots, JUNE_2026))).toBe('bad-type');
  });

  test('negative: foreign root, missing intermediate, expired, not yet valid, unparseable cert', () => {
    const dir = mkdtempSync(join(tmpdir(), 'evesim-cc-'));
    try {
      const foreign = parseTrustedRoots(loadOrCreateControllerPki(join(dir, 'pki')).root.certPem);
      expect(problemOf(() => verifyControllerCerts(vectorMsg(), foreign, JUNE_2026))).toBe('chain');
      // The reason names the certificate that failed, its issuer and the root it was checked against.
      const why = messageOf(() => verifyControllerCerts(vectorMsg(), foreign, JUNE_2026));
      const foreignRoot = foreign[0]!.subject.replace(/\n/g, ', ');
      expect(why).toContain(`does not chain to the given root (${foreignRoot})`);
      expect(why).toMatch(/certificate .*CN=.*, issuer .*CN=.*, is signed neither by that root nor by any of the 1 intermediate/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const noInter = { certs: vectorMsg().certs!.filter((c) => c.type !== T.CERT_TYPE_CONTROLLER_INTERMEDIATE) };
    expect(problemOf(() => verifyControllerCerts(noInter, roots, JUNE_2026))).toBe('chain');
    expect(problemOf(() => verifyControllerCerts(vectorMsg(), roots, Date.parse('2047-01-01T00:00:00Z')))).toBe('chain');
    expect(problemOf(() => verifyControllerCerts(vectorMsg(), roots, Date.parse('2026-04-01T00:00:00Z')))).toBe('chain');
    const m = vectorMsg();
    const broken = m.certs!.map((c) => (c.type === T.CERT_TYPE_CONTROLLER_ECDH_EXCHANGE ? { ...c, cert: Buffer.from('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----') } : c));
    expect(problemOf(() => verifyControllerCerts({ certs: broken }, roots, JUNE_2026))).toBe('bad-cert');
  });

  test('without a root CA (--insecure-skip-verify, no --root-ca) the chain is not checked, validity still is', () => {
    const noInter = { certs: vectorMsg().certs!.filter((c) => c.type !== T.CERT_TYPE_CONTROLLER_INTERMEDIATE) };
    expect(problemOf(() => verifyControllerCerts(noInter, roots, JUNE_2026))).toBe('chain');
    expect(verifyControllerCerts(noInter, UNCHECKED_CHAIN, JUNE_2026).certHashesHex).toHaveLength(noInter.certs.length);
    expect(problemOf(() => verifyControllerCerts(vectorMsg(), UNCHECKED_CHAIN, Date.parse('2047-01-01T00:00:00Z')))).toBe('chain');
  });

  test('an intermediate presented as the leaf is not accepted as the signing cert', () => {
    // Swap types: the CA claims to be SIGNING, the real leaf claims INTERMEDIATE (not a CA).
    const m = vectorMsg();
    const swapped = m.certs!.map((c) =>
      c.type === T.CERT_TYPE_CONTROLLER_SIGNING
        ? { ...c, type: T.CERT_TYPE_CONTROLLER_INTERMEDIATE }
        : c.type === T.CERT_TYPE_CONTROLLER_INTERMEDIATE
          ? { ...c, type: T.CERT_TYPE_CONTROLLER_SIGNING }
          : c,
    );
    // The ECDH leaf no longer finds a CA intermediate, so the chain fails.
    expect(problemOf(() => verifyControllerCerts({ certs: swapped }, roots, JUNE_2026))).toBe('chain');
  });
});

describe('extended key usage as Go x509 Verify (default serverAuth)', () => {
  function chainWithSigningEku(eku: ExtKeyUsageName[] | undefined): { msg: certs.ZControllerCert; root: string } {
    const nb = new Date(Date.now() - 86_400_000);
    const na = new Date(Date.now() + 365 * 86_400_000);
    const rootKeys = generateP256();
    const root = issueCertificate({ serial: randomSerial(), subject: { CN: 'r' }, notBefore: nb, notAfter: na, publicKey: rootKeys.publicKey, ca: true, keyUsage: ['keyCertSign'] }, rootKeys.privateKey);
    const interKeys = generateP256();
    const inter = issueCertificate(
      { serial: randomSerial(), subject: { CN: 'i' }, issuer: { CN: 'r' }, notBefore: nb, notAfter: na, publicKey: interKeys.publicKey, ca: true, keyUsage: ['keyCertSign'], authorityKeyId: root.subjectKeyId! },
      rootKeys.privateKey,
    );
    const leaf = (cn: string, usage: ExtKeyUsageName[] | undefined) =>
      issueCertificate(
        { serial: randomSerial(), subject: { CN: cn }, issuer: { CN: 'i' }, notBefore: nb, notAfter: na, publicKey: generateP256().publicKey, ca: false, keyUsage: ['digitalSignature'], ...(usage ? { extKeyUsage: usage } : {}), authorityKeyId: inter.subjectKeyId! },
        interKeys.privateKey,
      ).pem;
    const built = buildControllerCerts({ signingPem: leaf('s', eku) + inter.pem, ecdhPem: leaf('e', ['serverAuth']) });
    return { msg: built.msg, root: root.pem };
  }

  test('a signing leaf for clientAuth only is refused; one without EKU is accepted', () => {
    const clientOnly = chainWithSigningEku(['clientAuth']);
    expect(() => verifyControllerCerts(clientOnly.msg, parseTrustedRoots(clientOnly.root), Date.now())).toThrow(/serverAuth/);
    const none = chainWithSigningEku(undefined);
    expect(problemOf(() => verifyControllerCerts(none.msg, parseTrustedRoots(none.root), Date.now()))).toBe('none');
    const server = chainWithSigningEku(['serverAuth']);
    expect(problemOf(() => verifyControllerCerts(server.msg, parseTrustedRoots(server.root), Date.now()))).toBe('none');
  });
});

describe('building /certs as Adam does', () => {
  test('from the vector PKI files: same certs and 16-byte hashes as the real ZControllerCert', () => {
    const built = buildControllerCerts({
      signingPem: pem('controller-signing.pem') + pem('controller-intermediate.pem'),
      ecdhPem: pem('controller-ecdh.pem'),
    });
    const key = (c: certs.ZCert): string => `${c.type}|${c.hashAlgo}|${toHex(c.certHash!)}|${Buffer.from(c.cert!).toString()}`;
    expect(built.msg.certs!.map(key).sort()).toEqual(vectorMsg().certs!.map(key).sort());
    expect(built.signingCertPem).toBe(trimPem(pem('controller-signing.pem')));
    // Encoded and decoded, it passes EVE's checks.
    const decoded = Msg.ZControllerCert.decode(Msg.ZControllerCert.encode(built.msg));
    expect(toHex(verifyControllerCerts(decoded, roots, JUNE_2026).signingCertPemHash)).toBe(toHex(built.signingCertPemHash));
  });

  test('our embedded-controller PKI: served, checked by the device side, responses verify', () => {
    const dir = mkdtempSync(join(tmpdir(), 'evesim-cc-'));
    try {
      const pki = loadOrCreateControllerPki(join(dir, 'pki'));
      const built = buildControllerCerts({ signingPem: pki.signing.certPem + pki.intermediate.certPem, ecdhPem: pki.ecdh.certPem });
      expect(built.msg.certs!.map((c) => c.type).sort()).toEqual([1, 2, 3]);
      const wire = sealResponse(Msg.ZControllerCert.encode(built.msg), pki.signing.key, built.signingCertPemHash);
      const trusted = verifyControllerCerts(Msg.ZControllerCert.decode(openUnverified(wire).payload), parseTrustedRoots(pki.root.certPem), Date.now());
      const reply = sealResponse(new Uint8Array([1, 2, 3]), pki.signing.key, built.signingCertPemHash);
      expect([...openResponse(reply, trusted).payload]).toEqual([1, 2, 3]);
      // ... and the vector root does not trust it.
      expect(problemOf(() => verifyControllerCerts(built.msg, roots, Date.now()))).toBe('chain');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('controllercert_confighash is padded base64-URL of SHA-256 over both files', () => {
    const h = controllerCertConfigHash('a', 'b');
    // SHA-256("ab") = fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603
    expect(Buffer.from(h.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('hex')).toBe(
      'fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603',
    );
    expect(h.endsWith('=')).toBe(true);
    expect(h).not.toMatch(/[+/]/);
  });
});
