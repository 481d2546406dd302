// The batch files that hold a fleet's device identities, and the store that writes and reads them.
import { afterAll, describe, expect, test } from 'vitest';
import { X509Certificate, createPublicKey, sign, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeviceIdentity } from '../src/identity/device-identity.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import { FleetIdentityStore, mayOverlap } from '../src/identity/fleet-identity-store.js';
import { decodeIdentityBatch, encodeIdentityBatch } from '../src/identity/identity-batch-file.js';
import { generateP256Raw, p256KeyFromRaw } from '../src/identity/keys.js';

const tmp = mkdtempSync(join(tmpdir(), 'evesim-batch-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const NOW = Date.parse('2026-11-24T12:00:00Z');
const devicesDir = (s: FleetIdentityStore): string => join(s.dir!, 'devices');
const batchFiles = (s: FleetIdentityStore): string[] => readdirSync(devicesDir(s)).filter((f) => f.endsWith('.ids')).sort();

describe('raw P-256 keys', () => {
  test('32-byte scalar and 65-byte point of one key; every call a new key', () => {
    const a = generateP256Raw();
    const b = generateP256Raw();
    expect([a.d.length, a.point.length, a.point[0]]).toEqual([32, 65, 4]);
    expect(Buffer.from(a.d).equals(Buffer.from(b.d))).toBe(false);
    const key = p256KeyFromRaw(a);
    const jwk = createPublicKey(key).export({ format: 'jwk' });
    expect(Buffer.concat([Buffer.of(4), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]).equals(Buffer.from(a.point))).toBe(true);
    const sig = sign('sha256', Buffer.from('m'), key);
    expect(verify('sha256', Buffer.from('m'), createPublicKey(key), sig)).toBe(true);
    // a point off the curve is refused (a point of another key is not: batch files are checksummed)
    const off = Buffer.from(a.point);
    off[64]! ^= 1;
    expect(() => p256KeyFromRaw({ d: a.d, point: off })).toThrow();
  });
});

describe('identity batch file', () => {
  const ca = createFleetCa('batch', NOW);
  const made = [3, 5, 7].map((i) => createDeviceIdentity(ca, 'batch', i, NOW).compact);

  test('round trip: every field back as written', () => {
    const back = decodeIdentityBatch(encodeIdentityBatch(made), 'f.ids');
    expect(back).toHaveLength(3);
    back.forEach((r, i) => {
      const m = made[i]!;
      expect([r.index, r.serial, r.softSerial]).toEqual([m.index, m.serial, m.softSerial]);
      for (let c = 0; c < 4; c++) expect(Buffer.from(r.certs[c]).equals(Buffer.from(m.certs[c]))).toBe(true);
      for (let k = 0; k < 4; k++) expect(Buffer.from(r.scalars[k]).equals(Buffer.from(m.scalars[k]))).toBe(true);
      expect(Buffer.from(r.devicePoint).equals(Buffer.from(m.devicePoint))).toBe(true);
    });
    expect(decodeIdentityBatch(encodeIdentityBatch([]), 'empty.ids')).toEqual([]);
  });

  test('a damaged, truncated or foreign file is an error naming it', () => {
    const bytes = encodeIdentityBatch(made);
    const flipped = Buffer.from(bytes);
    flipped[200]! ^= 1;
    expect(() => decodeIdentityBatch(flipped, 'a.ids')).toThrow('a.ids: damaged or truncated (checksum mismatch)');
    expect(() => decodeIdentityBatch(bytes.subarray(0, bytes.length - 10), 'b.ids')).toThrow('b.ids: damaged or truncated');
    expect(() => decodeIdentityBatch(Buffer.from('{"version":1}'.padEnd(60)), 'c.ids')).toThrow('c.ids: not an evesim identity batch file');
    const v2 = Buffer.from(bytes);
    v2.writeUInt32BE(2, 8);
    expect(() => decodeIdentityBatch(v2, 'd.ids')).toThrow('d.ids: identity batch file version 2, this evesim reads version 1');
  });

  test('fields that do not fit are refused when writing', () => {
    expect(() => encodeIdentityBatch([{ ...made[0]!, serial: 'ü' }])).toThrow(/serial "ü" is not short printable ASCII/);
    expect(() => encodeIdentityBatch([{ ...made[0]!, devicePoint: new Uint8Array(33) }])).toThrow(/device public point of 33 bytes/);
  });
});

describe('fleet store with batch files', () => {
  test('two shards write their own files (0600); a reopened shard reads only its own, identities and chains unchanged', async () => {
    const stateDir = join(tmp, 'shards');
    const shards = [0, 1].map((w) => ({ first: w, stride: 2, count: 5 }));
    const first = await Promise.all(shards.map((sh) => FleetIdentityStore.open({ stateDir, seed: 's', expect: sh, now: () => NOW }).shardAsync(sh)));
    const probe = FleetIdentityStore.open({ stateDir, seed: 's' });
    const files = batchFiles(probe);
    expect(files.map((f) => f.replace(/-[0-9a-f]+\.ids$/, ''))).toEqual(['batch-0-2-5', 'batch-1-2-5']);
    for (const f of files) expect(statSync(join(devicesDir(probe), f)).mode & 0o777).toBe(0o600);

    // Shard 1's file damaged: shard 0 never reads it, shard 1 is told which file and what to do.
    const shard1File = join(devicesDir(probe), files[1]!);
    const good = readFileSync(shard1File);
    writeFileSync(shard1File, good.subarray(0, 500));
    const again = FleetIdentityStore.open({ stateDir, seed: 's', expect: shards[0]! });
    const loaded = await again.shardAsync(shards[0]!);
    expect(again.stats).toEqual({ created: 0, loaded: 5 });
    expect(() => again.device(1)).toThrow('device 1 is not in the shard this fleet store was opened for');
    // Without a shard given, a file is read when one of the devices its name states is asked for.
    const lazy = FleetIdentityStore.open({ stateDir, seed: 's' });
    expect(lazy.device(4).deviceCertPem).toBe(first[0]![2]!.deviceCertPem);
    expect(() => lazy.device(5)).toThrow(`${shard1File}: damaged or truncated`);
    await expect(FleetIdentityStore.open({ stateDir, seed: 's', expect: shards[1]! }).shardAsync(shards[1]!)).rejects.toThrow(
      `${shard1File}: damaged or truncated (checksum mismatch); remove the state directory ${probe.dir} (or that file) to make new identities`,
    );
    writeFileSync(shard1File, good);

    const ca = new X509Certificate(probe.fleetCaCertPem);
    loaded.forEach((d, k) => {
      const m = first[0]![k]!;
      // the device key object is made on first use, not by the load
      expect((d as unknown as { deviceKeyObject?: object }).deviceKeyObject).toBeUndefined();
      expect([d.index, d.serial, d.softSerial, d.onboardCertPem, d.deviceCertPem, d.attestCertPem, d.ecdhCertPem]).toEqual([
        m.index, m.serial, m.softSerial, m.onboardCertPem, m.deviceCertPem, m.attestCertPem, m.ecdhCertPem,
      ]);
      for (const key of ['deviceKey', 'onboardKey', 'attestKey', 'ecdhKey'] as const) {
        expect(d[key].export({ format: 'jwk' })).toEqual(m[key].export({ format: 'jwk' }));
      }
      const device = new X509Certificate(d.deviceCertPem);
      const onboard = new X509Certificate(d.onboardCertPem);
      expect(onboard.checkIssued(ca) && onboard.verify(ca.publicKey)).toBe(true);
      expect(device.verify(device.publicKey)).toBe(true);
      for (const pem of [d.attestCertPem, d.ecdhCertPem]) {
        const c = new X509Certificate(pem);
        expect(c.checkIssued(device) && c.verify(device.publicKey)).toBe(true);
      }
      expect(createPublicKey(d.deviceKey).export({ format: 'jwk' })).toEqual(device.publicKey.export({ format: 'jwk' }));
      expect(createPublicKey(d.attestKey).export({ format: 'jwk' })).toEqual(new X509Certificate(d.attestCertPem).publicKey.export({ format: 'jwk' }));
    });

    // Read with another worker count (one worker for all ten): every file is read, nothing made.
    const all = FleetIdentityStore.open({ stateDir, seed: 's', expect: { first: 0, stride: 1, count: 10 } });
    const everyone = await all.devicesAsync(0, 10);
    expect(all.stats).toEqual({ created: 0, loaded: 10 });
    expect(everyone[3]!.deviceCertPem).toBe(first[1]![1]!.deviceCertPem);
  });

  test('a state directory of the one-file-per-device layout is still read; new devices go to batch files', () => {
    const stateDir = join(tmp, 'legacy');
    const s = FleetIdentityStore.open({ stateDir, seed: 'old', now: () => NOW });
    const old = [0, 1].map((i) => createDeviceIdentity(s.fleetCa, s.seed, i, NOW).stored);
    old.forEach((o) => writeFileSync(join(devicesDir(s), `${o.index}.json`), JSON.stringify(o) + '\n', { mode: 0o600 }));
    const reopened = FleetIdentityStore.open({ stateDir, seed: 'old', now: () => NOW });
    const ids = reopened.devices(0, 3);
    expect(reopened.stats).toEqual({ created: 1, loaded: 2 });
    expect(ids.slice(0, 2).map((d) => d.deviceCertPem)).toEqual(old.map((o) => o.deviceCertPem));
    expect(ids[0]!.deviceKey.export({ format: 'jwk' })).toEqual(old[0]!.deviceKey);
    expect(batchFiles(s).map((f) => f.replace(/-[0-9a-f]+\.ids$/, ''))).toEqual(['batch-2-1-1']);
  });

  test('identities are written before devices() returns, and never to a memory-only store', () => {
    const stateDir = join(tmp, 'flush');
    const s = FleetIdentityStore.open({ stateDir, seed: 'f', now: () => NOW });
    const made = s.devices(0, 3);
    const other = FleetIdentityStore.open({ stateDir, seed: 'f', now: () => NOW });
    expect(other.devices(0, 3).map((d) => d.deviceCertPem)).toEqual(made.map((d) => d.deviceCertPem));
    expect(other.stats.loaded).toBe(3);
    const mem = FleetIdentityStore.open({ seed: 'f' });
    mem.devices(0, 2);
    mem.release();
    expect(mem.dir).toBeUndefined();
  });

  test('which batch files a shard reads', () => {
    const w0 = { first: 0, stride: 2, count: 50 };
    expect(mayOverlap({ first: 0, stride: 2, count: 4096 }, w0)).toBe(true);
    expect(mayOverlap({ first: 1, stride: 2, count: 4096 }, w0)).toBe(false); // the other worker's
    expect(mayOverlap({ first: 100, stride: 2, count: 10 }, w0)).toBe(false); // beyond the shard
    expect(mayOverlap({ first: 1, stride: 1, count: 10 }, w0)).toBe(true); // another worker count
    expect(mayOverlap({ first: 7, stride: 0, count: 3 }, w0)).toBe(true); // irregular batch
    expect(mayOverlap({ first: 99, stride: 0, count: 3 }, w0)).toBe(false); // irregular, past the shard's last index
  });
});
