// Unknown-field bookkeeping. protobufjs 8 keeps the raw bytes of fields it does
// not know (tag included) in a non-enumerable `$unknowns` array on each decoded
// message when the Reader's discardUnknown flag is off, and its encoder writes
// them back after the known fields. This file only inspects that storage.
import protobuf from 'protobufjs';

export interface UnknownField {
  /** Dotted path of the message holding it, from the top-level message ('' = top). */
  path: string;
  fieldNumber: number;
  wireType: number;
  /** Raw bytes of the whole field: tag, and length prefix if any, and value. */
  raw: Uint8Array;
}

type WithUnknowns = { $unknowns?: Uint8Array[] };

/** Raw unknown-field records stored directly on `msg` (not nested ones). */
export function ownUnknownFields(msg: object): Uint8Array[] {
  return Object.prototype.hasOwnProperty.call(msg, '$unknowns') ? ((msg as WithUnknowns).$unknowns ?? []) : [];
}

function describe(raw: Uint8Array, path: string): UnknownField {
  const tag = new protobuf.Reader(raw).uint32();
  return { path, fieldNumber: tag >>> 3, wireType: tag & 7, raw };
}

/** Every unknown field in `msg` and its nested messages, depth first. */
export function collectUnknownFields(type: protobuf.Type, msg: object, path = ''): UnknownField[] {
  const out = ownUnknownFields(msg).map((raw) => describe(raw, path));
  const rec = msg as Record<string, unknown>;
  for (const field of type.fieldsArray) {
    const sub = field.resolvedType;
    if (!(sub instanceof protobuf.Type)) continue;
    const value = rec[field.name];
    if (value == null) continue;
    const here = path ? `${path}.${field.name}` : field.name;
    if (field.map) {
      for (const [k, v] of Object.entries(value as Record<string, object>)) out.push(...collectUnknownFields(sub, v, `${here}[${k}]`));
    } else if (field.repeated) {
      (value as object[]).forEach((v, i) => out.push(...collectUnknownFields(sub, v, `${here}[${i}]`)));
    } else {
      out.push(...collectUnknownFields(sub, value as object, here));
    }
  }
  return out;
}
