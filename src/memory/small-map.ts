// A Map for the few entries a device keeps per app, volume or network instance. A V8 Map costs
// about 184 bytes even with one entry (its hash table starts with room for several), and a device
// kept eight of them; this one keeps its entries in one flat array of exactly their size
// ([key0, value0, key1, value1, …], about 56 bytes with two entries, 16 when empty) and searches it
// linearly, which for a handful of keys is as fast as hashing. Past SMALL_LIMIT entries it turns
// into a real Map.
//
// The flat array is replaced, never resized, when an entry is added or deleted, so an iteration
// goes over the entries as they were when it started (a Map would also visit entries added during
// the iteration); a value set for an existing key is seen at once.

import { withPairAppended } from './exact-array.js';

/** Entries kept in the flat array; one more and the entries move to a Map. */
const SMALL_LIMIT = 16;
const EMPTY: readonly unknown[] = Object.freeze([]);

export class SmallMap<K, V> implements ReadonlyMap<K, V> {
  private kv: readonly unknown[] | Map<K, V> = EMPTY;

  get size(): number {
    const kv = this.kv;
    return kv instanceof Map ? kv.size : kv.length >> 1;
  }

  private indexOf(key: K): number {
    const kv = this.kv as readonly unknown[];
    for (let i = 0; i < kv.length; i += 2) if (kv[i] === key) return i;
    return -1;
  }

  get(key: K): V | undefined {
    const kv = this.kv;
    if (kv instanceof Map) return kv.get(key);
    const i = this.indexOf(key);
    return i < 0 ? undefined : (kv[i + 1] as V);
  }

  has(key: K): boolean {
    const kv = this.kv;
    return kv instanceof Map ? kv.has(key) : this.indexOf(key) >= 0;
  }

  set(key: K, value: V): this {
    const kv = this.kv;
    if (kv instanceof Map) {
      kv.set(key, value);
      return this;
    }
    const i = this.indexOf(key);
    if (i >= 0) {
      (kv as unknown[])[i + 1] = value;
      return this;
    }
    if (kv.length >> 1 >= SMALL_LIMIT) {
      const map = new Map<K, V>();
      for (let j = 0; j < kv.length; j += 2) map.set(kv[j] as K, kv[j + 1] as V);
      this.kv = map.set(key, value);
      return this;
    }
    this.kv = withPairAppended<unknown>(kv, key, value);
    return this;
  }

  delete(key: K): boolean {
    const kv = this.kv;
    if (kv instanceof Map) return kv.delete(key);
    const i = this.indexOf(key);
    if (i < 0) return false;
    if (kv.length === 2) {
      this.kv = EMPTY;
      return true;
    }
    const next = new Array<unknown>(kv.length - 2);
    for (let j = 0, k = 0; j < kv.length; j += 2) {
      if (j === i) continue;
      next[k++] = kv[j];
      next[k++] = kv[j + 1];
    }
    this.kv = next;
    return true;
  }

  clear(): void {
    this.kv = EMPTY;
  }

  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [k, v] of this) fn.call(thisArg, v, k, this);
  }

  *entries(): IterableIterator<[K, V]> {
    const kv = this.kv;
    if (kv instanceof Map) {
      yield* kv.entries();
      return;
    }
    for (let i = 0; i < kv.length; i += 2) yield [kv[i] as K, kv[i + 1] as V];
  }

  *keys(): IterableIterator<K> {
    const kv = this.kv;
    if (kv instanceof Map) {
      yield* kv.keys();
      return;
    }
    for (let i = 0; i < kv.length; i += 2) yield kv[i] as K;
  }

  *values(): IterableIterator<V> {
    const kv = this.kv;
    if (kv instanceof Map) {
      yield* kv.values();
      return;
    }
    for (let i = 0; i < kv.length; i += 2) yield kv[i + 1] as V;
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries();
  }
}
