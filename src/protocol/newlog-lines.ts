// Newlogs lines (eve-wire-facts §8.2): each LogEntry as EVE's json.Marshal writes it, and the
// lines of a file in one reusable byte buffer, each followed by '\n'. Devices write each entry
// straight into that buffer (NewlogLines.add) instead of making a string per line, joining them
// per file and copying the result into a Buffer: log text was two thirds of everything a device
// allocated (bench/device-cpu.ts --alloc-profile). encodeNewlogLine is the plain string encoder;
// test/newlog-lines.test.ts holds the two to the same bytes.

import type { logs } from '../gen/eve-types.js';
import { goJsonInteger, goJsonString, goSortedKeys } from './go-json.js';

/** One LogEntry, the eve-api message whose Go struct newlogd marshals as JSON (omitempty on every field). */
export type NewlogEntry = logs.LogEntry;

const key = (name: string): Uint8Array => Buffer.from(`"${name}":`, 'latin1');
const K_SEVERITY = key('severity');
const K_SOURCE = key('source');
const K_IID = key('iid');
const K_CONTENT = key('content');
const K_MSGID = key('msgid');
const K_TAGS = key('tags');
const K_TIMESTAMP = key('timestamp');
const K_SECONDS = key('seconds');
const K_NANOS = key('nanos');
const K_FILENAME = key('filename');
const K_FUNCTION = key('function');

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const NEWLINE = 0x0a;
/** Room for a number's digits and sign. */
const NUMBER_ROOM = 24;

/** The newline-free JSON line for one entry, byte-for-byte as EVE's json.Marshal(&logEntry). */
export function encodeNewlogLine(e: NewlogEntry): string {
  // Every present field adds ",name:value"; the first comma is dropped at the end.
  let out = '';
  if (e.severity) out += ',"severity":' + goJsonString(e.severity);
  if (e.source) out += ',"source":' + goJsonString(e.source);
  if (e.iid) out += ',"iid":' + goJsonString(e.iid);
  if (e.content) out += ',"content":' + goJsonString(e.content);
  if (e.msgid) out += ',"msgid":' + goJsonInteger(e.msgid);
  if (e.tags) {
    const tags = e.tags;
    const keys = goSortedKeys(tags);
    if (keys.length > 0) out += ',"tags":{' + keys.map((k) => `${goJsonString(k)}:${goJsonString(tags[k]!)}`).join(',') + '}';
  }
  if (e.timestamp) {
    // A non-nil *timestamppb.Timestamp is always written, even as {} (its fields are omitempty).
    const { seconds, nanos } = e.timestamp;
    const sec = seconds ? '"seconds":' + goJsonInteger(seconds) : '';
    const ns = nanos ? '"nanos":' + goJsonInteger(nanos) : '';
    out += ',"timestamp":{' + sec + (sec && ns ? ',' : '') + ns + '}';
  }
  if (e.filename) out += ',"filename":' + goJsonString(e.filename);
  if (e.function) out += ',"function":' + goJsonString(e.function);
  return '{' + out.slice(1) + '}';
}

export class NewlogLines {
  private buf: Buffer;
  private len = 0;
  /** starts[i]: where line i begins; starts[count]: the end of the last line's '\n'. */
  private starts: number[] = [0];
  /** Fields written in the current line (the first goes without a comma). */
  private fields = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafeSlow(initialBytes);
  }

  /** Forgets every line (the buffer is kept for the next file). */
  reset(): void {
    this.len = 0;
    this.starts.length = 1;
  }

  get count(): number {
    return this.starts.length - 1;
  }

  get byteLength(): number {
    return this.len;
  }

  /** Offset of line `i`'s first byte; lineStart(count) is byteLength. */
  lineStart(i: number): number {
    return this.starts[i]!;
  }

  /** Lines [from, to) with their '\n's: a view, valid until the next add or reset. */
  text(from = 0, to = this.count): Buffer {
    return this.buf.subarray(this.starts[from]!, this.starts[to]!);
  }

  /** One entry, byte for byte as encodeNewlogLine writes it, without making that string. */
  add(e: NewlogEntry): void {
    this.fields = 0;
    this.byte(OPEN);
    if (e.severity) this.stringField(K_SEVERITY, e.severity);
    if (e.source) this.stringField(K_SOURCE, e.source);
    if (e.iid) this.stringField(K_IID, e.iid);
    if (e.content) this.stringField(K_CONTENT, e.content);
    if (e.msgid) {
      this.field(K_MSGID);
      this.integer(e.msgid);
    }
    if (e.tags) {
      const tags = e.tags;
      const keys = goSortedKeys(tags);
      if (keys.length > 0) {
        this.field(K_TAGS);
        this.byte(OPEN);
        for (let i = 0; i < keys.length; i++) {
          if (i > 0) this.byte(COMMA);
          this.string(keys[i]!);
          this.byte(COLON);
          this.string(tags[keys[i]!]!);
        }
        this.byte(CLOSE);
      }
    }
    if (e.timestamp) {
      // A non-nil *timestamppb.Timestamp is always written, even as {} (its fields are omitempty).
      this.field(K_TIMESTAMP);
      const { seconds, nanos } = e.timestamp;
      this.byte(OPEN);
      if (seconds) {
        this.raw(K_SECONDS);
        this.integer(seconds);
      }
      if (nanos) {
        if (seconds) this.byte(COMMA);
        this.raw(K_NANOS);
        this.integer(nanos);
      }
      this.byte(CLOSE);
    }
    if (e.filename) this.stringField(K_FILENAME, e.filename);
    if (e.function) this.stringField(K_FUNCTION, e.function);
    this.byte(CLOSE);
    this.byte(NEWLINE);
    this.starts.push(this.len);
  }

  /** An already encoded line (no '\n' in it). */
  addLine(line: string): void {
    const room = line.length * 3 + 1;
    if (this.len + room > this.buf.length) this.grow(room);
    this.len += this.buf.write(line, this.len, 'utf8');
    this.buf[this.len++] = NEWLINE;
    this.starts.push(this.len);
  }

  private stringField(k: Uint8Array, v: string): void {
    this.field(k);
    this.string(v);
  }

  /** A field's key, after a comma unless it is the line's first. */
  private field(k: Uint8Array): void {
    if (this.fields++ > 0) this.byte(COMMA);
    this.raw(k);
  }

  /** A Go JSON string literal. Printable ASCII with nothing to escape (most log text) is copied
   *  byte by byte here, cheaper than a native call for strings this short; the rest as Go writes it. */
  private string(s: string): void {
    const n = s.length;
    if (this.len + n + 2 > this.buf.length) this.grow(n + 2);
    const buf = this.buf;
    const start = this.len;
    let at = start;
    buf[at++] = QUOTE;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      // Outside 0x20-0x7e, or one of " \\ < > &: Go escapes it, or it is more than one byte.
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26) {
        this.len = start;
        this.utf8(goJsonString(s));
        return;
      }
      buf[at++] = c;
    }
    buf[at++] = QUOTE;
    this.len = at;
  }

  /** An integer as Go writes int64/uint64: decimal digits, '-' when negative. */
  private integer(v: number): void {
    if (!Number.isSafeInteger(v)) goJsonInteger(v); // throws, naming the value
    if (this.len + NUMBER_ROOM > this.buf.length) this.grow(NUMBER_ROOM);
    const buf = this.buf;
    if (v < 0) {
      buf[this.len++] = 0x2d;
      v = -v;
    }
    let digits = 1;
    for (let p = 10; p <= v; p *= 10) digits++;
    let at = this.len + digits;
    this.len = at;
    do {
      buf[--at] = 0x30 + (v % 10);
      v = Math.floor(v / 10);
    } while (v > 0);
  }

  private utf8(s: string): void {
    const room = s.length * 3;
    if (this.len + room > this.buf.length) this.grow(room);
    this.len += this.buf.write(s, this.len, 'utf8');
  }

  private raw(b: Uint8Array): void {
    if (this.len + b.length > this.buf.length) this.grow(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  private byte(b: number): void {
    if (this.len + 1 > this.buf.length) this.grow(1);
    this.buf[this.len++] = b;
  }

  private grow(n: number): void {
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(grown, 0, 0, this.len);
    this.buf = grown;
  }
}
