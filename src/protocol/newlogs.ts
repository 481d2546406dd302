// EVE newlogs files (eve-wire-facts §8.2–8.4): gzip with a hand-written header (device files carry
// the LogBundle metadata as Comment, app files the app name as Name), level-9 deflate, and one Go
// encoding/json LogEntry per line. The reader is as strict as Adam, so a line Adam would answer
// with 400 fails here too, naming the line.

import { crc32, deflateRawSync, gunzipSync } from 'node:zlib';
import { goJsonString } from './go-json.js';
import { encodeNewlogLine, NewlogLines, type NewlogEntry } from './newlog-lines.js';

export { encodeNewlogLine };
export type { NewlogEntry };

/** The gzip Comment of device files: Go JSON of LogBundle{devID, image, eveVersion}. */
export interface DeviceLogMeta {
  devID?: string;
  image?: string;
  eveVersion?: string;
}

export type NewlogsKind = { kind: 'device'; meta: DeviceLogMeta } | { kind: 'app'; appName: string };

export class NewlogsError extends Error {
  constructor(
    message: string,
    /** 1-based line number inside the gzip body, when the problem is a line. */
    readonly line?: number,
  ) {
    super(message);
    this.name = 'NewlogsError';
  }
}

export const NEWLOGS_MAX_FILE_BYTES = 50_000;
/** EVE rotates its raw collection file at this size (§8.3); the batcher packs at the same point. */
export const NEWLOGS_RAW_ROTATE_BYTES = 550_000;
/** Adam reads lines with bufio.Scanner's default 64 KiB token limit (§8.4). */
export const ADAM_MAX_LINE_BYTES = 64 * 1024;

// ---------------------------------------------------------------------------------------------
// Writing

/** Go JSON of the device metadata, the gzip Comment before Latin-1 sanitising. */
export function encodeDeviceLogMeta(meta: DeviceLogMeta): string {
  const parts: string[] = [];
  if (meta.devID) parts.push(`"devID":${goJsonString(meta.devID)}`);
  if (meta.image) parts.push(`"image":${goJsonString(meta.image)}`);
  if (meta.eveVersion) parts.push(`"eveVersion":${goJsonString(meta.eveVersion)}`);
  return `{${parts.join(',')}}`;
}

/**
 * What EVE's newlogd does to a header string before gzip: NUL → \u0000, runes above U+FFFF →
 * \UXXXXXXXX, above U+00FF → \uXXXX (lower-case hex); Latin-1 passes through.
 */
export function sanitizeGzipHeaderText(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0) out += '\\u0000';
    else if (cp > 0xffff) out += '\\U' + cp.toString(16).padStart(8, '0');
    else if (cp > 0xff) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out;
}

const FLG_FHCRC = 0x02;
const FLG_FEXTRA = 0x04;
const FLG_FNAME = 0x08;
const FLG_FCOMMENT = 0x10;

/** The 10-byte gzip header plus the zero-terminated Name or Comment, as Go's gzip.Writer writes it. */
export function newlogsGzipHeader(kind: NewlogsKind, mtimeSec: number): Uint8Array {
  const text = sanitizeGzipHeaderText(kind.kind === 'device' ? encodeDeviceLogMeta(kind.meta) : kind.appName);
  // Go writes the field only when non-empty.
  const flg = text === '' ? 0 : kind.kind === 'device' ? FLG_FCOMMENT : FLG_FNAME;
  const textBytes = Buffer.from(text, 'latin1');
  const head = Buffer.alloc(10 + (flg ? textBytes.length + 1 : 0));
  head[0] = 0x1f;
  head[1] = 0x8b;
  head[2] = 8; // deflate
  head[3] = flg;
  head.writeUInt32LE(mtimeSec >>> 0, 4);
  head[8] = 2; // XFL: best compression (level 9)
  head[9] = 255; // OS: unknown, as Go writes
  if (flg) textBytes.copy(head, 10); // last byte stays 0: the terminator
  return head;
}

/** A complete newlogs gzip file from already encoded lines (each without its '\n'). */
export function writeNewlogsFile(kind: NewlogsKind, lines: readonly string[], mtimeSec: number): Uint8Array {
  return gzipWithHeader(newlogsGzipHeader(kind, mtimeSec), linesOf(lines).text());
}

/** Encoded lines (each without its '\n') as the bytes of a file's text. */
function linesOf(lines: readonly string[]): NewlogLines {
  let chars = 0;
  for (const line of lines) chars += line.length + 1;
  const text = new NewlogLines(Math.max(64, chars)); // grows if UTF-8 needs more bytes than chars
  for (const line of lines) text.addLine(line);
  return text;
}

function gzipWithHeader(header: Uint8Array, body: Buffer): Uint8Array {
  const deflated = deflateRawSync(body, { level: 9 });
  // Not from the shared pool: the file may wait on its device for minutes (exact-bytes.ts).
  const out = Buffer.allocUnsafeSlow(header.length + deflated.length + 8);
  out.set(header, 0);
  out.set(deflated, header.length);
  out.writeUInt32LE(crc32(body) >>> 0, header.length + deflated.length);
  out.writeUInt32LE(body.length >>> 0, header.length + deflated.length + 4);
  return out;
}

export interface PackedNewlogsFile {
  bytes: Uint8Array;
  lines: number;
  /** True only when a single line compresses beyond the limit; EVE also writes such a file alone. */
  oversize: boolean;
}

/**
 * Packs lines into as few gzip files as possible with none above `maxBytes` (EVE starts a new file
 * before exceeding 50 000 bytes). Estimate and verify: guess where a file ends from the compression
 * ratio measured so far, compress that prefix, then refine between the longest prefix known to fit
 * and the shortest known not to, until a file is within 2 % of the limit (usually 2–4 compressions
 * of about one file's worth of text each).
 */
export function packNewlogsFiles(
  kind: NewlogsKind,
  lines: readonly string[],
  mtimeSec: number,
  maxBytes = NEWLOGS_MAX_FILE_BYTES,
  /** Counts deflate runs, for benchmarks and tests. */
  stats?: { compressions: number },
): PackedNewlogsFile[] {
  return packNewlogLines(kind, linesOf(lines), mtimeSec, maxBytes, stats);
}

/** packNewlogsFiles of lines already written as bytes (what devices use: no string per line). */
export function packNewlogLines(
  kind: NewlogsKind,
  text: NewlogLines,
  mtimeSec: number,
  maxBytes = NEWLOGS_MAX_FILE_BYTES,
  stats?: { compressions: number },
): PackedNewlogsFile[] {
  const header = newlogsGzipHeader(kind, mtimeSec);
  const overhead = header.length + 8;
  const n = text.count;
  // Byte offset of each line (with '\n'); rawAt[n] is the end.
  const rawAt = (i: number): number => text.lineStart(i);
  // A file within 2 % of the limit is good enough; looking further costs a compression each step.
  const slack = Math.max(1, Math.floor(maxBytes * 0.02));
  const target = maxBytes - slack / 2;
  // Compressed/raw ratio; log text typically compresses 4–8x, refined by every measurement.
  let ratio = 0.2;

  const files: PackedNewlogsFile[] = [];
  let start = 0;
  while (start < n) {
    const build = (end: number): Uint8Array => {
      if (stats) stats.compressions++;
      return gzipWithHeader(header, text.text(start, end));
    };
    let lo = start; // longest end known to fit (start: the empty file)
    let loSize = overhead;
    let loFile: Uint8Array | undefined;
    let hi = n + 1; // shortest end known not to fit (n + 1: none known yet)
    let hiSize = Infinity;
    for (;;) {
      // Interpolate between the bounds when both are measured, else extrapolate with the ratio.
      const r = lo > start && hi <= n ? (hiSize - loSize) / Math.max(1, rawAt(hi) - rawAt(lo)) : ratio;
      let end = firstLineStartingAfter(text, rawAt(lo) + (target - loSize) / Math.max(r, 1e-6)) - 1;
      end = Math.min(end, n);
      if (end <= lo || end >= hi) end = hi > n ? Math.min(n, lo + Math.max(1, 2 * (lo - start))) : lo + Math.floor((hi - lo) / 2);
      if (end <= lo) break; // hi === lo + 1: lo is the answer
      const file = build(end);
      if (rawAt(end) > rawAt(start)) ratio = Math.max((file.length - overhead) / (rawAt(end) - rawAt(start)), 1e-4);
      if (file.length <= maxBytes) {
        lo = end;
        loSize = file.length;
        loFile = file;
        if (end === n || maxBytes - file.length <= slack) break;
      } else {
        hi = end;
        hiSize = file.length;
        if (hi === lo + 1) break;
      }
    }
    if (lo === start) {
      // Even one line is too big: it goes alone, as EVE would write it.
      const alone = build(start + 1);
      files.push({ bytes: alone, lines: 1, oversize: alone.length > maxBytes });
      start += 1;
    } else {
      files.push({ bytes: loFile!, lines: lo - start, oversize: false });
      start = lo;
    }
  }
  return files;
}

/** Index of the first line start greater than `v` (count + 1 when none is). */
function firstLineStartingAfter(text: NewlogLines, v: number): number {
  let lo = 0;
  let hi = text.count + 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (text.lineStart(mid) <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Collects encoded lines like newlogd's raw collection file and packs them into upload files when
 * rotated (by the caller's timer, or automatically once the raw text reaches 550 000 bytes).
 */
export class NewlogsBatcher {
  private lines: string[] = [];
  private raw = 0;

  constructor(
    private readonly kind: NewlogsKind,
    private readonly opts: { maxFileBytes?: number; rotateRawBytes?: number } = {},
  ) {}

  get pendingLines(): number {
    return this.lines.length;
  }

  get pendingRawBytes(): number {
    return this.raw;
  }

  /** Adds one entry (or an already encoded line); returns files finished by an automatic rotation. */
  add(entry: NewlogEntry | string, nowSec: number): PackedNewlogsFile[] {
    const line = typeof entry === 'string' ? entry : encodeNewlogLine(entry);
    this.lines.push(line);
    this.raw += Buffer.byteLength(line, 'utf8') + 1;
    return this.raw >= (this.opts.rotateRawBytes ?? NEWLOGS_RAW_ROTATE_BYTES) ? this.rotate(nowSec) : [];
  }

  /** Packs everything pending into gzip files stamped with `nowSec`; empty when nothing is pending. */
  rotate(nowSec: number): PackedNewlogsFile[] {
    if (this.lines.length === 0) return [];
    const files = packNewlogsFiles(this.kind, this.lines, nowSec, this.opts.maxFileBytes ?? NEWLOGS_MAX_FILE_BYTES);
    this.lines = [];
    this.raw = 0;
    return files;
  }
}

// ---------------------------------------------------------------------------------------------
// Reading

export interface NewlogsGzipHeader {
  flg: number;
  mtime: number;
  xfl: number;
  os: number;
  /** Latin-1 decoded; undefined when the flag is absent. */
  name?: string;
  comment?: string;
  extra?: Uint8Array;
}

export interface NewlogsFileContents {
  header: NewlogsGzipHeader;
  /** Device files: the Comment parsed as LogBundle metadata. */
  meta?: DeviceLogMeta;
  /** Lines without their '\n' (and without a trailing '\r', as Go's scanner drops it). */
  rawLines: string[];
  /** Parsed entries, only present when parsing was asked for. */
  entries?: NewlogEntry[];
  /** 1-based number of the first line longer than Adam's 64 KiB scanner limit (Adam stops there). */
  firstOverlongLine?: number;
}

export interface ReadNewlogsOptions {
  /** 'device' requires a Comment that parses as LogBundle JSON (Adam: 400 otherwise). */
  kind?: 'device' | 'app';
  /** Parse and check every line (default true). */
  parseLines?: boolean;
  /** Refuse bodies that inflate beyond this many bytes (default 64 MiB). */
  maxBodyBytes?: number;
}

export function parseGzipHeader(bytes: Uint8Array): { header: NewlogsGzipHeader; length: number } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 10 || b[0] !== 0x1f || b[1] !== 0x8b) throw new NewlogsError('not a gzip file (bad magic)');
  if (b[2] !== 8) throw new NewlogsError(`gzip compression method ${b[2]} is not deflate`);
  const flg = b[3]!;
  if (flg & 0xe0) throw new NewlogsError(`gzip header has reserved flag bits set (FLG 0x${flg.toString(16)})`);
  const header: NewlogsGzipHeader = { flg, mtime: b.readUInt32LE(4), xfl: b[8]!, os: b[9]! };
  let at = 10;
  const need = (n: number, what: string): void => {
    if (at + n > b.length) throw new NewlogsError(`gzip header truncated in ${what}`);
  };
  if (flg & FLG_FEXTRA) {
    need(2, 'FEXTRA length');
    const xlen = b.readUInt16LE(at);
    need(2 + xlen, 'FEXTRA');
    header.extra = new Uint8Array(b.subarray(at + 2, at + 2 + xlen));
    at += 2 + xlen;
  }
  const zeroTerminated = (what: string): string => {
    const end = b.indexOf(0, at);
    if (end < 0) throw new NewlogsError(`gzip header ${what} is not zero-terminated`);
    const s = b.subarray(at, end).toString('latin1');
    at = end + 1;
    return s;
  };
  if (flg & FLG_FNAME) header.name = zeroTerminated('Name');
  if (flg & FLG_FCOMMENT) header.comment = zeroTerminated('Comment');
  if (flg & FLG_FHCRC) {
    need(2, 'FHCRC');
    const want = b.readUInt16LE(at);
    if (((crc32(b.subarray(0, at)) >>> 0) & 0xffff) !== want) throw new NewlogsError('gzip header CRC mismatch');
    at += 2;
  }
  return { header, length: at };
}

/** Reads a newlogs gzip file the way Adam does (§8.4), with errors naming what and where. */
export function readNewlogsFile(bytes: Uint8Array, opts: ReadNewlogsOptions = {}): NewlogsFileContents {
  const { header } = parseGzipHeader(bytes);
  let meta: DeviceLogMeta | undefined;
  if (opts.kind === 'device') meta = parseDeviceLogMeta(header.comment ?? '');
  else if (opts.kind === undefined && header.comment !== undefined) {
    try {
      meta = parseDeviceLogMeta(header.comment);
    } catch {
      meta = undefined; // not asked to insist on device metadata
    }
  }
  let body: Buffer;
  try {
    // zlib checks CRC-32 and ISIZE and refuses a truncated file, as Go's gzip reader does.
    body = gunzipSync(bytes, { maxOutputLength: opts.maxBodyBytes ?? 64 * 1024 * 1024 });
  } catch (e) {
    throw new NewlogsError(`gzip body does not inflate: ${(e as Error).message}`);
  }
  const rawLines = splitScannerLines(body.toString('utf8'));
  const out: NewlogsFileContents = { header, rawLines, ...(meta ? { meta } : {}) };
  const overlong = rawLines.findIndex((l) => Buffer.byteLength(l, 'utf8') > ADAM_MAX_LINE_BYTES);
  if (overlong >= 0) out.firstOverlongLine = overlong + 1;
  if (opts.parseLines ?? true) out.entries = rawLines.map((l, i) => parseNewlogLine(l, i + 1));
  return out;
}

/** Go bufio.ScanLines: split on '\n', drop one trailing '\r', no empty token after a final '\n'. */
function splitScannerLines(text: string): string[] {
  if (text === '') return [];
  const parts = text.split('\n');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts.map((p) => (p.endsWith('\r') ? p.slice(0, -1) : p));
}

export function parseDeviceLogMeta(comment: string): DeviceLogMeta {
  let v: unknown;
  try {
    v = JSON.parse(comment);
  } catch (e) {
    throw new NewlogsError(`gzip Comment is not LogBundle JSON: ${(e as Error).message} (Comment ${JSON.stringify(comment.slice(0, 80))})`);
  }
  if (v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new NewlogsError('gzip Comment is not a JSON object');
  const meta: DeviceLogMeta = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    const key = k.toLowerCase();
    if (key === 'devid' || key === 'image' || key === 'eveversion') {
      if (val !== null && typeof val !== 'string') throw new NewlogsError(`gzip Comment field ${k} must be a string`);
      if (typeof val === 'string') meta[key === 'devid' ? 'devID' : key === 'image' ? 'image' : 'eveVersion'] = val;
    }
  }
  return meta;
}

const STRING_FIELDS = ['severity', 'source', 'iid', 'content', 'filename', 'function'] as const;
type StringField = (typeof STRING_FIELDS)[number];
const FIELD_BY_LOWER = new Map<string, keyof NewlogEntry>([
  ...STRING_FIELDS.map((f) => [f, f] as [string, keyof NewlogEntry]),
  ['msgid', 'msgid'],
  ['tags', 'tags'],
  ['timestamp', 'timestamp'],
]);
// Integer fields must be written as integers: Go refuses 1.0 or 1e3 for int64/uint64/int32.
const NON_INTEGER_LITERAL = /"(msgid|seconds|nanos)"\s*:\s*-?\d*(?:\.\d*|[eE])/i;
const UINT64_MAX = 2 ** 64;

/**
 * Parses one line as Go's json.Unmarshal into logs.LogEntry would: unknown keys ignored, keys
 * matched case-insensitively, null leaves a field unset, any type mismatch is an error.
 */
export function parseNewlogLine(line: string, lineNo: number): NewlogEntry {
  const fail = (why: string): never => {
    throw new NewlogsError(`line ${lineNo}: ${why}`, lineNo);
  };
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (e) {
    return fail(`not JSON (${(e as Error).message})`);
  }
  if (v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) return fail('not a JSON object');
  const bad = NON_INTEGER_LITERAL.exec(line);
  if (bad) fail(`field ${bad[1]} must be an integer literal`);
  const entry: NewlogEntry = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    const field = FIELD_BY_LOWER.get(k.toLowerCase());
    if (!field || val === null) continue;
    if (field === 'msgid') {
      if (typeof val !== 'number' || !Number.isInteger(val) || val < 0 || val >= UINT64_MAX) {
        fail(`field msgid must be a non-negative integer, got ${JSON.stringify(val)}`);
      }
      entry.msgid = val as number;
    } else if (field === 'timestamp') {
      if (typeof val !== 'object' || Array.isArray(val)) {
        fail(`field timestamp must be an object {"seconds":N,"nanos":N}, got ${JSON.stringify(val)}`);
      }
      const ts: { seconds?: number; nanos?: number } = {};
      for (const [tk, tv] of Object.entries(val as Record<string, unknown>)) {
        const t = tk.toLowerCase();
        if ((t !== 'seconds' && t !== 'nanos') || tv === null) continue;
        const limit = t === 'nanos' ? 2 ** 31 : 2 ** 63;
        if (typeof tv !== 'number' || !Number.isInteger(tv) || tv < -limit || tv >= limit) {
          fail(`field timestamp.${t} must be an integer, got ${JSON.stringify(tv)}`);
        }
        ts[t] = tv as number;
      }
      entry.timestamp = ts;
    } else if (field === 'tags') {
      if (typeof val !== 'object' || Array.isArray(val)) fail('field tags must be an object of strings');
      const tags: Record<string, string> = {};
      for (const [tk, tv] of Object.entries(val as Record<string, unknown>)) {
        if (tv !== null && typeof tv !== 'string') fail(`field tags.${tk} must be a string`);
        tags[tk] = (tv as string | null) ?? '';
      }
      entry.tags = tags;
    } else {
      if (typeof val !== 'string') fail(`field ${field} must be a string, got ${JSON.stringify(val)}`);
      entry[field as StringField] = val as string;
    }
  }
  return entry;
}
