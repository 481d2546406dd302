// The fast paths of go-json.ts (no escaping needed; keys without surrogates) must give exactly what
// the long way gives, for every kind of character that the long way treats specially.

import { describe, expect, it } from 'vitest';
import { goJsonString, goJsonStringEscaped, goSortedKeys } from '../src/protocol/go-json.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';

// Plain text, every character with a special meaning to JSON or Go, and both halves of surrogate pairs.
const ALPHABET = ['a', 'Z', '0', ' ', '~', '\u007f', 'é', 'ü', '€', '日', '"', '\\', '<', '>', '&', '\n', '\t', '\u0000', '\u001f', '\u2028', '\u2029', '\uD83D', '\uDE00', '\uD800', '\uDFFF', '\uFFFD', '/'];

function randomString(rng: SeededRng, maxLen: number): string {
  let s = '';
  const n = rng.int(maxLen + 1);
  for (let i = 0; i < n; i++) s += ALPHABET[rng.int(ALPHABET.length)]!;
  return s;
}

describe('go-json fast paths', () => {
  it('goJsonString equals the escaping path for 20,000 random strings', () => {
    const rng = SeededRng.create(11, 0, 'go-json');
    let fast = 0;
    for (let i = 0; i < 20_000; i++) {
      const s = randomString(rng, i % 4 === 0 ? 3 : 12);
      expect(goJsonString(s)).toBe(goJsonStringEscaped(s));
      if (goJsonString(s) === `"${s}"`) fast++;
    }
    // Both paths were exercised.
    expect(fast).toBeGreaterThan(100);
    expect(fast).toBeLessThan(20_000);
  });

  it('writes the Go escapes on the slow path', () => {
    expect(goJsonString('a<b>&c')).toBe('"a\\u003cb\\u003e\\u0026c"');
    expect(goJsonString('x\u2028y')).toBe('"x\\u2028y"');
    expect(goJsonString('lone \uD800')).toBe('"lone \uFFFD"');
    expect(goJsonString('plain text 123')).toBe('"plain text 123"');
  });

  it('goSortedKeys orders by UTF-8 bytes with and without surrogates', () => {
    const rng = SeededRng.create(12, 0, 'go-json');
    for (let i = 0; i < 2_000; i++) {
      const obj: Record<string, string> = {};
      for (let k = 0; k < 6; k++) obj[randomString(rng, 5)] = '';
      const byBytes = Object.keys(obj).sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
      expect(goSortedKeys(obj)).toEqual(byBytes);
    }
    // U+FFFD sorts after a surrogate pair's code point only by UTF-8 bytes, not by UTF-16 units.
    expect(goSortedKeys({ '\uFFFD': '', '\uD83D\uDE00': '' })).toEqual(['\uFFFD', '\uD83D\uDE00']);
  });
});
