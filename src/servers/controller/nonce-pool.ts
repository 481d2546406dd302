// Fresh random bytes for attestation nonces, drawn from a pool refilled 4 KiB at a time: a
// randomBytes(32) call costs about 4.5 µs (a call into OpenSSL and a new Buffer), a slice of the
// pool a fraction of that. Each nonce gets its own copy, so a stored nonce never aliases the pool.

import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;

export class NoncePool {
  private readonly pool = new Uint8Array(POOL_BYTES);
  private at = POOL_BYTES;

  /** `size` fresh random bytes (size ≤ 4096), never handed out before. */
  take(size: number): Uint8Array {
    if (size > POOL_BYTES) throw new Error(`nonce of ${size} bytes is larger than the pool (${POOL_BYTES})`);
    if (this.at + size > POOL_BYTES) {
      randomFillSync(this.pool);
      this.at = 0;
    }
    const out = this.pool.slice(this.at, this.at + size);
    this.at += size;
    return out;
  }
}
