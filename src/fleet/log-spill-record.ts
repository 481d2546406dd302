// The record layout of a log spill segment (log-spill-file.ts): records appended one after the
// other, each a 12-byte header then the log file's bytes, little-endian:
//
//   u32 magic 0x4c475331 ("LGS1")   u32 fleet device index   u32 byte length   <length bytes>
//
// Pure encoding and decoding, so a segment can be checked (or read by a person) apart from the store.

export const SPILL_RECORD_MAGIC = 0x4c475331;
export const SPILL_RECORD_HEADER_BYTES = 12;

export interface SpillRecord {
  device: number;
  /** Offset of `bytes` in the segment. */
  offset: number;
  bytes: Uint8Array;
}

/** The header of one record of `length` bytes for `device`. */
export function encodeSpillHeader(device: number, length: number): Uint8Array {
  const h = new Uint8Array(SPILL_RECORD_HEADER_BYTES);
  const v = new DataView(h.buffer);
  v.setUint32(0, SPILL_RECORD_MAGIC, true);
  v.setUint32(4, device >>> 0, true);
  v.setUint32(8, length >>> 0, true);
  return h;
}

/** Every record of a segment's bytes, in the order written. Throws naming the offset of a bad record. */
export function decodeSpillRecords(segment: Uint8Array): SpillRecord[] {
  const out: SpillRecord[] = [];
  const v = new DataView(segment.buffer, segment.byteOffset, segment.byteLength);
  let at = 0;
  while (at < segment.length) {
    if (segment.length - at < SPILL_RECORD_HEADER_BYTES) throw new Error(`log spill segment: truncated record header at offset ${at}`);
    const magic = v.getUint32(at, true);
    if (magic !== SPILL_RECORD_MAGIC) throw new Error(`log spill segment: bad record magic 0x${magic.toString(16)} at offset ${at}`);
    const device = v.getUint32(at + 4, true);
    const length = v.getUint32(at + 8, true);
    const offset = at + SPILL_RECORD_HEADER_BYTES;
    if (offset + length > segment.length) throw new Error(`log spill segment: record at offset ${at} runs past the end (${length} bytes)`);
    out.push({ device, offset, bytes: segment.subarray(offset, offset + length) });
    at = offset + length;
  }
  return out;
}
