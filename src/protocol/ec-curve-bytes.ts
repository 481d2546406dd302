// The coordinate size of an EC key's curve (32 for P-256), which r‖s signatures are padded to.
// Not read with asymmetricKeyDetails: that makes OpenSSL 3 keep a legacy copy of the key beside
// its provider key for the key's life (about 2 KiB per device key; envelope.ts). Keys whose curve
// their maker knows are told here when made; any other key's is read once from its SPKI export
// (about 0.15 ms, OpenSSL's encoder framework), and kept.

import { createPublicKey, type KeyObject } from 'node:crypto';

const curveBytesOfKey = new WeakMap<KeyObject, number | undefined>();

/** Records the curve size of a key its maker knows (our P-256 keys), so it is never looked up. */
export function rememberEcCurveBytes(key: KeyObject, bytes: number): KeyObject {
  curveBytesOfKey.set(key, bytes);
  return key;
}

/** Bytes per coordinate of an EC key's curve; undefined for other keys. */
export function ecCurveBytes(key: KeyObject): number | undefined {
  if (curveBytesOfKey.has(key)) return curveBytesOfKey.get(key);
  const bytes = key.asymmetricKeyType === 'ec' ? spkiCoordinateBytes(key) : undefined;
  curveBytesOfKey.set(key, bytes);
  return bytes;
}

/**
 * SubjectPublicKeyInfo ::= SEQUENCE { AlgorithmIdentifier SEQUENCE, BIT STRING { 0 unused bits,
 * 04 ‖ x ‖ y } }: the coordinate size is half the uncompressed point after its 04.
 */
function spkiCoordinateBytes(key: KeyObject): number | undefined {
  const spki = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'der', type: 'spki' });
  let at = 1;
  const length = (): number => {
    const first = spki[at++]!;
    if (first < 0x80) return first;
    let n = 0;
    for (let i = first & 0x7f; i > 0; i--) n = n * 256 + spki[at++]!;
    return n;
  };
  length();
  if (spki[at++] !== 0x30) return undefined;
  const algorithmLength = length();
  at += algorithmLength;
  if (spki[at++] !== 0x03) return undefined;
  const bits = length();
  if (spki[at] !== 0x00 || spki[at + 1] !== 0x04 || bits < 3 || bits % 2 !== 0) return undefined;
  return (bits - 2) / 2;
}
