// Arrays a device keeps for long and grows rarely: made at exactly their length. An array grown by
// push gets spare room (16 slots and more beyond what it holds), which thousands of devices pay for.

/** A copy of `items` with `a` and `b` appended, of exactly that length (for arrays of pairs). */
export function withPairAppended<T>(items: readonly T[], a: T, b: T): T[] {
  const next = new Array<T>(items.length + 2);
  for (let i = 0; i < items.length; i++) next[i] = items[i]!;
  next[items.length] = a;
  next[items.length + 1] = b;
  return next;
}
