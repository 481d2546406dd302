// Proto3 JSON mapping over protobufjs reflection, written for EVE's needs:
// original .proto field names, enum names, 64-bit integers as strings, bytes as
// standard base64, google.protobuf.Timestamp as RFC 3339 (UTC, 0/3/6/9 fraction
// digits), maps as objects, fields holding default values left out.
import protobuf from 'protobufjs';

const TIMESTAMP = '.google.protobuf.Timestamp';
const INT64_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT32_TYPES = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);
const UNSIGNED_TYPES = new Set(['uint32', 'fixed32', 'uint64', 'fixed64']);

/** Bad input to fromJSON: names the message type and the JSON path. */
export class ProtoJsonError extends Error {
  override readonly name = 'ProtoJsonError';
  constructor(
    readonly messageName: string,
    readonly jsonPath: string,
    detail: string,
  ) {
    super(`${messageName}: ${jsonPath || '(root)'}: ${detail}`);
  }
}

type Rec = Record<string, unknown>;

function has(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

// ---------------------------------------------------------------- enums

const enumFirstNames = new WeakMap<protobuf.Enum, Map<number, string>>();

/** Number -> first declared name (aliases such as COMMAND_SHUTDOWN_POWEROFF print as the first). */
function enumName(e: protobuf.Enum, value: number): string | number {
  let names = enumFirstNames.get(e);
  if (!names) {
    names = new Map();
    for (const [name, id] of Object.entries(e.values)) if (!names.has(id)) names.set(id, name);
    enumFirstNames.set(e, names);
  }
  return names.get(value) ?? value;
}

// ---------------------------------------------------------------- Timestamp

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

export function timestampToJson(seconds: number, nanos: number): string {
  const date = new Date(seconds * 1000);
  if (!Number.isFinite(date.getTime()) || date.getUTCFullYear() < 1 || date.getUTCFullYear() > 9999) {
    throw new RangeError(`timestamp seconds ${seconds} outside 0001-01-01..9999-12-31`);
  }
  const base =
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}` +
    `T${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}`;
  if (!nanos) return `${base}Z`;
  const digits = nanos % 1_000_000 === 0 ? 3 : nanos % 1000 === 0 ? 6 : 9;
  return `${base}.${pad(nanos, 9).slice(0, digits)}Z`;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

export function timestampFromJson(text: string): { seconds: number; nanos: number } | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  let seconds = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!) / 1000;
  if (Number.isNaN(seconds)) return undefined;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone!.startsWith('-') ? -1 : 1;
    seconds -= sign * (Number(zone!.slice(1, 3)) * 3600 + Number(zone!.slice(4, 6)) * 60);
  }
  const nanos = frac ? Number(frac.padEnd(9, '0')) : 0;
  return { seconds, nanos };
}

// ---------------------------------------------------------------- to JSON

function scalarToJson(field: protobuf.Field, value: unknown): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) return enumName(resolved, value as number);
  const t = field.type;
  if (INT64_TYPES.has(t)) return String(value);
  if (t === 'bytes') return Buffer.from(value as Uint8Array).toString('base64');
  if (t === 'double' || t === 'float') {
    const n = value as number;
    if (Number.isNaN(n)) return 'NaN';
    if (n === Infinity) return 'Infinity';
    if (n === -Infinity) return '-Infinity';
    return t === 'float' ? shortestFloat32(n) : n;
  }
  return value;
}

/** Shortest decimal that reads back as the same float32 (0.1f prints as 0.1, like protoc/Go). */
function shortestFloat32(n: number): number {
  if (Number.isInteger(n)) return n;
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(n.toPrecision(digits));
    if (Math.fround(candidate) === n) return candidate;
  }
  return n;
}

function isDefaultScalar(field: protobuf.Field, value: unknown): boolean {
  if (value == null) return true;
  if (field.resolvedType instanceof protobuf.Enum) return value === 0;
  switch (field.type) {
    case 'string':
      return value === '';
    case 'bytes':
      return (value as Uint8Array).length === 0;
    case 'bool':
      return value === false;
    default:
      return Number(value) === 0 && !Object.is(value, -0);
  }
}

export interface ToJsonOptions {
  /** Use lowerCamelCase JSON names (protojson default; the LPS signal stream) instead of .proto names. */
  lowerCamelCase?: boolean;
}

function valueToJson(field: protobuf.Field, value: unknown, opts: ToJsonOptions): unknown {
  const sub = field.resolvedType;
  return sub instanceof protobuf.Type ? messageToJson(sub, value as object, opts) : scalarToJson(field, value);
}

/** Proto3 JSON object for a decoded (or plain) message of `type`. */
export function messageToJson(type: protobuf.Type, msg: object, opts: ToJsonOptions = {}): Rec | string {
  if (type.fullName === TIMESTAMP) {
    const ts = msg as { seconds?: number; nanos?: number };
    return timestampToJson(Number(ts.seconds ?? 0), Number(ts.nanos ?? 0));
  }
  const rec = msg as Rec;
  const out: Rec = {};
  for (const field of type.fieldsArray) {
    const value = rec[field.name];
    if (value == null) continue;
    const key = opts.lowerCamelCase ? jsonName(field.name) : field.name;
    if (field.map) {
      const entries = Object.entries(value as Rec);
      if (entries.length === 0) continue;
      const obj: Rec = {};
      for (const [k, v] of entries) obj[k] = valueToJson(field, v, opts);
      out[key] = obj;
    } else if (field.repeated) {
      const arr = value as unknown[];
      if (arr.length === 0) continue;
      out[key] = arr.map((v) => valueToJson(field, v, opts));
    } else if (field.resolvedType instanceof protobuf.Type) {
      out[key] = messageToJson(field.resolvedType, value as object, opts);
    } else if (field.partOf) {
      // oneof members (and proto3 `optional`) have presence: set means printed.
      if (has(rec, field.name)) out[key] = scalarToJson(field, value);
    } else if (!isDefaultScalar(field, value)) {
      out[key] = scalarToJson(field, value);
    }
  }
  return out;
}

// ---------------------------------------------------------------- from JSON

/** lowerCamelCase JSON name as protoc derives it ("integrity_token" -> "integrityToken"). */
function jsonName(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

const fieldIndex = new WeakMap<protobuf.Type, Map<string, protobuf.Field>>();

function fieldsByJsonKey(type: protobuf.Type): Map<string, protobuf.Field> {
  let index = fieldIndex.get(type);
  if (!index) {
    index = new Map();
    for (const f of type.fieldsArray) index.set(jsonName(f.name), f);
    for (const f of type.fieldsArray) index.set(f.name, f); // original names win
    fieldIndex.set(type, index);
  }
  return index;
}

class Parser {
  constructor(private readonly topName: string) {}

  fail(path: string, detail: string): never {
    throw new ProtoJsonError(this.topName, path, detail);
  }

  message(type: protobuf.Type, json: unknown, path: string): Rec {
    if (type.fullName === TIMESTAMP) {
      if (typeof json !== 'string') this.fail(path, `expected an RFC 3339 timestamp string, got ${typeof json}`);
      const ts = timestampFromJson(json);
      if (!ts) this.fail(path, `invalid RFC 3339 timestamp ${JSON.stringify(json)}`);
      return ts;
    }
    if (json === null || typeof json !== 'object' || Array.isArray(json)) {
      this.fail(path, `expected a JSON object for ${type.fullName.slice(1)}`);
    }
    const out: Rec = {};
    const index = fieldsByJsonKey(type);
    for (const [key, value] of Object.entries(json as Rec)) {
      const field = index.get(key);
      const here = path ? `${path}.${key}` : key;
      if (!field) this.fail(here, `no such field in ${type.fullName.slice(1)}`);
      if (value === null) continue;
      if (field.map) {
        if (typeof value !== 'object' || Array.isArray(value)) this.fail(here, 'expected a JSON object (map)');
        const map: Rec = {};
        for (const [k, v] of Object.entries(value as Rec)) map[k] = this.value(field, v, `${here}[${k}]`);
        out[field.name] = map;
      } else if (field.repeated) {
        if (!Array.isArray(value)) this.fail(here, 'expected a JSON array');
        out[field.name] = value.map((v, i) => this.value(field, v, `${here}[${i}]`));
      } else {
        out[field.name] = this.value(field, value, here);
      }
    }
    return out;
  }

  value(field: protobuf.Field, json: unknown, path: string): unknown {
    const sub = field.resolvedType;
    if (sub instanceof protobuf.Type) return this.message(sub, json, path);
    if (sub instanceof protobuf.Enum) return this.enumValue(sub, json, path);
    return this.scalar(field.type, json, path);
  }

  enumValue(e: protobuf.Enum, json: unknown, path: string): number {
    if (typeof json === 'string') {
      const id = e.values[json];
      if (id === undefined) this.fail(path, `unknown ${e.name} value ${JSON.stringify(json)}`);
      return id;
    }
    if (typeof json === 'number' && Number.isInteger(json)) return json;
    return this.fail(path, `expected an enum name or integer for ${e.name}`);
  }

  scalar(type: string, json: unknown, path: string): unknown {
    switch (type) {
      case 'string':
        if (typeof json !== 'string') this.fail(path, 'expected a string');
        return json;
      case 'bool':
        if (typeof json !== 'boolean') this.fail(path, 'expected true or false');
        return json;
      case 'bytes':
        if (typeof json !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(json)) this.fail(path, 'expected base64 text');
        return new Uint8Array(Buffer.from(json, 'base64'));
      case 'double':
      case 'float':
        if (json === 'NaN') return NaN;
        if (json === 'Infinity') return Infinity;
        if (json === '-Infinity') return -Infinity;
        return this.number(json, path, false);
    }
    if (INT32_TYPES.has(type) || INT64_TYPES.has(type)) {
      const n = this.number(json, path, true);
      if (UNSIGNED_TYPES.has(type) && n < 0) this.fail(path, `negative value for ${type}`);
      if (INT32_TYPES.has(type) && (n > 0xffffffff || n < -0x80000000)) this.fail(path, `${n} out of range for ${type}`);
      return n;
    }
    return this.fail(path, `unsupported field type ${type}`);
  }

  number(json: unknown, path: string, integer: boolean): number {
    const n = typeof json === 'number' ? json : typeof json === 'string' && json.trim() !== '' ? Number(json) : NaN;
    if (!Number.isFinite(n)) this.fail(path, `expected a number, got ${JSON.stringify(json)}`);
    if (integer && !Number.isInteger(n)) this.fail(path, `expected an integer, got ${JSON.stringify(json)}`);
    return n;
  }
}

/** Plain message object (encodable by protobufjs) from proto3 JSON. Accepts original and lowerCamelCase names. */
export function messageFromJson(type: protobuf.Type, json: unknown): Rec {
  const parsed = new Parser(type.fullName.slice(1)).message(type, json, '');
  if (typeof parsed !== 'object') throw new ProtoJsonError(type.fullName.slice(1), '', 'a Timestamp cannot be the top-level message here');
  return parsed;
}
