// Small typed arrays a thread keeps for thousands of devices (metrics counters, per-app and per-URL
// counters, request tallies, a device's integrity token and certificate hash) as views into shared
// 64 KiB blocks instead of arrays of their own. A typed array of its own has its own ArrayBuffer
// (under 64 bytes, as soon as anything reads its .buffer), and V8 keeps a BackingStore and
// bookkeeping in native memory for each, none of it counted in `external`: 20 doubles cost 741 B of
// RSS on their own against 217 B as a view into a larger buffer (Node 20, 100,000 arrays).
//
// The lowest layer (src/memory) so that identity and device code share one allocator. Views freed
// with give() are handed out again for the same size; the rest of a block stays in use until every
// view into it is gone. Module state is per thread, so each fleet worker has its own.

/** Storage is handed out in 8-byte units (one double, or two 32-bit counters). */
const BLOCK_UNITS = 8192;
/** Bigger requests get an array of their own: the saving is per array, not per byte. */
const MAX_UNITS = 1024;

class SmallArraySlab {
  private block = new ArrayBuffer(BLOCK_UNITS * 8);
  private used = 0;
  /** Freed ranges by size in units: [buffer, byteOffset] pairs. */
  private readonly free = new Map<number, { buffer: ArrayBuffer; byteOffset: number }[]>();

  /** A zeroed range of `units` 8-byte units. */
  private take(units: number): { buffer: ArrayBuffer; byteOffset: number } {
    const reused = this.free.get(units)?.pop();
    if (reused !== undefined) {
      new Float64Array(reused.buffer, reused.byteOffset, units).fill(0);
      return reused;
    }
    if (this.used + units > BLOCK_UNITS) {
      this.block = new ArrayBuffer(BLOCK_UNITS * 8);
      this.used = 0;
    }
    const range = { buffer: this.block, byteOffset: this.used * 8 };
    this.used += units;
    return range;
  }

  float64(length: number): Float64Array {
    if (length > MAX_UNITS) return new Float64Array(length);
    const r = this.take(Math.max(1, length));
    return new Float64Array(r.buffer, r.byteOffset, length);
  }

  uint32(length: number): Uint32Array {
    const units = Math.max(1, Math.ceil(length / 2));
    if (units > MAX_UNITS) return new Uint32Array(length);
    const r = this.take(units);
    return new Uint32Array(r.buffer, r.byteOffset, length);
  }

  /** A copy of `bytes` kept for long (a token, a hash): a view, so no backing store of its own. */
  copyBytes(bytes: Uint8Array): Uint8Array {
    const units = Math.max(1, Math.ceil(bytes.length / 8));
    if (units > MAX_UNITS) return new Uint8Array(bytes);
    const r = this.take(units);
    const out = new Uint8Array(r.buffer, r.byteOffset, bytes.length);
    out.set(bytes);
    return out;
  }

  /** Hands a view back for reuse; the caller must not touch it afterwards. Arrays of their own are left to the GC. */
  give(a: Float64Array | Uint32Array | Uint8Array): void {
    if (a.byteLength === a.buffer.byteLength) return; // an array of its own (or a whole block: never handed out)
    const units = Math.max(1, Math.ceil(a.byteLength / 8));
    let list = this.free.get(units);
    if (list === undefined) this.free.set(units, (list = []));
    list.push({ buffer: a.buffer as ArrayBuffer, byteOffset: a.byteOffset });
  }
}

/** This thread's slab. */
export const smallArraySlab = new SmallArraySlab();
