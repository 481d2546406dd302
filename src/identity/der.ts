// The few DER (ASN.1 distinguished encoding) building blocks an X.509 certificate needs.
// Written by hand because building certificates through @peculiar/x509 costs about 4.6 ms each on
// this machine, against about 0.1 ms here with a synchronous node:crypto signature; a fleet needs
// four certificates per device.

export type Der = Uint8Array;

/** Bytes of the DER length field of `n` content bytes. */
function lengthSize(n: number): number {
  if (n < 0x80) return 1;
  let bytes = 0;
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes++;
  return 1 + bytes;
}

/** A tag-length-value element around already encoded contents. */
export function tlv(tag: number, ...contents: Der[]): Der {
  let size = 0;
  for (const c of contents) size += c.length;
  const lenSize = lengthSize(size);
  const out = new Uint8Array(1 + lenSize + size);
  out[0] = tag;
  // Length written in place (no intermediate arrays: a certificate is built from ~60 elements).
  if (lenSize === 1) out[1] = size;
  else {
    out[1] = 0x80 | (lenSize - 1);
    for (let i = lenSize - 1, v = size; i >= 1; i--, v = Math.floor(v / 256)) out[1 + i] = v & 0xff;
  }
  let at = 1 + lenSize;
  for (const c of contents) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

export const seq = (...items: Der[]): Der => tlv(0x30, ...items);
export const set = (...items: Der[]): Der => tlv(0x31, ...items);
/** [n] EXPLICIT, constructed context tag. */
export const explicit = (n: number, inner: Der): Der => tlv(0xa0 | n, inner);
export const octetString = (bytes: Uint8Array): Der => tlv(0x04, bytes);
export const nullValue = (): Der => Uint8Array.of(0x05, 0x00);
export const boolean = (v: boolean): Der => Uint8Array.of(0x01, 0x01, v ? 0xff : 0x00);

/** INTEGER from unsigned big-endian bytes: minimal length, positive (leading 0x00 when the top bit is set). */
export function unsignedInteger(bytes: Uint8Array): Der {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const trimmed = bytes.subarray(i);
  if (trimmed.length === 0) return Uint8Array.of(0x02, 0x01, 0x00);
  const body = (trimmed[0]! & 0x80) !== 0 ? concat(Uint8Array.of(0), trimmed) : trimmed;
  return tlv(0x02, body);
}

export function smallInteger(n: number): Der {
  if (!Number.isInteger(n) || n < 0 || n > 0x7fffffff) throw new RangeError(`DER integer out of range: ${n}`);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return unsignedInteger(Uint8Array.from(bytes.length ? bytes : [0]));
}

export function oid(dotted: string): Der {
  const parts = dotted.split('.').map(Number);
  if (parts.length < 2 || parts.some((p) => !Number.isInteger(p) || p < 0)) throw new Error(`bad OID ${dotted}`);
  const body: number[] = [parts[0]! * 40 + parts[1]!];
  for (const p of parts.slice(2)) {
    const chunk: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    body.push(...chunk);
  }
  return tlv(0x06, Uint8Array.from(body));
}

/** BIT STRING with no unused bits (keys, signatures). */
export const bitStringBytes = (bytes: Uint8Array): Der => tlv(0x03, Uint8Array.of(0), bytes);

/**
 * BIT STRING of named bits (bit 0 is the most significant bit of the first byte), trimmed to the
 * last set bit as DER requires, e.g. X.509 KeyUsage.
 */
export function namedBits(bits: number[]): Der {
  if (bits.length === 0) return Uint8Array.of(0x03, 0x01, 0x00);
  const last = Math.max(...bits);
  const bytes = new Uint8Array(Math.floor(last / 8) + 1);
  for (const b of bits) bytes[Math.floor(b / 8)]! |= 0x80 >> b % 8;
  return tlv(0x03, Uint8Array.of(7 - (last % 8)), bytes);
}

const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

/** PrintableString when the text allows it, else UTF8String (what Go's encoding/asn1 picks). */
export function directoryString(text: string): Der {
  const bytes = Buffer.from(text, 'utf8');
  return tlv(PRINTABLE.test(text) ? 0x13 : 0x0c, bytes);
}

export const ia5String = (text: string): Der => tlv(0x16, Buffer.from(text, 'latin1'));

/** RFC 5280: UTCTime through 2049, GeneralizedTime from 2050; whole seconds. */
export function time(d: Date): Der {
  const y = d.getUTCFullYear();
  const two = (n: number): string => String(n).padStart(2, '0');
  const rest = `${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}${two(d.getUTCSeconds())}Z`;
  if (y >= 1950 && y < 2050) return tlv(0x17, Buffer.from(`${two(y % 100)}${rest}`, 'latin1'));
  return tlv(0x18, Buffer.from(`${String(y).padStart(4, '0')}${rest}`, 'latin1'));
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
