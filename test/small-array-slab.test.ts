import { describe, expect, it } from 'vitest';
import { smallArraySlab } from '../src/memory/small-array-slab.js';
import { DeviceCounters } from '../src/device/telemetry/metrics-builder.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';

describe('smallArraySlab: small counter arrays as views into shared blocks', () => {
  it('hands out zeroed views that share blocks but never overlap', () => {
    const views = Array.from({ length: 3000 }, (_, i) => (i % 2 === 0 ? smallArraySlab.float64(1 + (i % 60)) : smallArraySlab.uint32(1 + (i % 91))));
    views.forEach((v, i) => {
      expect(Array.from(v).every((x) => x === 0)).toBe(true);
      v.fill(i + 1);
    });
    views.forEach((v, i) => expect(Array.from(v).every((x) => x === i + 1)).toBe(true));
    // 3,000 views of at most 60 doubles: a handful of 64 KiB blocks, not an ArrayBuffer each.
    expect(new Set(views.map((v) => v.buffer)).size).toBeLessThan(30);
    expect(views.every((v) => v.buffer.byteLength === 64 * 1024)).toBe(true);
  });

  it('reuses a given-back view for the same size, zeroed, and leaves other sizes alone', () => {
    const a = smallArraySlab.float64(54);
    a.fill(7);
    const other = smallArraySlab.float64(11);
    other.fill(3);
    smallArraySlab.give(a);
    const b = smallArraySlab.float64(54);
    expect(b.buffer).toBe(a.buffer);
    expect(b.byteOffset).toBe(a.byteOffset);
    expect(Array.from(b).every((x) => x === 0)).toBe(true);
    expect(Array.from(other).every((x) => x === 3)).toBe(true);
    const u = smallArraySlab.uint32(5); // 3 units
    smallArraySlab.give(u);
    const f = smallArraySlab.float64(3); // 3 units: the same range
    expect(f.byteOffset).toBe(u.byteOffset);
  });

  it('keeps copies of small byte strings in the blocks, apart from their source, and reuses them', () => {
    const source = new Uint8Array(200).map((_, i) => i);
    const hash = source.subarray(10, 42);
    const a = smallArraySlab.copyBytes(hash);
    expect(Array.from(a)).toEqual(Array.from(hash));
    expect(a.buffer).not.toBe(source.buffer);
    expect(a.buffer.byteLength).toBe(64 * 1024);
    source.fill(0); // the copy does not follow its source
    expect(a[0]).toBe(10);
    const neighbour = smallArraySlab.copyBytes(new Uint8Array([9, 9, 9]));
    smallArraySlab.give(a);
    const b = smallArraySlab.copyBytes(new Uint8Array(30).fill(5)); // 4 units, as a: its range again
    expect(b.byteOffset).toBe(a.byteOffset);
    expect(Array.from(b)).toEqual(new Array(30).fill(5));
    expect(Array.from(neighbour)).toEqual([9, 9, 9]);
    const empty = smallArraySlab.copyBytes(new Uint8Array(0));
    expect(empty.length).toBe(0);
    smallArraySlab.give(empty);
  });

  it('gives large arrays a buffer of their own, and does not keep them when given back', () => {
    const big = smallArraySlab.float64(5000);
    expect(big.buffer.byteLength).toBe(5000 * 8);
    smallArraySlab.give(big);
    expect(smallArraySlab.float64(5000)).not.toBe(big);
  });
});

describe('DeviceCounters on the slab', () => {
  it('grows per-URL counters and keeps their values; a retired instance gives its views back and counts apart', () => {
    const rng = SeededRng.create(1, 0, 'counters');
    const c = new DeviceCounters(rng, { storageMB: 1000 }, 0);
    const endpoints = ['config', 'metrics', 'info', 'newlogs', 'flowlog', 'attest', 'certs', 'uuid'] as const;
    for (let round = 1; round <= 3; round++) {
      for (const endpoint of endpoints) c.recordRequest({ endpoint, reqBytes: 100, respBytes: 10, success: true, latencyMs: 5, at: round });
    }
    // App log URLs, one per app: 8 + 20 URLs, past the first dozen slots, so the counts grow twice.
    const apps = Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    for (const appUuid of apps) c.recordRequest({ endpoint: 'appnewlogs', appUuid, reqBytes: 50, respBytes: 0, success: false, latencyMs: 1, at: 4 });
    for (const endpoint of endpoints) expect(c.urlCounter(endpoint, 'sentMsg')).toBe(3);
    for (const endpoint of endpoints) expect(c.urlCounter(endpoint, 'sentB')).toBe(300);
    for (const appUuid of apps) expect(c.urlCounter('appnewlogs', 'tryB', appUuid)).toBe(50);
    expect(c.get('zcSuccess')).toBe(24);
    expect(c.get('zcFailure')).toBe(20);
    c.retire();
    const next = new DeviceCounters(rng, { storageMB: 1000 }, 10);
    next.recordRequest({ endpoint: 'config', reqBytes: 1, respBytes: 1, success: true, latencyMs: 1, at: 11 });
    expect(next.get('zcSuccess')).toBe(1);
    expect(next.urlCounter('config', 'sentMsg')).toBe(1);
    // A late write to the retired instance reaches none of the new one's (reused) views.
    c.recordRequest({ endpoint: 'config', reqBytes: 1, respBytes: 1, success: true, latencyMs: 1, at: 12 });
    expect(next.get('zcSuccess')).toBe(1);
    expect(next.urlCounter('config', 'sentMsg')).toBe(1);
  });
});
