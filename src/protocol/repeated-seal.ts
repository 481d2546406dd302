// A request whose payload is byte for byte the one sealed last time (a config poll while neither
// the configuration hash nor the integrity token changed) can go out in the same AuthContainer:
// the signature is over SHA-256 of the payload only, so it still verifies. A deterministic ECDSA
// signer (RFC 6979) would send exactly these bytes again; EVE's Go signer draws a fresh nonce, so
// its repeated polls differ only in the signature, and the protocol has no replay check that could
// tell the two apart. Sparing the sign and the encode matters because config polls are about 40 %
// of a device's requests at EVE's default timers.
//
// The kept envelope is a latin1 string (one byte per char) so it lives in the V8 heap, about 230
// bytes a device, rather than as a typed array with its own backing store.

/** Where the payload sits inside an AuthContainer's bytes, or undefined if it is not where protobufjs
 *  puts it (field 1 `protectedPayload` first, holding field 1 `payload`). */
function payloadSpan(sealed: string): { at: number; length: number } | undefined {
  let at = 0;
  const varint = (): number => {
    let v = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (at >= sealed.length) return -1;
      const b = sealed.charCodeAt(at++);
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
    }
    return -1;
  };
  if (sealed.charCodeAt(at++) !== 0x0a) return undefined;
  const bodyLength = varint();
  if (bodyLength < 0) return undefined;
  if (bodyLength === 0) return { at, length: 0 };
  const bodyStart = at;
  if (sealed.charCodeAt(at++) !== 0x0a) return undefined;
  const length = varint();
  if (length < 0 || at + length !== bodyStart + bodyLength || at + length > sealed.length) return undefined;
  return { at, length };
}

/** The envelope to keep for `payload`, or undefined when its bytes do not hold the payload where
 *  `sealedAgain` will look for it (then nothing is reused). */
export function keepSeal(sealed: Uint8Array, payload: Uint8Array): string | undefined {
  const kept = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength).toString('latin1');
  return sealedAgain(kept, payload) === undefined ? undefined : kept;
}

/** The kept envelope's bytes if it carries exactly `payload`, else undefined. */
export function sealedAgain(kept: string, payload: Uint8Array): Uint8Array | undefined {
  const span = payloadSpan(kept);
  if (span === undefined || span.length !== payload.length) return undefined;
  for (let i = 0; i < payload.length; i++) if (kept.charCodeAt(span.at + i) !== payload[i]) return undefined;
  return Buffer.from(kept, 'latin1');
}
