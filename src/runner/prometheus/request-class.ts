// The `code` and `class` labels every evesim request metric carries, the same way on each:
// `code` is the exact HTTP status ('200', '404') or, when no HTTP answer came, the transport
// error's name ('ECONNREFUSED', 'timeout', see transport-errors.ts); `class` is its family.

export type RequestClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'transport';

/** The class of a `code` label: the status family, or 'transport' for a named transport error. */
export function requestClassOf(code: string): RequestClass {
  if (/^[1-5][0-9][0-9]$/.test(code)) return `${code[0]}xx` as RequestClass;
  return 'transport';
}
