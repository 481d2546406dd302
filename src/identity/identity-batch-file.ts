// The binary file a worker writes its newly made device identities into, a few thousand at a time
// (devices/batch-*.ids in the fleet state directory, mode 0600: it holds private keys). One file
// per batch instead of one JSON file per device: 100,000 devices were 100,000 files, each written
// aside and linked into place, and loading meant parsing PEM and JWK text for each.
//
// Layout, all integers big-endian:
//   "EVESIMID"  8 bytes magic
//   version     u32 (1)
//   count       u32 records
//   count × { length u32, record }
//   SHA-256 of everything above, 32 bytes (a damaged or truncated file is detected, not misread)
// record:
//   index u32, serial (u8 length + ASCII), softSerial (u8 length + ASCII),
//   4 × { length u16, certificate DER } in the order onboarding, device, attestation, ECDH,
//   4 × 32-byte private scalar in the same order, and the device key's 65-byte public point.

import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

/** One device's identity as the batch file holds it. */
export interface CompactDeviceIdentity {
  index: number;
  serial: string;
  softSerial: string;
  /** DER of the onboarding, device, attestation and ECDH certificates. */
  certs: readonly [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  /** Private scalars (32 bytes each) of the onboarding, device, attestation and ECDH keys. */
  scalars: readonly [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  /** Uncompressed public point of the device key (imported on every load, so kept beside its scalar). */
  devicePoint: Uint8Array;
  /** Where the four length-prefixed certificates sit in the file (decodeIdentityBatch sets it). */
  certsAt?: CertificatesRegion;
}

/** The bytes of a record's four length-prefixed certificates in its batch file. */
export interface CertificatesRegion {
  at: number;
  length: number;
}

const MAGIC = Buffer.from('EVESIMID', 'latin1');
const VERSION = 1;
const HEADER = 16;
const DIGEST = 32;

/** Bytes of the four certificates with their length prefixes. */
function certificatesLength(certs: readonly Uint8Array[]): number {
  return certs.reduce((n, c) => n + 2 + c.length, 0);
}

function recordLength(r: CompactDeviceIdentity): number {
  return 4 + 1 + r.serial.length + 1 + r.softSerial.length + certificatesLength(r.certs) + 4 * 32 + 65;
}

/**
 * The bytes of a batch file holding `records`; `certsAt`, when given, receives where each
 * record's certificates were written (in record order), as decodeIdentityBatch reports them.
 */
export function encodeIdentityBatch(records: readonly CompactDeviceIdentity[], certsAt?: CertificatesRegion[]): Buffer {
  const size = HEADER + records.reduce((n, r) => n + 4 + recordLength(r), 0) + DIGEST;
  const out = Buffer.alloc(size);
  MAGIC.copy(out, 0);
  out.writeUInt32BE(VERSION, 8);
  out.writeUInt32BE(records.length, 12);
  let at = HEADER;
  for (const r of records) {
    out.writeUInt32BE(recordLength(r), at);
    at = out.writeUInt32BE(r.index, at + 4);
    for (const text of [r.serial, r.softSerial]) {
      if (text.length > 255 || !/^[\x20-\x7e]*$/.test(text)) throw new Error(`device ${r.index}: serial ${JSON.stringify(text)} is not short printable ASCII`);
      out[at++] = text.length;
      at += out.write(text, at, 'latin1');
    }
    certsAt?.push({ at, length: certificatesLength(r.certs) });
    for (const c of r.certs) {
      if (c.length > 0xffff) throw new Error(`device ${r.index}: certificate of ${c.length} bytes`);
      at = out.writeUInt16BE(c.length, at);
      out.set(c, at);
      at += c.length;
    }
    for (const d of r.scalars) {
      if (d.length !== 32) throw new Error(`device ${r.index}: private scalar of ${d.length} bytes`);
      out.set(d, at);
      at += 32;
    }
    if (r.devicePoint.length !== 65) throw new Error(`device ${r.index}: device public point of ${r.devicePoint.length} bytes`);
    out.set(r.devicePoint, at);
    at += 65;
  }
  createHash('sha256').update(out.subarray(0, at)).digest().copy(out, at);
  return out;
}

/**
 * The four certificates of a record, read again from its batch file (`region` as the file was
 * written or read). `where` names the device in errors: the file must still be there, unchanged.
 */
export function readCertificates(path: string, region: CertificatesRegion, where: string): Uint8Array[] {
  const bytes = Buffer.alloc(region.length);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const n = readSync(fd, bytes, 0, region.length, region.at);
    if (n !== region.length) throw new Error(`the file ends ${region.length - n} bytes early`);
  } catch (e) {
    throw new Error(`${where}: cannot read its certificates from ${path} (bytes ${region.at}+${region.length}): ${(e as Error).message}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const certs: Uint8Array[] = [];
  let at = 0;
  for (let c = 0; c < 4; c++) {
    const n = at + 2 <= bytes.length ? bytes.readUInt16BE(at) : -1;
    if (n < 0 || at + 2 + n > bytes.length || bytes[at + 2] !== 0x30) throw new Error(`${where}: ${path} no longer holds its certificates at bytes ${region.at}+${region.length} (changed since it was read)`);
    certs.push(bytes.subarray(at + 2, at + 2 + n));
    at += 2 + n;
  }
  if (at !== bytes.length) throw new Error(`${where}: ${path} no longer holds its certificates at bytes ${region.at}+${region.length} (changed since it was read)`);
  return certs;
}

/**
 * The records of a batch file; `where` names the file in errors. The returned byte arrays are
 * views into `bytes`.
 */
export function decodeIdentityBatch(bytes: Uint8Array, where: string): CompactDeviceIdentity[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < HEADER + DIGEST || !buf.subarray(0, 8).equals(MAGIC)) throw new Error(`${where}: not an evesim identity batch file`);
  const version = buf.readUInt32BE(8);
  if (version !== VERSION) throw new Error(`${where}: identity batch file version ${version}, this evesim reads version ${VERSION}`);
  const end = buf.length - DIGEST;
  const digest = createHash('sha256').update(buf.subarray(0, end)).digest();
  if (!digest.equals(buf.subarray(end))) throw new Error(`${where}: damaged or truncated (checksum mismatch)`);
  const count = buf.readUInt32BE(12);
  const out: CompactDeviceIdentity[] = [];
  let at = HEADER;
  const need = (n: number, what: string): void => {
    if (at + n > end) throw new Error(`${where}: record ${out.length} ends inside its ${what}`);
  };
  for (let i = 0; i < count; i++) {
    need(4, 'length');
    const length = buf.readUInt32BE(at);
    at += 4;
    const recordEnd = at + length;
    need(length, 'body');
    need(4, 'index');
    const index = buf.readUInt32BE(at);
    at += 4;
    const texts: string[] = [];
    for (const what of ['serial', 'softSerial']) {
      need(1, what);
      const n = buf[at++]!;
      need(n, what);
      texts.push(buf.toString('latin1', at, at + n));
      at += n;
    }
    const certsAt = at;
    const certs: Uint8Array[] = [];
    for (let c = 0; c < 4; c++) {
      need(2, 'certificate length');
      const n = buf.readUInt16BE(at);
      at += 2;
      need(n, 'certificate');
      certs.push(buf.subarray(at, at + n));
      at += n;
    }
    need(4 * 32 + 65, 'keys');
    const scalars: Uint8Array[] = [];
    for (let k = 0; k < 4; k++, at += 32) scalars.push(buf.subarray(at, at + 32));
    const devicePoint = buf.subarray(at, at + 65);
    at += 65;
    if (at !== recordEnd) throw new Error(`${where}: record ${i} (device ${index}) is ${length} bytes long but holds ${length - (recordEnd - at)}`);
    out.push({
      index,
      serial: texts[0]!,
      softSerial: texts[1]!,
      certs: certs as unknown as CompactDeviceIdentity['certs'],
      scalars: scalars as unknown as CompactDeviceIdentity['scalars'],
      devicePoint,
      certsAt: { at: certsAt, length: certificatesLength(certs) },
    });
  }
  if (at !== end) throw new Error(`${where}: ${end - at} bytes after the last of its ${count} records`);
  return out;
}
