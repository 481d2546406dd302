// ECDSA signature encodings: raw r||s (fixed width, what node's 'ieee-p1363' gives and what EVE's
// envelopes use) and ASN.1 DER SEQUENCE{INTEGER r, INTEGER s} (what EVE sends as the quote signature
// and what tpm2_quote -f plain writes). Converting here avoids signing twice.

export class SignatureFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignatureFormatError';
  }
}

function derInteger(v: Uint8Array): Uint8Array {
  let start = 0;
  while (start < v.length - 1 && v[start] === 0) start++;
  const pad = v[start]! & 0x80 ? 1 : 0;
  const len = v.length - start + pad;
  const out = new Uint8Array(2 + len);
  out[0] = 0x02;
  out[1] = len;
  out.set(v.subarray(start), 2 + pad);
  return out;
}

/** DER SEQUENCE{r, s} from two big-endian unsigned integers (each at most 127 bytes encoded). */
export function ecdsaDerFromParts(r: Uint8Array, s: Uint8Array): Uint8Array {
  const ri = derInteger(r);
  const si = derInteger(s);
  const bodyLen = ri.length + si.length;
  if (bodyLen > 127) throw new SignatureFormatError(`ECDSA signature too large for short-form DER (${bodyLen} bytes)`);
  const out = new Uint8Array(2 + bodyLen);
  out[0] = 0x30;
  out[1] = bodyLen;
  out.set(ri, 2);
  out.set(si, 2 + ri.length);
  return out;
}

/** DER SEQUENCE{r, s} from r||s (each half is one coordinate). */
export function ecdsaRsToDer(rs: Uint8Array): Uint8Array {
  if (rs.length === 0 || rs.length % 2 !== 0) throw new SignatureFormatError(`r||s signature must have an even, non-zero length, got ${rs.length}`);
  const half = rs.length / 2;
  return ecdsaDerFromParts(rs.subarray(0, half), rs.subarray(half));
}

/** Where r and s sit in a DER SEQUENCE{INTEGER r, INTEGER s}: minimal big-endian, no sign byte. */
interface DerParts {
  rAt: number;
  rLen: number;
  sAt: number;
  sLen: number;
}

function derPartsAt(der: Uint8Array): DerParts {
  const bad = (why: string): never => {
    throw new SignatureFormatError(`ECDSA DER signature: ${why}`);
  };
  if (der.length < 8 || der[0] !== 0x30) bad('does not start with a SEQUENCE');
  let at = 1;
  let seqLen = der[at++]!;
  if (seqLen === 0x81) seqLen = der[at++]!;
  else if (seqLen > 0x80) bad('unsupported length form');
  if (at + seqLen !== der.length) bad(`SEQUENCE length ${seqLen} does not match the ${der.length - at} bytes that follow`);
  const int = (which: string): number => {
    if (der[at++] !== 0x02) bad(`${which} is not an INTEGER`);
    const len = der[at++]!;
    if (len === 0 || len > 0x7f || at + len > der.length) bad(`${which} has a bad length ${len}`);
    if (der[at]! & 0x80) bad(`${which} is negative`);
    const start = at;
    at += len;
    return start;
  };
  let rAt = int('r');
  const rEnd = at;
  let sAt = int('s');
  const sEnd = at;
  if (at !== der.length) bad('trailing bytes after s');
  while (rEnd - rAt > 1 && der[rAt] === 0) rAt++;
  while (sEnd - sAt > 1 && der[sAt] === 0) sAt++;
  return { rAt, rLen: rEnd - rAt, sAt, sLen: sEnd - sAt };
}

/** r and s, minimal big-endian (no sign byte), from a DER SEQUENCE{INTEGER r, INTEGER s}. */
export function ecdsaDerParts(der: Uint8Array): { r: Uint8Array; s: Uint8Array } {
  const p = derPartsAt(der);
  return { r: der.slice(p.rAt, p.rAt + p.rLen), s: der.slice(p.sAt, p.sAt + p.sLen) };
}

/** Left-pads a big-endian integer to `size` bytes (the TPM pads r and s to the curve order size). */
export function padTo(v: Uint8Array, size: number, what = 'integer'): Uint8Array {
  if (v.length > size) throw new SignatureFormatError(`${what} has ${v.length} bytes, more than ${size}`);
  const out = new Uint8Array(size);
  out.set(v, size - v.length);
  return out;
}

/**
 * r||s, each half `size` bytes (32 for P-256), from DER. Written straight into the result: the
 * request signature goes through here on every request (signing DER keeps OpenSSL from caching a
 * second copy of each key, see envelope.ts).
 */
export function ecdsaDerToRs(der: Uint8Array, size = 32): Uint8Array {
  const p = derPartsAt(der);
  if (p.rLen > size) throw new SignatureFormatError(`r has ${p.rLen} bytes, more than ${size}`);
  if (p.sLen > size) throw new SignatureFormatError(`s has ${p.sLen} bytes, more than ${size}`);
  const out = new Uint8Array(2 * size);
  out.set(der.subarray(p.rAt, p.rAt + p.rLen), size - p.rLen);
  out.set(der.subarray(p.sAt, p.sAt + p.sLen), 2 * size - p.sLen);
  return out;
}
