// The devices of a group receive the same configuration, so much of what each keeps from it (parsed
// timers, the config item status, names, versions, content hashes, profile lists) is equal across
// thousands of devices of a worker. Decoding gives every device copies of its own; these tables keep
// one per thread instead, so a device holds references. UUIDs are not put here: a controller makes
// app instances, volumes and network instances per device. Only immutable values go in: objects are
// frozen, and a device replaces a value, never edits it. Each table is bounded; when one fills up it
// starts again, which costs sharing, never correctness.

/** Most entries per table before it starts again. */
export const SHARED_TABLE_LIMIT = 50_000;

/** One canonical copy per distinct value. */
export class SharedValueTable<T> {
  private readonly byKey = new Map<string, T>();

  constructor(private readonly limit = SHARED_TABLE_LIMIT) {}

  /** The value already held under `key`, or `make()` held from now on. */
  get(key: string, make: () => T): T {
    const held = this.byKey.get(key);
    if (held !== undefined) return held;
    if (this.byKey.size >= this.limit) this.byKey.clear();
    const value = make();
    this.byKey.set(key, value);
    return value;
  }

  get size(): number {
    return this.byKey.size;
  }
}

const strings = new SharedValueTable<string>();
const records = new SharedValueTable<object>();

/** The thread's copy of `s`: equal strings kept by many devices become one. */
export function sharedString(s: string): string {
  // V8 keeps '' and one-character strings shared already.
  return s.length < 2 ? s : strings.get(s, () => s);
}

/**
 * The thread's frozen copy of plain data (strings, numbers, booleans, arrays and plain objects of
 * them; strings inside shared too). `kind` keeps values of different types apart.
 */
export function sharedRecord<T extends object>(kind: string, value: T): Readonly<T> {
  return records.get(`${kind}\u0000${JSON.stringify(value)}`, () => frozenCopy(value) as object) as Readonly<T>;
}

function frozenCopy(v: unknown): unknown {
  if (typeof v === 'string') return sharedString(v);
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return Object.freeze(v.map(frozenCopy));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = frozenCopy(x);
  return Object.freeze(out);
}
