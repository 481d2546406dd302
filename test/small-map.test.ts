import { describe, expect, it } from 'vitest';
import { SmallMap } from '../src/memory/small-map.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';

describe('SmallMap: a Map for a handful of entries', () => {
  it('answers like a Map through random sets, deletes and clears, small and past the switch to a Map', () => {
    const rng = SeededRng.create(11);
    for (const keySpace of [3, 12, 40]) {
      const ours = new SmallMap<string, number>();
      const real = new Map<string, number>();
      let maxSize = 0;
      for (let step = 0; step < 4000; step++) {
        const key = `k${rng.int(keySpace)}`;
        const op = rng.next();
        if (op < 0.55) {
          expect(ours.set(key, step)).toBe(ours);
          real.set(key, step);
        } else if (op < 0.95) expect(ours.delete(key)).toBe(real.delete(key));
        else if (op < 0.96) {
          ours.clear();
          real.clear();
        }
        expect(ours.size).toBe(real.size);
        maxSize = Math.max(maxSize, real.size);
        expect(ours.get(key)).toBe(real.get(key));
        expect(ours.has(key)).toBe(real.has(key));
        if (step % 97 === 0) {
          // Insertion order, as a Map keeps it (an existing key's new value keeps its place).
          expect([...ours]).toEqual([...real]);
          expect([...ours.keys()]).toEqual([...real.keys()]);
          expect([...ours.values()]).toEqual([...real.values()]);
          const seen: Array<[string, number]> = [];
          ours.forEach((v, k, m) => {
            expect(m).toBe(ours);
            seen.push([k, v]);
          });
          expect(seen).toEqual([...real.entries()]);
        }
      }
      // The walk reached both forms: the key space past the limit held more than 16 keys at once.
      expect(maxSize).toBeGreaterThan(keySpace > 16 ? 16 : keySpace - 1);
    }
  });

  it('lets an iteration delete entries, the current one included, and still visits each entry once', () => {
    const m = new SmallMap<string, number>();
    for (let i = 0; i < 6; i++) m.set(`a${i}`, i);
    const visited: string[] = [];
    for (const [k, v] of m) {
      visited.push(k);
      if (v % 2 === 0) m.delete(k);
    }
    expect(visited).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
    expect([...m.keys()]).toEqual(['a1', 'a3', 'a5']);
  });

  it('shows a value set for an existing key to an iteration under way', () => {
    const m = new SmallMap<string, number>().set('x', 1).set('y', 2);
    const seen: number[] = [];
    for (const [k, v] of m) {
      seen.push(v);
      if (k === 'x') m.set('y', 20);
    }
    expect(seen).toEqual([1, 20]);
  });

  it('keys by identity, as a Map does', () => {
    const a = { id: 1 };
    const m = new SmallMap<object, string>().set(a, 'a');
    expect(m.get({ id: 1 })).toBeUndefined();
    expect(m.get(a)).toBe('a');
  });
});
