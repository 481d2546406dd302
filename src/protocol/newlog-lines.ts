// Newlogs lines (eve-wire-facts §8.2): each LogEntry as EVE's json.Marshal writes it, and the
// lines of a file in one reusable byte buffer, each followed by '\n'. A device writes each line
// into that buffer as it is made, instead of keeping a string per line, joining them per file
// and copying the result into a Buffer: log text was two thirds of everything a device allocated
// (bench/device-cpu.ts --alloc-profile), and this path costs half as much CPU per line.

import { goJsonInteger, goJsonString, goSortedKeys } from './go-json.js';

/** One LogEntry as the eve-api Go struct marshals it (omitempty on every field). */
export interface NewlogEntry {
  severity?: string;
  source?: string;
  iid?: string;
  content?: string;
  msgid?: number;
  tags?: Record<string, string>;
  timestamp?: { seconds?: number; nanos?: number };
  filename?: string;
  function?: string;
}

const NEWLINE = 0x0a;

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

  /** One entry, as encodeNewlogLine writes it. */
  add(e: NewlogEntry): void {
    // One string per line and one write: cheaper than writing each field (a native call each).
    this.addLine(encodeNewlogLine(e));
  }

  /** An already encoded line (no '\n' in it). */
  addLine(line: string): void {
    const room = line.length * 3 + 1;
    if (this.len + room > this.buf.length) this.grow(room);
    this.len += this.buf.write(line, this.len, 'utf8');
    this.buf[this.len++] = NEWLINE;
    this.starts.push(this.len);
  }

  private grow(n: number): void {
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(grown, 0, 0, this.len);
    this.buf = grown;
  }
}
