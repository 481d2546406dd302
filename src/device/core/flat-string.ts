// A copy of a string that holds no other string. V8 represents a slice of a long string (a UUID
// cut out of a decoded record or a request path) as a view that keeps the whole of it alive, and a
// string built piece by piece as a tree of its pieces; strings a device keeps for its whole life
// are copied flat.

/** `s` as one flat string of its own. */
export function flatString(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}
