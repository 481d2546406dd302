// Signatures this thread has already verified, by key: a controller answers many devices with the
// same signed bytes (the sink's precomputed attestation answers, a group's configuration signed
// once), and verifying the same signature over the same payload with the same key again gives the
// same answer. Devices still verify every answer; the second time for identical bytes is a lookup
// (key object, signature, exact payload bytes compared). Only successes are remembered, and only
// a few: ECDSA signatures are randomised, so answers signed per request never repeat and leave the
// memo as cheap as a miss.

import type { KeyObject } from 'node:crypto';

const PER_KEY = 64;
const memo = new WeakMap<KeyObject, Map<string, Uint8Array>>();

function sigKey(signature: Uint8Array): string {
  return Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength).toString('latin1');
}

/** Whether `signature` over exactly `payload` was verified with `key` before on this thread. */
export function knownGood(payload: Uint8Array, signature: Uint8Array, key: KeyObject): boolean {
  const seen = memo.get(key)?.get(sigKey(signature));
  return seen !== undefined && Buffer.compare(seen, payload) === 0;
}

/** Remembers a signature that verified (a copy of the payload: the caller's buffer may be reused). */
export function rememberGood(payload: Uint8Array, signature: Uint8Array, key: KeyObject): void {
  let m = memo.get(key);
  if (!m) memo.set(key, (m = new Map()));
  if (m.size >= PER_KEY) m.delete(m.keys().next().value as string);
  m.set(sigKey(signature), Buffer.from(payload));
}
