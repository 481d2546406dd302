// A request whose payload is byte for byte the one sealed last time (a config poll while neither
// the configuration hash nor the integrity token changed) can go out in the same AuthContainer:
// the signature is over SHA-256 of the payload only, so it still verifies. A deterministic ECDSA
// signer (RFC 6979) would send exactly these bytes again; EVE's Go signer draws a fresh nonce, so
// its repeated polls differ only in the signature, and the protocol has no replay check that could
// tell the two apart. Sparing the sign and the encode matters because config polls are 29 % of the
// requests of steady-state.yaml at EVE's default timers.
//
// The kept envelope is a latin1 string (one byte per char) so it lives in the V8 heap, about 210
// bytes a device, rather than as a typed array with its own backing store.

import protobuf from 'protobufjs';

/** Where the payload sits inside an AuthContainer's bytes, or undefined if it is not where protobufjs
 *  puts it (field 1 `protectedPayload` first, holding field 1 `payload`). */
function payloadSpan(sealed: Uint8Array): { at: number; length: number } | undefined {
  try {
    const r = new protobuf.Reader(sealed);
    if (r.uint32() !== 0x0a) return undefined; // field 1, length-delimited
    const bodyLength = r.uint32();
    if (bodyLength === 0) return { at: r.pos, length: 0 };
    const bodyEnd = r.pos + bodyLength;
    if (r.uint32() !== 0x0a) return undefined;
    const length = r.uint32();
    if (r.pos + length !== bodyEnd || bodyEnd > sealed.length) return undefined;
    return { at: r.pos, length };
  } catch {
    return undefined; // a varint cut short
  }
}

/** Whether `sealed` carries exactly `payload` where protobufjs puts it. */
function carries(sealed: Uint8Array, payload: Uint8Array): boolean {
  const span = payloadSpan(sealed);
  if (span === undefined || span.length !== payload.length) return false;
  for (let i = 0; i < payload.length; i++) if (sealed[span.at + i] !== payload[i]) return false;
  return true;
}

/** The envelope to keep for `payload`, or undefined when its bytes do not hold the payload where
 *  `sealedAgain` will look for it (then nothing is reused). */
export function keepSeal(sealed: Uint8Array, payload: Uint8Array): string | undefined {
  return carries(sealed, payload) ? Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength).toString('latin1') : undefined;
}

/** The kept envelope's bytes if it carries exactly `payload`, else undefined. */
export function sealedAgain(kept: string, payload: Uint8Array): Uint8Array | undefined {
  const bytes = Buffer.from(kept, 'latin1');
  return carries(bytes, payload) ? bytes : undefined;
}
