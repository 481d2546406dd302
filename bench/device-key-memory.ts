// What a device's signing key costs in native memory and CPU, for the ways node:crypto can import
// and use a P-256 key: the way evesim does it now (SEC 1 DER import, DER signatures converted to
// r‖s in JS) beside the ways it did before (JWK import, 'ieee-p1363' signatures) and the mixes.
// OpenSSL 3 keeps a legacy EC_KEY beside its provider key once anything asks for one (a JWK import
// makes one; a 'ieee-p1363' signature or asymmetricKeyDetails converts to one), and keeps both.
//
//   npm run build && node dist/bench/device-key-memory.js [--keys 10000]
//
// Each way runs in a child process of its own (`--way NAME`), so one way's freed memory does not
// serve the next: RSS growth per key over `--keys` keys, each imported and signed with once (kept,
// as a device keeps its key), then the time of an import plus first signature and of later
// signatures.

import { execFileSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { generateP256Raw, p256KeyFromRaw } from '../src/identity/keys.js';
import { signRequestPayload } from '../src/protocol/envelope.js';
import { checkBenchArgs, positiveIntArg, stringArg } from './bench-args.js';
import { machineDescription } from './machine.js';

const USAGE = `device-key-memory: native memory and CPU of a device's P-256 signing key, for each way node:crypto can import and use it.
  node dist/bench/device-key-memory.js [--keys 10000]
  (--way NAME: one way alone, how the bench runs each in a child process)`;
checkBenchArgs(USAGE, ['keys=', 'way=']);

interface Way {
  label: string;
  import: (d: Buffer, x: Buffer, y: Buffer) => KeyObject;
  sign: (payload: Uint8Array, key: KeyObject) => Uint8Array;
}

const jwk = (d: Buffer, x: Buffer, y: Buffer): KeyObject =>
  createPrivateKey({ key: { kty: 'EC', crv: 'P-256', d: d.toString('base64url'), x: x.toString('base64url'), y: y.toString('base64url') }, format: 'jwk' });
const sec1 = (d: Buffer, x: Buffer, y: Buffer): KeyObject => p256KeyFromRaw({ d, point: Buffer.concat([Buffer.of(4), x, y]) });
const p1363 = (payload: Uint8Array, key: KeyObject): Uint8Array => sign('sha256', payload, { key, dsaEncoding: 'ieee-p1363' });

const WAYS: Record<string, Way> = {
  'jwk+p1363': { label: 'JWK import, r‖s signatures (evesim until 2026-11-28)', import: jwk, sign: p1363 },
  'sec1+p1363': { label: 'SEC 1 import, r‖s signatures', import: sec1, sign: p1363 },
  'jwk+der': { label: 'JWK import, DER signatures converted', import: jwk, sign: signRequestPayload },
  'sec1+der': { label: 'SEC 1 import, DER signatures converted (evesim now)', import: sec1, sign: signRequestPayload },
};

const n = positiveIntArg('keys', 10_000);
const way = stringArg('way', '');

function rawKeys(count: number): { d: Buffer; x: Buffer; y: Buffer }[] {
  const out = [];
  for (let i = 0; i < count; i++) {
    const { d, point } = generateP256Raw();
    const p = Buffer.from(point);
    out.push({ d: Buffer.from(d), x: p.subarray(1, 33), y: p.subarray(33, 65) });
  }
  return out;
}

async function settledRss(): Promise<number> {
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((r) => setTimeout(r, 200));
  return process.memoryUsage().rss;
}

async function measureOne(w: Way): Promise<void> {
  const raws = rawKeys(n);
  const payload = new Uint8Array(300).fill(1);
  const before = await settledRss();
  const keys: KeyObject[] = [];
  const t0 = performance.now();
  for (const r of raws) {
    const key = w.import(r.d, r.x, r.y);
    w.sign(payload, key);
    keys.push(key);
  }
  const importAndFirst = ((performance.now() - t0) * 1000) / n;
  const after = await settledRss();
  const rounds = 3;
  const t1 = performance.now();
  for (let i = 0; i < rounds; i++) for (const key of keys) w.sign(payload, key);
  const later = ((performance.now() - t1) * 1000) / (n * rounds);
  const last = keys[keys.length - 1]!;
  if (!verify('sha256', payload, { key: createPublicKey(last), dsaEncoding: 'ieee-p1363' }, w.sign(payload, last))) throw new Error('a signature does not verify');
  console.log(JSON.stringify({ kibPerKey: (after - before) / n / 1024, importAndFirstUs: importAndFirst, signUs: later }));
}

if (way) {
  const w = WAYS[way];
  if (!w) throw new Error(`--way ${way}: not one of ${Object.keys(WAYS).join(', ')}`);
  await measureOne(w);
} else {
  console.log(`machine: ${machineDescription()}`);
  console.log(`${n} P-256 keys per way, each kept and signed with once; RSS growth per key, then CPU:`);
  const self = fileURLToPath(import.meta.url);
  const rows: string[] = [];
  for (const [name, w] of Object.entries(WAYS)) {
    const out = execFileSync(process.execPath, ['--expose-gc', self, '--way', name, '--keys', String(n)], { encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').pop()!) as { kibPerKey: number; importAndFirstUs: number; signUs: number };
    rows.push(`${w.label.padEnd(56)} ${r.kibPerKey.toFixed(2).padStart(6)} KiB/key   import + first signature ${r.importAndFirstUs.toFixed(0).padStart(4)} µs   later signatures ${r.signUs.toFixed(1)} µs`);
  }
  for (const row of rows) console.log(row);
}
