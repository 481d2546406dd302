// Typed binary + JSON codecs for EVE messages, by full protobuf name, over the
// reflection root built from our own .proto files (proto-root.ts).
// - decode keeps unknown fields; encode writes them back (protobufjs $unknowns).
// - 64-bit integers are JS numbers; enums are numbers; bytes are Uint8Array.
import protobuf from 'protobufjs';
import { eveRoot } from './proto-root.js';
import { encodeWithKeptWriter } from './encode-writer.js';
import { messageFromJson, messageToJson, type ToJsonOptions } from './proto-json.js';

export { ProtoJsonError, type ToJsonOptions } from './proto-json.js';

export interface Codec<T> {
  /** e.g. 'org.lfedge.eve.auth.AuthContainer' */
  readonly fullName: string;
  /** The reflected protobufjs type (for tooling; not needed for normal use). */
  readonly type: protobuf.Type;
  /** Plain objects accepted; unknown fields kept from decode are re-emitted. */
  encode(msg: T): Uint8Array;
  /** Throws ProtoDecodeError (naming the message) on malformed bytes. */
  decode(bytes: Uint8Array): T;
  /**
   * Proto3 JSON with original field names, enum names, int64 as strings, base64 bytes,
   * RFC 3339 timestamps, defaults omitted. `{ lowerCamelCase: true }` gives protojson's
   * default names instead (as the LPS /api/v1/signal stream uses).
   */
  toJSON(msg: T, options?: ToJsonOptions): Record<string, unknown>;
  /** Inverse of toJSON; throws ProtoJsonError naming the field path. */
  fromJSON(obj: Record<string, unknown>): T;
}

/** Bytes that are not a valid encoding of the named message. */
export class ProtoDecodeError extends Error {
  override readonly name = 'ProtoDecodeError';
  constructor(
    readonly messageName: string,
    readonly byteLength: number,
    cause: unknown,
  ) {
    super(`cannot decode ${messageName} from ${byteLength} bytes: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/** A message object protobufjs could not encode (wrong value types). */
export class ProtoEncodeError extends Error {
  override readonly name = 'ProtoEncodeError';
  constructor(
    readonly messageName: string,
    cause: unknown,
  ) {
    super(`cannot encode ${messageName}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

class ReflectedCodec<T> implements Codec<T> {
  readonly fullName: string;

  constructor(readonly type: protobuf.Type) {
    this.fullName = type.fullName.slice(1);
  }

  encode(msg: T): Uint8Array {
    try {
      return encodeWithKeptWriter(this.type, msg as object);
    } catch (err) {
      throw new ProtoEncodeError(this.fullName, err);
    }
  }

  decode(bytes: Uint8Array): T {
    const reader = new FlatStringReader(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    reader.discardUnknown = false; // nested decoders share this reader
    try {
      return this.type.decode(reader) as T;
    } catch (err) {
      throw new ProtoDecodeError(this.fullName, bytes.length, err);
    }
  }

  toJSON(msg: T, options?: ToJsonOptions): Record<string, unknown> {
    return messageToJson(this.type, msg as object, options) as Record<string, unknown>;
  }

  fromJSON(obj: Record<string, unknown>): T {
    return messageFromJson(this.type, obj) as T;
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** V8 makes a cons string of a concatenation of 13 characters or more (ConsString::kMinLength). */
const FLAT_CONCAT_BELOW = 13;

/**
 * protobufjs's reader with flat strings. Its proto3 string reader (stringVerify) builds a string
 * shorter than 64 bytes 8 characters at a time, so each decoded UUID was a chain of cons strings
 * (~320 bytes of heap kept per string instead of 56), and devices keep many for their whole life
 * (configuration objects, hashes, names). Same rules: invalid UTF-8 is an error (Go's proto3
 * rejects it too), a byte order mark is kept.
 */
class FlatStringReader extends protobuf.BufferReader {
  override stringVerify(): string {
    const length = this.uint32();
    const start = this.pos;
    const end = start + length;
    if (end > this.len) throw new RangeError(`index out of range: ${start} + ${length} > ${this.len}`);
    this.pos = end;
    const buf = this.buf as Buffer;
    if (length < FLAT_CONCAT_BELOW) {
      // V8 copies a concatenation this short into one flat string; no call out for the short ones.
      let s = '';
      for (let i = start; i < end; i++) {
        const c = buf[i]!;
        if (c >= 0x80) return strictUtf8.decode(buf.subarray(start, end));
        s += String.fromCharCode(c);
      }
      return s;
    }
    for (let i = start; i < end; i++) if (buf[i]! >= 0x80) return strictUtf8.decode(buf.subarray(start, end));
    return buf.toString('latin1', start, end);
  }
}

const codecs = new Map<string, Codec<unknown>>();

/** Codec for a message by full name ('org.lfedge.eve.info.ZInfoMsg'); created once, then cached. */
export function codec<T>(fullName: string): Codec<T> {
  let c = codecs.get(fullName);
  if (!c) {
    let type: protobuf.Type;
    try {
      type = eveRoot().lookupType(fullName);
    } catch {
      throw new Error(`unknown EVE message type '${fullName}' (not defined in proto/)`);
    }
    c = new ReflectedCodec<unknown>(type);
    codecs.set(fullName, c);
  }
  return c as Codec<T>;
}
