// Attestation nonces from a pool of random bytes: the asked size, never the same twice, and each
// one a copy that later refills of the pool do not change.

import { describe, expect, it } from 'vitest';
import { NoncePool } from '../src/servers/controller/nonce-pool.js';

describe('NoncePool', () => {
  it('hands out distinct nonces of the asked size that outlive refills', () => {
    const pool = new NoncePool();
    const first = pool.take(32);
    const kept = Buffer.from(first);
    const seen = new Set<string>([kept.toString('hex')]);
    // 1,000 × 32 bytes: several refills of the 4 KiB pool.
    for (let i = 0; i < 1000; i++) {
      const n = pool.take(32);
      expect(n.length).toBe(32);
      seen.add(Buffer.from(n).toString('hex'));
    }
    expect(seen.size).toBe(1001);
    expect(Buffer.from(first)).toEqual(kept);
    expect(first.buffer.byteLength).toBe(32);
  });

  it('refuses a nonce larger than the pool', () => {
    expect(() => new NoncePool().take(5000)).toThrow(/nonce of 5000 bytes is larger than the pool \(4096\)/);
  });
});
