// Bytes fields of decoded messages. protobufjs leaves an unset bytes field as its shared default
// `[]` (a plain Array, not a Uint8Array); node:crypto and Buffer need real bytes.

const EMPTY = new Uint8Array(0);

export function bytesOf(v: Uint8Array | readonly number[] | null | undefined): Uint8Array {
  if (v instanceof Uint8Array) return v;
  return v && v.length > 0 ? Uint8Array.from(v) : EMPTY;
}
