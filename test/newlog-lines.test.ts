// Devices write newlogs entries straight into one byte buffer per file (NewlogLines.add,
// src/protocol/newlog-lines.ts). Those bytes must be exactly encodeNewlogLine's lines joined with
// '\n' in UTF-8 (encodeNewlogLine is held to EVE-written files in newlogs.test.ts, and so is the
// writer here), and files packed from them exactly the files packed from the strings.

import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeNewlogLine, packNewlogLines, packNewlogsFiles, readNewlogsFile, type NewlogEntry, type NewlogsKind } from '../src/protocol/newlogs.js';
import { NewlogLines } from '../src/protocol/newlog-lines.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import { vectorPath } from './vectors-dir.js';

// Plain text, every character with a special meaning to JSON or Go, multi-byte UTF-8 and both halves of surrogate pairs.
const ALPHABET = ['a', 'Z', '0', ' ', '~', '\u007f', 'é', '€', '日', '"', '\\', '<', '>', '&', '\n', '\t', '\u0000', '\u2028', '\uD83D', '\uDE00', '\uD800', '/'];

function randomString(rng: SeededRng, maxLen: number, special: boolean): string {
  let s = '';
  const n = rng.int(maxLen + 1);
  for (let i = 0; i < n; i++) s += special && rng.int(4) === 0 ? ALPHABET[rng.int(ALPHABET.length)]! : 'abcdefghij klm.:'[rng.int(16)]!;
  return s;
}

/** Each field present or absent (or empty / zero, which Go omits), some with characters to escape. */
function randomEntry(rng: SeededRng): NewlogEntry {
  const special = rng.int(3) === 0;
  const str = (): string | undefined => (rng.int(4) === 0 ? undefined : rng.int(8) === 0 ? '' : randomString(rng, 40, special));
  const e: NewlogEntry = {};
  const set = <K extends keyof NewlogEntry>(k: K, v: NewlogEntry[K] | undefined): void => {
    if (v !== undefined) e[k] = v;
  };
  set('severity', str());
  set('source', str());
  set('iid', str());
  set('content', rng.int(10) === 0 ? randomString(rng, 2_000, special) : str());
  set('msgid', rng.int(4) === 0 ? undefined : rng.int(5) === 0 ? 0 : rng.int(2 ** 31) * 1_000 + rng.int(1_000));
  if (rng.int(3) === 0) {
    const tags: Record<string, string> = {};
    for (let i = rng.int(4); i > 0; i--) tags[randomString(rng, 6, special)] = randomString(rng, 10, special);
    e.tags = tags;
  }
  if (rng.int(5) > 0) {
    const ts: { seconds?: number; nanos?: number } = {};
    if (rng.int(6) > 0) ts.seconds = rng.int(2) === 0 ? 0 : 1_779_268_320 + rng.int(100_000);
    if (rng.int(6) > 0) ts.nanos = rng.int(2) === 0 ? 0 : rng.int(1_000_000_000);
    e.timestamp = ts;
  }
  set('filename', str());
  set('function', str());
  return e;
}

describe('NewlogLines', () => {
  it('escapes " and \\ in otherwise plain text (JSON in a line\'s content) as encodeNewlogLine does, even when every character needs it', () => {
    const rng = SeededRng.create(22, 0, 'newlog-lines-quotes');
    const lines = new NewlogLines(64); // small: a string of only quotes needs twice its length
    const want: string[] = [];
    const quoted = (maxLen: number, odds: number): string => {
      let s = '';
      for (let i = rng.int(maxLen + 1); i > 0; i--) s += rng.int(odds) === 0 ? (rng.int(2) === 0 ? '"' : '\\') : 'abc {}:,.0-9/_'[rng.int(14)]!;
      return s;
    };
    const entries: NewlogEntry[] = [
      { content: '"'.repeat(300), msgid: 1 },
      { content: '\\'.repeat(97), source: '"\\', msgid: 2 },
      { content: '{"file":"/pillar/cmd/zedagent/handleconfig.go:452","level":"info","msg":"parsed \\"config\\""}', msgid: 3 },
    ];
    for (let i = 0; i < 2_000; i++) entries.push({ severity: 'info', source: quoted(12, 5), content: quoted(400, i % 3 === 0 ? 1 : 6), filename: quoted(30, 9), msgid: i + 4 });
    for (const e of entries) {
      lines.add(e);
      want.push(encodeNewlogLine(e));
    }
    for (let i = 0; i < want.length; i++) if (lines.text(i, i + 1).toString('utf8') !== want[i] + '\n') expect(lines.text(i, i + 1).toString('utf8')).toBe(want[i] + '\n');
    expect(lines.text().toString('utf8')).toBe(want.join('\n') + '\n');
  });

  it('writes 5,000 random entries byte for byte as encodeNewlogLine + "\\n", growing its buffer as needed', () => {
    const rng = SeededRng.create(21, 0, 'newlog-lines');
    const lines = new NewlogLines(256); // small, so it grows many times
    const want: string[] = [];
    for (let i = 0; i < 5_000; i++) {
      const e = randomEntry(rng);
      lines.add(e);
      want.push(encodeNewlogLine(e));
    }
    expect(lines.count).toBe(want.length);
    for (let i = 0; i < want.length; i++) if (lines.text(i, i + 1).toString('utf8') !== want[i] + '\n') expect(lines.text(i, i + 1).toString('utf8')).toBe(want[i] + '\n');
    const text = want.join('\n') + '\n';
    expect(lines.text().toString('utf8')).toBe(text);
    expect(lines.byteLength).toBe(Buffer.byteLength(text, 'utf8'));
    // Line boundaries are where each line's bytes start.
    let at = 0;
    for (let i = 0; i < want.length; i += 97) {
      expect(lines.text(i, i + 1).toString('utf8')).toBe(want[i] + '\n');
      at = lines.lineStart(i);
      expect(at).toBe(Buffer.byteLength(want.slice(0, i).map((l) => l + '\n').join(''), 'utf8'));
    }
  });

  it('re-encodes the lines of EVE-written files byte for byte', () => {
    for (const file of ['dev.log.1779268320000.gz', 'app.a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61.log.1779268330000.gz']) {
      const expected = JSON.parse(readFileSync(join(vectorPath('newlogs'), `${file}.expected.json`), 'utf8')) as { raw_lines: string[]; lines: NewlogEntry[] };
      const lines = new NewlogLines();
      for (const e of expected.lines) lines.add(e);
      expect(lines.text().toString('utf8')).toBe(expected.raw_lines.map((l) => l + '\n').join(''));
    }
  });

  it('reset forgets the lines and keeps working', () => {
    const lines = new NewlogLines(64);
    lines.add({ content: 'x'.repeat(500) });
    lines.reset();
    expect(lines.count).toBe(0);
    expect(lines.byteLength).toBe(0);
    lines.add({ severity: 'info', msgid: 3 });
    expect(lines.text().toString('utf8')).toBe('{"severity":"info","msgid":3}\n');
  });

  it('writes integers as Go does, negative ones too, and refuses what JSON cannot carry exactly', () => {
    const lines = new NewlogLines(16);
    for (const v of [1, 9, 10, 99, 100, 123_456_789, -1, -10, -987_654_321, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]) {
      lines.reset();
      lines.add({ msgid: v, timestamp: { seconds: v, nanos: v } });
      expect(lines.text().toString('utf8')).toBe(encodeNewlogLine({ msgid: v, timestamp: { seconds: v, nanos: v } }) + '\n');
    }
    expect(() => lines.add({ msgid: 2 ** 60 })).toThrow(RangeError);
    expect(() => lines.add({ msgid: 1.5 })).toThrow(RangeError);
  });

  it('packs the same files as packNewlogsFiles of the encoded strings', () => {
    const rng = SeededRng.create(22, 0, 'newlog-lines');
    const entries: NewlogEntry[] = [];
    // About 600 kB of text: several 50,000-byte files.
    for (let i = 0; i < 3_000; i++) entries.push({ severity: 'info', source: 'zedagent', content: randomString(rng, 300, i % 7 === 0), msgid: i + 1, timestamp: { seconds: 1_779_268_320 + i, nanos: rng.int(1e9) } });
    const kind: NewlogsKind = { kind: 'device', meta: { devID: 'b6f0c6a4-2d0b-4f5e-9d8e-1f2a3b4c5d6e', image: 'IMGA', eveVersion: '13.4.0' } };
    const lines = new NewlogLines();
    for (const e of entries) lines.add(e);
    const fromBytes = packNewlogLines(kind, lines, 1_779_268_400);
    const fromStrings = packNewlogsFiles(kind, entries.map(encodeNewlogLine), 1_779_268_400);
    expect(fromBytes.length).toBeGreaterThan(3);
    expect(fromBytes.map((f) => f.lines)).toEqual(fromStrings.map((f) => f.lines));
    for (let i = 0; i < fromBytes.length; i++) expect(Buffer.from(fromBytes[i]!.bytes).equals(Buffer.from(fromStrings[i]!.bytes))).toBe(true);
    // And they read back as the lines, in order.
    const back = fromBytes.flatMap((f) => readNewlogsFile(f.bytes, { kind: 'device' }).rawLines);
    expect(back).toEqual(entries.map(encodeNewlogLine));
  });
});
