// Go encoding/json string output, which EVE uses for newlogs lines and the gzip Comment. It differs
// from JSON.stringify in three ways: <, > and & become \u003c \u003e \u0026 (HTML-safe escaping),
// U+2028/U+2029 become \u2028 \u2029, and invalid UTF-8 (in JS: lone surrogates) becomes U+FFFD.

const GO_EXTRA_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};
const GO_EXTRA_SOURCE = '[<>&\\u2028\\u2029]';
const LONE_SURROGATE_SOURCE = '[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]';
// Separate non-global regexes for tests: a global regex carries lastIndex between calls.
const HAS_GO_EXTRA = new RegExp(GO_EXTRA_SOURCE);
const ALL_GO_EXTRA = new RegExp(GO_EXTRA_SOURCE, 'g');
const HAS_LONE_SURROGATE = new RegExp(LONE_SURROGATE_SOURCE);
const ALL_LONE_SURROGATES = new RegExp(LONE_SURROGATE_SOURCE, 'g');

// Characters for which Go's output is not just the string between quotes: the ones JSON escapes
// (", \\, controls), Go's HTML-safe extras and line separators, and surrogates (which may be lone).
const HAS_SURROGATE = /[\uD800-\uDFFF]/;
const NEEDS_ESCAPING = /["\\<>&\u0000-\u001f\u2028\u2029\uD800-\uDFFF]/;

/** A JSON string literal (with quotes) exactly as Go's json.Marshal writes it. */
export function goJsonString(s: string): string {
  // Most log text needs no escaping at all: one scan instead of three regexes and a stringify.
  if (!NEEDS_ESCAPING.test(s)) return '"' + s + '"';
  return goJsonStringEscaped(s);
}

/** goJsonString the long way (exported for the test that holds the fast path to it). */
export function goJsonStringEscaped(s: string): string {
  // JSON.stringify already matches Go for ", \, \b, \f, \n, \r, \t and \u00XX (lower-case hex).
  const json = JSON.stringify(HAS_LONE_SURROGATE.test(s) ? s.replace(ALL_LONE_SURROGATES, '\uFFFD') : s);
  return HAS_GO_EXTRA.test(json) ? json.replace(ALL_GO_EXTRA, (c) => GO_EXTRA_ESCAPES[c]!) : json;
}

/** An integer as Go writes int64/uint64 (plain decimal digits). */
export function goJsonInteger(n: number): string {
  if (!Number.isSafeInteger(n)) throw new RangeError(`not a safe integer for JSON: ${n}`);
  return String(n);
}

/** Map keys in Go's order: byte-wise over UTF-8. */
export function goSortedKeys(obj: Record<string, unknown>): string[] {
  const keys = Object.keys(obj);
  // Without surrogates, UTF-16 code-unit order is code-point order, which is UTF-8 byte order.
  if (!keys.some((k) => HAS_SURROGATE.test(k))) return keys.sort();
  return keys.sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}
