import 'reflect-metadata';
import { afterAll, describe, expect, test } from 'vitest';
import * as x509 from '@peculiar/x509';
import { X509Certificate, createPublicKey, sign, verify, webcrypto } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, connect } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { FleetIdentityStore } from '../src/identity/fleet-identity-store.js';
import { hardwareSerial, softSerial } from '../src/identity/serials.js';
import { loadOrCreateControllerPki } from '../src/identity/controller-pki.js';
import { createDeviceIdentity, identityFromStored, sharedOnboarding, type DeviceIdentityMaterial } from '../src/identity/device-identity.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import { senderCertHash, toHex } from '../src/protocol/cert-hash.js';
import { certificateDer, derToPem } from '../src/protocol/pem.js';
import { decodeIdentityBatch, encodeIdentityBatch, type CertificatesRegion } from '../src/identity/identity-batch-file.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const tmp = mkdtempSync(join(tmpdir(), 'evesim-identity-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const NOW = Date.parse('2026-11-21T12:00:00.700Z');
const DAY = 86_400_000;
const mode = (p: string): number => statSync(p).mode & 0o777;
const peculiar = (pem: string) => new x509.X509Certificate(pem);

describe('device certificate exactly as EVE makes it (§2.4)', () => {
  const store = FleetIdentityStore.open({ seed: 'attrs', now: () => NOW });
  const dev = store.device(0);
  const cert = new X509Certificate(dev.deviceCertPem);
  const p = peculiar(dev.deviceCertPem);

  test('self-signed ECDSA P-256, CN=EVE, O=The Linux Foundation', async () => {
    expect(cert.subject).toBe('O=The Linux Foundation\nCN=EVE');
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(p.signatureAlgorithm).toMatchObject({ name: 'ECDSA', hash: { name: 'SHA-256' } });
    expect(await p.verify({ signatureOnly: true })).toBe(true);
    // the key object signs what the certificate verifies
    const sig = sign('sha256', Buffer.from('x'), { key: dev.deviceKey, dsaEncoding: 'ieee-p1363' });
    expect(verify('sha256', Buffer.from('x'), { key: cert.publicKey, dsaEncoding: 'ieee-p1363' }, sig)).toBe(true);
  });

  test('IsCA, KeyUsage digitalSignature+keyCertSign (critical), EKU clientAuth+serverAuth', () => {
    const bc = p.getExtension(x509.BasicConstraintsExtension)!;
    expect(bc.ca).toBe(true);
    expect(bc.critical).toBe(true);
    expect(cert.ca).toBe(true);
    const ku = p.getExtension(x509.KeyUsagesExtension)!;
    expect(ku.usages).toBe(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign);
    expect(ku.critical).toBe(true);
    expect(p.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.clientAuth, x509.ExtendedKeyUsage.serverAuth]);
  });

  test('NotBefore = now − 1 day, NotAfter = NotBefore + 20 years, 128-bit random serial', () => {
    expect(p.notBefore.getTime()).toBe(Math.floor((NOW - DAY) / 1000) * 1000);
    const after = new Date(p.notBefore);
    after.setUTCFullYear(after.getUTCFullYear() + 20);
    expect(p.notAfter.getTime()).toBe(after.getTime());
    const serial = BigInt('0x' + cert.serialNumber);
    expect(serial).toBeGreaterThan(0n);
    expect(serial).toBeLessThan(1n << 128n);
    expect(cert.serialNumber).not.toBe(new X509Certificate(store.device(1).deviceCertPem).serialNumber);
  });

  test('PEM files end with a newline like files EVE writes', () => {
    for (const pem of [dev.deviceCertPem, dev.attestCertPem, dev.ecdhCertPem, dev.onboardCertPem]) {
      expect(pem.startsWith('-----BEGIN CERTIFICATE-----\n')).toBe(true);
      expect(pem.endsWith('-----END CERTIFICATE-----\n')).toBe(true);
    }
  });

  for (const [kind, cn] of [
    ['attest', 'Device Attestation certificate'],
    ['ecdh', 'Device ECDH certificate'],
  ] as const) {
    test(`${kind} certificate: issued by the device cert, subject and usages as EVE`, () => {
      const pem = kind === 'attest' ? dev.attestCertPem : dev.ecdhCertPem;
      const key = kind === 'attest' ? dev.attestKey : dev.ecdhKey;
      const c = new X509Certificate(pem);
      expect(c.subject).toBe(`C=US\nST=CA\nL=San Francisco\nO=The Linux Foundation\nCN=${cn}`);
      expect(c.issuer).toBe('O=The Linux Foundation\nCN=EVE');
      expect(c.checkIssued(cert)).toBe(true);
      expect(c.verify(cert.publicKey)).toBe(true);
      expect(c.ca).toBe(false);
      expect(c.validFrom).toBe(cert.validFrom);
      expect(c.validTo).toBe(cert.validTo);
      const pc = peculiar(pem);
      expect(pc.getExtension(x509.KeyUsagesExtension)!.usages).toBe(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment);
      expect(pc.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.serverAuth]);
      expect(createPublicKey(key).export({ format: 'jwk' })).toEqual(c.publicKey.export({ format: 'jwk' }));
    });
  }

  test('onboarding certificate chains to the fleet CA and names the serial', () => {
    const ca = new X509Certificate(store.fleetCaCertPem);
    const ob = new X509Certificate(dev.onboardCertPem);
    expect(ca.ca).toBe(true);
    expect(ob.checkIssued(ca)).toBe(true);
    expect(ob.verify(ca.publicKey)).toBe(true);
    expect(ob.verify(cert.publicKey)).toBe(false);
    expect(ob.subject).toContain(`CN=${dev.serial}`);
    expect(ob.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2', '1.3.6.1.5.5.7.3.1']);
    expect(createPublicKey(dev.onboardKey).export({ format: 'jwk' })).toEqual(ob.publicKey.export({ format: 'jwk' }));
  });

  test('precomputed envelope material: DER hashes and base64-of-PEM', () => {
    expect(toHex(dev.deviceCertHash)).toBe(toHex(senderCertHash(new Uint8Array(cert.raw))));
    expect(toHex(dev.onboardCertHash)).toBe(toHex(senderCertHash(certificateDer(dev.onboardCertPem))));
    expect(Buffer.from(dev.onboardCertB64Pem).toString()).toBe(Buffer.from(dev.onboardCertPem).toString('base64'));
  });

  test('what a worker keeps per device: PEM texts, device key and hash; the rest derived on use', () => {
    // Own fields only: certificates as DER in one buffer (or where they are in a batch file), no PEM
    // texts, no base64 of the onboarding PEM, no key objects but the device key.
    const own = Object.keys(dev).filter((k) => !['shared', 'verbatim'].includes(k));
    // The device key: its key object once made, its bytes until then (loaded identities make it on first use).
    expect(own.sort()).toEqual(['certs', 'certsOnDisk', 'deviceCertHash', 'deviceKeyObject', 'deviceKeyRaw', 'ends', 'index', 'scalars', 'serial', 'softSerial'].sort());
    expect((dev as unknown as { deviceKeyObject?: object }).deviceKeyObject).toBe(dev.deviceKey);
    expect((dev as unknown as { verbatim?: object }).verbatim).toBeUndefined(); // every PEM is in Go's layout
    // The hash is a view into a 64 KiB block of the thread's certificate hashes, not an ArrayBuffer of its own (a native backing store each).
    expect(dev.deviceCertHash.byteLength).toBe(32);
    expect(dev.deviceCertHash.buffer.byteLength).toBe(64 * 1024);
    // PEM texts come back byte for byte as the state file holds them.
    const keptStore = FleetIdentityStore.open({ seed: 'kept', stateDir: join(tmp, 'kept'), now: () => NOW });
    keptStore.device(0); // written to the state directory
    const kept = FleetIdentityStore.open({ seed: 'kept', stateDir: join(tmp, 'kept'), now: () => NOW }).device(0); // read back
    const batchName = readdirSync(join(keptStore.dir!, 'devices')).find((f) => f.startsWith('batch-0-1-1-'))!;
    const [record] = decodeIdentityBatch(readFileSync(join(keptStore.dir!, 'devices', batchName)), batchName);
    const file = {
      onboardCertPem: derToPem(record!.certs[0]),
      deviceCertPem: derToPem(record!.certs[1]),
      attestCertPem: derToPem(record!.certs[2]),
      ecdhCertPem: derToPem(record!.certs[3]),
      onboardKey: record!.scalars[0],
      attestKey: record!.scalars[2],
      ecdhKey: record!.scalars[3],
    };
    for (const f of ['onboardCertPem', 'deviceCertPem', 'attestCertPem', 'ecdhCertPem'] as const) expect(kept[f]).toBe(file[f]);
    // Keys made from the stored scalars are the stored keys.
    for (const k of ['onboardKey', 'attestKey', 'ecdhKey'] as const) expect(kept[k].export({ format: 'jwk' }).d).toEqual(Buffer.from(file[k]).toString('base64url'));
    // Rarely used keys are made on each use (none held natively), always the same key.
    expect(dev.attestKey).not.toBe(dev.attestKey);
    expect(dev.attestKey.export({ format: 'jwk' })).toEqual(dev.attestKey.export({ format: 'jwk' }));
    expect(dev.ecdhKey.export({ format: 'jwk' }).d).not.toBe(dev.attestKey.export({ format: 'jwk' }).d);
    // Certificate PEMs are flat strings of 64-column lines (derToPem joins instead of concatenating).
    expect(dev.deviceCertPem.split('\n').slice(1, -3).every((l) => l.length === 64)).toBe(true);
  });

  test('a PEM text in another layout (CRLF line ends) is kept verbatim; a bad scalar names the file', () => {
    const { stored } = createDeviceIdentity(createFleetCa('v', NOW), 'v', 2, NOW);
    const crlf = stored.attestCertPem.replace(/\n/g, '\r\n');
    const back = identityFromStored({ ...stored, attestCertPem: crlf }, 'x.json');
    expect(back.attestCertPem).toBe(crlf);
    expect(back.deviceCertPem).toBe(stored.deviceCertPem);
    const shortD = { ...stored.ecdhKey, d: 'AAAA' };
    expect(() => identityFromStored({ ...stored, ecdhKey: shortD }, 'y.json')).toThrow('y.json ecdhKey: d holds 3 bytes, a P-256 private scalar has 32');
  });

  test('a shared onboarding certificate (a real controller\'s) replaces the device\'s own', () => {
    const other = FleetIdentityStore.open({ seed: 'shared-onboarding', now: () => NOW }).device(3);
    const own = createDeviceIdentity(createFleetCa('x', NOW), 'x', 1, NOW).identity;
    const fleetKey = other.onboardKey;
    own.useSharedOnboarding(sharedOnboarding(other.onboardCertPem, fleetKey));
    expect(own.onboardCertPem).toBe(other.onboardCertPem);
    expect(own.onboardKey).toBe(fleetKey);
    expect(toHex(own.onboardCertHash)).toBe(toHex(other.onboardCertHash));
    expect(Buffer.from(own.onboardCertB64Pem).toString()).toBe(Buffer.from(other.onboardCertPem).toString('base64'));
    expect(own.deviceCertPem).not.toBe(other.deviceCertPem);
  });
});

describe('determinism from the seed', () => {
  test('same seed and index → same serials; different seed or index → different', () => {
    expect(hardwareSerial(7, 12)).toBe(hardwareSerial('7', 12));
    expect(hardwareSerial(7, 12)).not.toBe(hardwareSerial(7, 13));
    expect(hardwareSerial(7, 12)).not.toBe(hardwareSerial(8, 12));
    expect(hardwareSerial(7, 12)).toMatch(/^SIM[0-9A-HJKMNP-TV-Z]{12}$/);
    expect(softSerial(7, 12)).toMatch(/^[a-zA-Z0-9_-]*$/);
    expect(softSerial(7, 12)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(softSerial(7, 12)).toBe(softSerial(7, 12));
    expect(softSerial(7, 12)).not.toBe(softSerial(7, 11));
    const serials = new Set(Array.from({ length: 5000 }, (_, i) => hardwareSerial('fleet', i)));
    expect(serials.size).toBe(5000);
  });

  test('two independent fleets with the same seed have the same serials (keys may differ)', () => {
    const a = FleetIdentityStore.open({ seed: 99 }).devices(0, 4);
    const b = FleetIdentityStore.open({ seed: 99 }).devices(0, 4);
    expect(a.map((d) => [d.serial, d.softSerial])).toEqual(b.map((d) => [d.serial, d.softSerial]));
    expect(a[0]!.deviceCertPem).not.toBe(b[0]!.deviceCertPem);
  });
});

describe('fleet state directory', () => {
  test('second open with the same seed reuses CA and devices; files 0600, directories 0700', () => {
    const stateDir = join(tmp, 'state');
    const first = FleetIdentityStore.open({ stateDir, seed: 'reuse' });
    const made = first.devices(0, 5);
    expect(first.stats).toEqual({ created: 5, loaded: 0 });

    const again = FleetIdentityStore.open({ stateDir, seed: 'reuse' });
    expect(again.fleetCaCertPem).toBe(first.fleetCaCertPem);
    const loaded = again.devices(0, 5);
    expect(again.stats).toEqual({ created: 0, loaded: 5 });
    loaded.forEach((d, i) => {
      const m = made[i]!;
      expect([d.index, d.serial, d.softSerial, d.deviceCertPem, d.onboardCertPem, d.attestCertPem, d.ecdhCertPem]).toEqual([
        m.index, m.serial, m.softSerial, m.deviceCertPem, m.onboardCertPem, m.attestCertPem, m.ecdhCertPem,
      ]);
      // device key imported at load; the others on first use
      for (const k of ['deviceKey', 'onboardKey', 'attestKey', 'ecdhKey'] as const) {
        expect(d[k].export({ format: 'jwk' })).toEqual(m[k].export({ format: 'jwk' }));
      }
      expect(toHex(d.deviceCertHash)).toBe(toHex(m.deviceCertHash));
    });
    // device 5 is new: created and appended
    again.device(5);
    expect(again.stats.created).toBe(1);

    const dir = again.dir!;
    expect(mode(stateDir)).toBe(0o700);
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, 'devices'))).toBe(0o700);
    expect(mode(join(dir, 'fleet-ca.json'))).toBe(0o600);
    const deviceFiles = readdirSync(join(dir, 'devices'));
    // devices 0–4 in one batch file (made together), device 5 in its own
    expect(deviceFiles.map((f) => f.replace(/-[0-9a-f]+\.ids$/, '')).sort()).toEqual(['batch-0-1-5', 'batch-5-1-1']);
    for (const f of deviceFiles) expect(mode(join(dir, 'devices', f))).toBe(0o600);
    expect(readdirSync(dir).filter((f) => f.startsWith('.tmp'))).toEqual([]);

    // another seed lives beside it, not on top of it
    const other = FleetIdentityStore.open({ stateDir, seed: 'other' });
    expect(other.dir).not.toBe(dir);
    expect(other.fleetCaCertPem).not.toBe(first.fleetCaCertPem);
  });

  test('after release() the identities read their certificates from the batch files, not memory; a changed file is an error naming device and file', () => {
    const stateDir = join(tmp, 'certs-on-disk');
    const pems = (d: DeviceIdentityMaterial) => [d.onboardCertPem, d.deviceCertPem, d.attestCertPem, d.ecdhCertPem];
    const inMemory = (d: DeviceIdentityMaterial) => (d as unknown as { certs?: Uint8Array }).certs !== undefined;
    const first = FleetIdentityStore.open({ stateDir, seed: 'on-disk' });
    const made = first.devices(0, 3);
    const madePems = made.map(pems);
    expect(made.every(inMemory)).toBe(true);
    first.release();
    // Made in this process: written, then read back from the file they were written to.
    expect(made.some(inMemory)).toBe(false);
    expect(made.map(pems)).toEqual(madePems);
    expect(toHex(senderCertHash(made[2]!.deviceCertDer))).toBe(toHex(made[2]!.deviceCertHash));

    // Loaded from the file: the same.
    const again = FleetIdentityStore.open({ stateDir, seed: 'on-disk' });
    const loaded = again.devices(0, 3);
    expect(loaded.every(inMemory)).toBe(true);
    again.release();
    expect(loaded.some(inMemory)).toBe(false);
    expect(loaded.map(pems)).toEqual(madePems);

    // Another file in its place (the state directory made again): the device says so, by name.
    const dir = join(again.dir!, 'devices');
    const [name] = readdirSync(dir);
    const path = join(dir, name!);
    const bytes = readFileSync(path);
    const [record] = decodeIdentityBatch(bytes, name!);
    const changed = Buffer.from(bytes);
    changed[record!.certsAt!.at + 2 + 40]! ^= 0xff; // inside device 0's onboarding certificate...
    changed[record!.certsAt!.at + 2 + record!.certs[0].length + 2 + 40]! ^= 0xff; // ...and its device certificate
    writeFileSync(path, changed);
    expect(() => loaded[0]!.deviceCertPem).toThrow(`device 0: ${path} no longer holds its certificates (the device certificate changed since it was read)`);
    writeFileSync(path, bytes.subarray(0, 100));
    expect(() => loaded[1]!.attestCertPem).toThrow(new RegExp(`device 1: cannot read its certificates from ${path.replace(/[.]/g, '\\.')} \\(bytes \\d+\\+\\d+\\): the file ends \\d+ bytes early`));
    rmSync(path);
    expect(() => loaded[2]!.onboardCertDer).toThrow(/device 2: cannot read its certificates from .*ENOENT/);
  });

  test('certificate regions of a batch file: where encodeIdentityBatch puts them is where decodeIdentityBatch finds them', () => {
    const ca = createFleetCa('regions', NOW);
    const records = [0, 4, 9].map((i) => createDeviceIdentity(ca, 'regions', i, NOW).compact);
    const written: CertificatesRegion[] = [];
    const bytes = encodeIdentityBatch(records, written);
    expect(written).toHaveLength(3);
    expect(decodeIdentityBatch(bytes, 'r.ids').map((r) => r.certsAt)).toEqual(written);
  });

  test('a damaged device file of the earlier one-file-per-device layout is reported with its path', () => {
    const stateDir = join(tmp, 'damaged');
    const s = FleetIdentityStore.open({ stateDir, seed: 'd' });
    // written as evesim wrote each device before batch files
    const path = join(s.dir!, 'devices', '0.json');
    writeFileSync(path, JSON.stringify(createDeviceIdentity(s.fleetCa, s.seed, 0, NOW).stored) + '\n', { mode: 0o600 });
    expect(FleetIdentityStore.open({ stateDir, seed: 'd' }).device(0).serial).toBe(hardwareSerial(s.seed, 0));
    const good = readFileSync(path, 'utf8');
    writeFileSync(path, '{"version":1,"index":0}');
    expect(() => FleetIdentityStore.open({ stateDir, seed: 'd' }).device(0)).toThrow(/devices\/0\.json: field serial missing/);
    writeFileSync(path, JSON.stringify({ ...JSON.parse(good), attestKey: { kty: 'RSA', n: 'x' } }));
    expect(() => FleetIdentityStore.open({ stateDir, seed: 'd' }).device(0)).toThrow(/devices\/0\.json attestKey: not an EC private JWK/);
    writeFileSync(path, good.slice(0, 100));
    expect(() => FleetIdentityStore.open({ stateDir, seed: 'd' }).device(0)).toThrow(/devices\/0\.json: not valid JSON/);
  });

  test('a state directory turns creation into loading (cost figures: bench/identity-cost.ts)', () => {
    const stateDir = join(tmp, 'cost');
    const N = 200;
    const mem = FleetIdentityStore.open({ seed: 'cost' });
    mem.devices(0, 20); // warm up
    let t = performance.now();
    mem.devices(20, N);
    const inMemory = (performance.now() - t) / N;
    expect(mem.stats).toEqual({ created: N + 20, loaded: 0 });

    const disk = FleetIdentityStore.open({ stateDir, seed: 'cost' });
    t = performance.now();
    disk.devices(0, N);
    const created = (performance.now() - t) / N;

    const reopened = FleetIdentityStore.open({ stateDir, seed: 'cost' });
    t = performance.now();
    reopened.devices(0, N);
    const loaded = (performance.now() - t) / N;
    expect(reopened.stats.loaded).toBe(N);
    console.log(
      `identity cost per device: create ${inMemory.toFixed(2)} ms in memory, ${created.toFixed(2)} ms with state files; ` +
        `reload ${loaded.toFixed(2)} ms`,
    );
    expect(disk.stats).toEqual({ created: N, loaded: 0 });
  });

  test('createDeviceIdentity is usable without a store (pure, in memory)', () => {
    const ca = createFleetCa('pure', NOW);
    const { identity, stored } = createDeviceIdentity(ca, 'pure', 41, NOW);
    expect(identity.serial).toBe(hardwareSerial('pure', 41));
    expect(stored.deviceKey.d).toBeTruthy();
    expect(new X509Certificate(identity.onboardCertPem).verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
  });
});

describe('state directory modes', () => {
  test("a state directory made inside an existing folder is 0700, and the folder's own mode is left alone", () => {
    // The parent may be /tmp or the user's home: evesim once chmod-ed it to 0700.
    const parent = join(tmp, 'shared-parent');
    mkdirSync(parent, { mode: 0o755 });
    chmodSync(parent, 0o1777);
    const stateDir = join(parent, 'state');
    const store = FleetIdentityStore.open({ stateDir, seed: 77 });
    store.release();
    loadOrCreateControllerPki(join(parent, 'controller'), { rootKeyType: 'ec' });
    expect(statSync(parent).mode & 0o7777).toBe(0o1777);
    expect(mode(stateDir)).toBe(0o700);
    expect(mode(join(parent, 'controller'))).toBe(0o700);
  });
});

describe('embedded controller PKI', () => {
  test('created once with keys 0600, reloaded unchanged; chain and TLS certificate as required', async () => {
    const dir = join(tmp, 'controller-pki');
    const pki = loadOrCreateControllerPki(dir);
    const again = loadOrCreateControllerPki(dir);
    expect(again.root.certPem).toBe(pki.root.certPem);
    expect(again.signing.certPem).toBe(pki.signing.certPem);
    expect(again.signing.key.export({ format: 'jwk' })).toEqual(pki.signing.key.export({ format: 'jwk' }));
    expect(mode(dir)).toBe(0o700);
    for (const f of readdirSync(dir)) expect(mode(join(dir, f))).toBe(f.endsWith('.key.pem') ? 0o600 : 0o644);
    expect(readdirSync(dir).filter((f) => f.endsWith('.key.pem'))).toHaveLength(5);

    const root = new X509Certificate(pki.root.certPem);
    const inter = new X509Certificate(pki.intermediate.certPem);
    expect(root.ca && inter.ca).toBe(true);
    for (const leaf of [pki.signing.certPem, pki.ecdh.certPem]) {
      const c = new X509Certificate(leaf);
      expect(c.ca).toBe(false);
      expect(c.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
      expect(c.checkIssued(inter) && c.verify(inter.publicKey)).toBe(true);
    }
    expect(inter.checkIssued(root) && inter.verify(root.publicKey)).toBe(true);
    const tlsCert = new X509Certificate(pki.tls.certPem);
    expect(tlsCert.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1');
    expect(tlsCert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(tlsCert.checkHost('localhost')).toBe('localhost');

    // A real TLS handshake on 127.0.0.1 with verification on, trusting only our root.
    const server = createServer({ cert: pki.tls.certPem, key: pki.tls.keyPem }, (s) => s.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      for (const servername of [undefined, 'localhost']) {
        const got = await new Promise<string>((resolve, reject) => {
          const sock = connect({ host: '127.0.0.1', port, ca: pki.root.certPem, ...(servername ? { servername } : {}) }, () => undefined);
          let data = '';
          sock.on('data', (d) => (data += d));
          sock.on('end', () => resolve(data));
          sock.on('error', reject);
        });
        expect(got).toBe('ok');
      }
      // and a client trusting another root refuses it
      const other = loadOrCreateControllerPki(join(tmp, 'other-pki'));
      await expect(
        new Promise((resolve, reject) => {
          const sock = connect({ host: '127.0.0.1', port, ca: other.root.certPem }, () => resolve('connected'));
          sock.on('error', reject);
        }),
      ).rejects.toThrow(/certificate/);
    } finally {
      server.close();
    }
  });

  test('RSA root option (like Eden) still chains ECDSA leaves', () => {
    // 2048 bits keeps the test fast; the default is 4096 as Eden's root.
    const pki = loadOrCreateControllerPki(join(tmp, 'rsa-pki'), { rootKeyType: 'rsa', rsaBits: 2048 });
    const root = new X509Certificate(pki.root.certPem);
    expect(root.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const inter = new X509Certificate(pki.intermediate.certPem);
    expect(inter.verify(root.publicKey)).toBe(true);
    expect(readFileSync(join(tmp, 'rsa-pki', 'root.key.pem'), 'utf8')).toContain('PRIVATE KEY');
  });
});

describe('generated keys', () => {
  test('P-256 and RSA pairs match, and export as JWK (they share nothing with a generation job)', async () => {
    const { generateP256, generateRsaAsync, privateKeyToJwk } = await import('../src/identity/keys.js');
    const { createPublicKey } = await import('node:crypto');
    const ec = generateP256();
    const jwk = privateKeyToJwk(ec.privateKey);
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256' });
    expect(createPublicKey(ec.privateKey).export({ format: 'jwk' })).toEqual(ec.publicKey.export({ format: 'jwk' }));
    const rsa = await generateRsaAsync(1024);
    expect(privateKeyToJwk(rsa.privateKey)).toMatchObject({ kty: 'RSA', e: 'AQAB' });
    expect(rsa.publicKey.asymmetricKeyDetails?.modulusLength).toBe(1024);
  });
});
