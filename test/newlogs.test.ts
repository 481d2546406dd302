import { describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import {
  NEWLOGS_MAX_FILE_BYTES,
  NewlogsBatcher,
  NewlogsError,
  encodeDeviceLogMeta,
  encodeNewlogLine,
  packNewlogsFiles,
  parseDeviceLogMeta,
  parseNewlogLine,
  readNewlogsFile,
  sanitizeGzipHeaderText,
  writeNewlogsFile,
  type NewlogEntry,
  type NewlogsKind,
} from '../src/protocol/newlogs.js';
import { goJsonString } from '../src/protocol/go-json.js';
import { exactBytes } from '../src/protocol/exact-bytes.js';
import { vectorPath } from './vectors-dir.js';

const DIR = vectorPath('newlogs');
const VECTORS = [
  'dev.log.1779268320000.gz',
  'app.a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61.log.1779268330000.gz',
] as const;

interface Expected {
  kind: 'device' | 'app';
  gzip_header: { flg: number; comment: string; name: string; modtime_unix: number; os: number; compression_level: number };
  raw_lines: string[];
  lines: NewlogEntry[];
}

const load = (file: string): { bytes: Uint8Array; expected: Expected } => ({
  bytes: readFileSync(join(DIR, file)),
  expected: JSON.parse(readFileSync(join(DIR, `${file}.expected.json`), 'utf8')) as Expected,
});

function kindOf(expected: Expected): NewlogsKind {
  return expected.kind === 'device'
    ? { kind: 'device', meta: parseDeviceLogMeta(expected.gzip_header.comment) }
    : { kind: 'app', appName: expected.gzip_header.name };
}

describe('newlogs vectors (written by Go the way newlogd does)', () => {
  for (const file of VECTORS) {
    test(`reads ${file}: header, raw lines and parsed lines`, () => {
      const { bytes, expected } = load(file);
      const got = readNewlogsFile(bytes, { kind: expected.kind });
      const h = expected.gzip_header;
      expect(got.header.flg).toBe(h.flg);
      expect(got.header.comment ?? '').toBe(h.comment);
      expect(got.header.name ?? '').toBe(h.name);
      expect(got.header.mtime).toBe(h.modtime_unix);
      expect(got.header.os).toBe(h.os);
      expect(h.compression_level).toBe(9);
      expect(got.header.xfl).toBe(2); // XFL 2 = maximum compression
      expect(got.rawLines).toEqual(expected.raw_lines);
      expect(got.entries).toEqual(expected.lines);
      if (expected.kind === 'device') expect(encodeDeviceLogMeta(got.meta!)).toBe(h.comment);
    });

    test(`re-encodes every line of ${file} byte-for-byte and writes a file that reads back the same`, () => {
      const { expected } = load(file);
      const lines = expected.lines.map(encodeNewlogLine);
      expect(lines).toEqual(expected.raw_lines);
      const written = writeNewlogsFile(kindOf(expected), lines, expected.gzip_header.modtime_unix);
      const back = readNewlogsFile(written, { kind: expected.kind });
      expect(back.header.flg).toBe(expected.gzip_header.flg);
      expect(back.header.comment ?? '').toBe(expected.gzip_header.comment);
      expect(back.header.name ?? '').toBe(expected.gzip_header.name);
      expect(back.header.mtime).toBe(expected.gzip_header.modtime_unix);
      expect(back.header.os).toBe(255);
      expect(back.header.xfl).toBe(2);
      expect(back.rawLines).toEqual(expected.raw_lines);
      expect(back.entries).toEqual(expected.lines);
      // Independent check: node's own gunzip sees the same body.
      expect(gunzipSync(written).toString('utf8')).toBe(expected.raw_lines.join('\n') + '\n');
    });
  }
});

describe('Go encoding/json line format', () => {
  test('escapes like Go: HTML characters, U+2028/2029, control characters, invalid UTF-16', () => {
    expect(goJsonString('a<b>&c')).toBe('"a\\u003cb\\u003e\\u0026c"');
    expect(goJsonString('x\u2028y\u2029z')).toBe('"x\\u2028y\\u2029z"');
    expect(goJsonString('\u0001\b\f\n\r\t\u001f\u007f')).toBe('"\\u0001\\b\\f\\n\\r\\t\\u001f\u007f"');
    expect(goJsonString('é温')).toBe('"é温"');
    expect(goJsonString('bad\uD800x')).toBe('"bad\uFFFDx"');
    expect(goJsonString('ok\uD83D\uDE00')).toBe('"ok\uD83D\uDE00"');
  });

  test('omits empty fields and zero msgid / nanos, writes timestamp as an object, sorts tags', () => {
    expect(encodeNewlogLine({ severity: 'info', msgid: 0, iid: '', timestamp: { seconds: 5, nanos: 0 } })).toBe(
      '{"severity":"info","timestamp":{"seconds":5}}',
    );
    expect(encodeNewlogLine({ content: 'c', msgid: 7, tags: { z: '1', a: '2' }, function: 'f' })).toBe(
      '{"content":"c","msgid":7,"tags":{"a":"2","z":"1"},"function":"f"}',
    );
    expect(encodeNewlogLine({ timestamp: {} })).toBe('{"timestamp":{}}');
  });

  test('gzip header text: non-Latin-1 runes escaped as newlogd does', () => {
    expect(sanitizeGzipHeaderText('café')).toBe('café');
    expect(sanitizeGzipHeaderText('温度')).toBe('\\u6e29\\u5ea6');
    expect(sanitizeGzipHeaderText('a\u0000b')).toBe('a\\u0000b');
    expect(sanitizeGzipHeaderText('x😀')).toBe('x\\U0001f600');
    const file = writeNewlogsFile({ kind: 'app', appName: 'café 温' }, ['{}'], 1);
    expect(readNewlogsFile(file, { kind: 'app' }).header.name).toBe('café \\u6e29');
  });
});

describe('strict reading as Adam does', () => {
  const good = '{"severity":"info","timestamp":{"seconds":1}}';
  const file = (lines: string[]): Uint8Array => writeNewlogsFile({ kind: 'device', meta: { devID: 'd' } }, lines, 1);

  test('rejects an RFC 3339 timestamp and names the line', () => {
    const bad = '{"severity":"info","timestamp":"2026-05-20T09:14:00Z"}';
    expect(() => readNewlogsFile(file([good, good, bad]))).toThrowError(/line 3: field timestamp must be an object/);
    try {
      readNewlogsFile(file([good, bad]));
    } catch (e) {
      expect(e).toBeInstanceOf(NewlogsError);
      expect((e as NewlogsError).line).toBe(2);
    }
  });

  test('rejects string, negative and fractional msgid, non-string content, empty lines, non-JSON', () => {
    expect(() => parseNewlogLine('{"msgid":"3"}', 4)).toThrowError(/line 4: field msgid/);
    expect(() => parseNewlogLine('{"msgid":-1}', 1)).toThrowError(/msgid/);
    expect(() => parseNewlogLine('{"msgid":1.5}', 1)).toThrowError(/msgid must be an integer literal/);
    expect(() => parseNewlogLine('{"timestamp":{"seconds":1e3}}', 1)).toThrowError(/seconds/);
    expect(() => parseNewlogLine('{"content":5}', 1)).toThrowError(/content must be a string/);
    expect(() => parseNewlogLine('', 9)).toThrowError(/line 9: not JSON/);
    expect(() => parseNewlogLine('[1]', 1)).toThrowError(/not a JSON object/);
    expect(() => readNewlogsFile(file([good, '', good]))).toThrowError(/line 2/);
  });

  test('accepts what Go accepts: unknown keys, any key case, nulls, tags', () => {
    expect(parseNewlogLine('{"Severity":"warn","extra":[1],"iid":null,"tags":{"k":"v"},"msgid":3}', 1)).toEqual({
      severity: 'warn',
      tags: { k: 'v' },
      msgid: 3,
    });
    // The timestamp's keys too, and a null inside it or in the tags.
    expect(parseNewlogLine('{"TimeStamp":{"Seconds":5,"NANOS":7},"tags":{"a":null}}', 1)).toEqual({ timestamp: { seconds: 5, nanos: 7 }, tags: { a: '' } });
    expect(parseNewlogLine('{"timestamp":{"seconds":null,"nanos":9}}', 1)).toEqual({ timestamp: { nanos: 9 } });
    expect(() => parseNewlogLine('{"timestamp":{"Nanos":"7"}}', 3)).toThrowError(/line 3: field timestamp\.nanos must be an integer, got "7"/);
    expect(() => parseNewlogLine('{"tags":{"k":1}}', 2)).toThrowError(/line 2: field tags\.k must be a string/);
    expect(() => parseNewlogLine('{"timestamp":[1]}', 2)).toThrowError(/line 2: field timestamp must be an object/);
  });

  test('device files need a LogBundle JSON Comment', () => {
    const app = writeNewlogsFile({ kind: 'app', appName: 'x' }, [good], 1);
    expect(() => readNewlogsFile(app, { kind: 'device' })).toThrowError(/Comment is not LogBundle JSON/);
    expect(readNewlogsFile(app, { kind: 'app' }).rawLines).toEqual([good]);
  });

  test('rejects bad gzip: magic, truncated body, corrupted CRC', () => {
    const f = Buffer.from(file([good, good]));
    expect(() => readNewlogsFile(Buffer.from('hello world, not gzip'))).toThrowError(/bad magic/);
    expect(() => readNewlogsFile(f.subarray(0, f.length - 6))).toThrowError(/does not inflate/);
    const bad = Buffer.from(f);
    bad[bad.length - 8]! ^= 0xff;
    expect(() => readNewlogsFile(bad)).toThrowError(/does not inflate/);
  });
});

describe('splitting into files of at most 50 000 bytes', () => {
  // Log-like lines with enough entropy that compression is realistic (ratio ~ 3–6x).
  function lines(n: number, seed: string): string[] {
    const out: string[] = [];
    const agents = ['zedagent', 'nim', 'newlogd', 'vaultmgr', 'domainmgr', 'kernel'];
    for (let i = 0; i < n; i++) {
      const h = createHash('sha256').update(`${seed}|${i}`).digest('hex');
      out.push(
        encodeNewlogLine({
          severity: i % 7 === 0 ? 'warning' : 'info',
          source: agents[i % agents.length]!,
          iid: String(1000 + (i % 97)),
          content: `handler ${h.slice(0, 12)} processed item ${i} in ${parseInt(h.slice(12, 16), 16)}us <${h.slice(16, 40)}>`,
          msgid: i,
          timestamp: { seconds: 1779268200 + Math.floor(i / 10), nanos: (i % 10) * 100_000_000 },
          filename: `/pillar/cmd/${agents[i % agents.length]}/handler.go:${i % 900}`,
          function: 'main.handle',
        }),
      );
    }
    return out;
  }

  test('every file ≤ 50 000 bytes, nearly full, lines kept in order, few compressions', () => {
    const input = lines(40_000, 'split');
    const kind: NewlogsKind = { kind: 'device', meta: { devID: '6ae3b91c-2f4d-4c8e-9b57-0d1e2f3a4b5c', image: 'IMGA', eveVersion: '14.5.2-kvm-amd64' } };
    const t0 = performance.now();
    const stats = { compressions: 0 };
    const files = packNewlogsFiles(kind, input, 1779268320, NEWLOGS_MAX_FILE_BYTES, stats);
    const ms = performance.now() - t0;
    const rawBytes = input.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    console.log(`split ${rawBytes} raw bytes into ${files.length} files in ${ms.toFixed(0)} ms, ${stats.compressions} compressions`);
    expect(files.length).toBeGreaterThan(5);
    expect(stats.compressions).toBeLessThanOrEqual(files.length * 5);
    const back: string[] = [];
    files.forEach((f, i) => {
      expect(f.bytes.length).toBeLessThanOrEqual(NEWLOGS_MAX_FILE_BYTES);
      expect(f.oversize).toBe(false);
      if (i < files.length - 1) expect(f.bytes.length).toBeGreaterThan(NEWLOGS_MAX_FILE_BYTES * 0.95);
      const r = readNewlogsFile(f.bytes, { kind: 'device' });
      expect(r.rawLines.length).toBe(f.lines);
      expect(r.header.mtime).toBe(1779268320);
      back.push(...r.rawLines);
    });
    expect(back).toEqual(input);
  });

  test('batcher rotates by raw size like newlogd and on demand', () => {
    const b = new NewlogsBatcher({ kind: 'app', appName: 'nginx-gateway' }, { rotateRawBytes: 200_000 });
    const input = lines(3000, 'batch');
    const files = input.flatMap((l) => b.add(l, 100));
    expect(files.length).toBeGreaterThan(0);
    expect(b.pendingLines).toBeLessThan(input.length);
    files.push(...b.rotate(200));
    expect(b.pendingLines).toBe(0);
    expect(b.rotate(300)).toEqual([]);
    const back = files.flatMap((f) => readNewlogsFile(f.bytes, { kind: 'app' }).rawLines);
    expect(back).toEqual(input);
    for (const f of files) expect(f.bytes.length).toBeLessThanOrEqual(NEWLOGS_MAX_FILE_BYTES);
  });

  test('a single line that cannot fit goes alone and is flagged, like EVE', () => {
    const huge = encodeNewlogLine({ content: randomText(90_000) });
    const small = lines(10, 'small');
    const files = packNewlogsFiles({ kind: 'app', appName: 'a' }, [...small, huge, ...small], 1);
    expect(files.map((f) => f.lines)).toEqual([10, 1, 10]);
    expect(files[1]!.oversize).toBe(true);
    expect(files[0]!.bytes.length).toBeLessThanOrEqual(NEWLOGS_MAX_FILE_BYTES);
  });
});

function randomText(n: number): string {
  let s = '';
  let i = 0;
  while (s.length < n) s += createHash('sha256').update(String(i++)).digest('base64');
  return s.slice(0, n);
}

describe('memory: what devices keep queued owns its bytes', () => {
  test('a packed file is not a view into a shared Buffer pool slab', () => {
    const files = packNewlogsFiles({ kind: 'app', appName: 'a' }, ['{"msg":"one short line"}'], 1);
    expect(files).toHaveLength(1);
    const f = files[0]!.bytes;
    expect(f.byteLength).toBeLessThan(200);
    expect(f.buffer.byteLength).toBe(f.byteLength);
  });

  test('exactBytes copies a pooled view and passes an own buffer through', () => {
    const pooled = Buffer.from('abc'); // small Buffer.from uses the 8 KiB pool
    expect(pooled.buffer.byteLength).toBeGreaterThan(3);
    const own = exactBytes(pooled);
    expect([...own]).toEqual([97, 98, 99]);
    expect(own.buffer.byteLength).toBe(3);
    expect(exactBytes(own)).toBe(own);
  });
});
