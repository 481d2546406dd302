// A small, fast, seeded PRNG (xoshiro128**) implementing the device Rng port. Each device gets
// independent streams derived from (scenario seed, device index, stream name) through splitmix32,
// so adding a consumer to one stream never shifts the numbers another stream sees.
// Four uint32 fields per instance: cheap enough for tens of thousands of devices per worker.

import type { Rng } from '../ports.js';

const TWO_POW_32 = 4294967296;
/** ASCII codes of the lower-case hex digits. */
const HEX_DIGITS = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** uuid()'s characters before they become a string; per thread, never shared across a call. */
const UUID_SCRATCH = Buffer.allocUnsafeSlow(36);

/** Names of the per-device random streams used by the device layer (any other string works too). */
export type RngStream =
  | 'device'
  | 'timers'
  | 'queue'
  | 'metrics'
  | 'logs'
  | 'flowlog'
  | 'apps'
  | 'identity'
  | (string & {});

export class SeededRng implements Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** Seeds directly from four 32-bit words (not all zero). Prefer SeededRng.create(). */
  constructor(s0: number, s1: number, s2: number, s3: number) {
    this.a = s0 >>> 0;
    this.b = s1 >>> 0;
    this.c = s2 >>> 0;
    this.d = s3 >>> 0;
    if ((this.a | this.b | this.c | this.d) === 0) this.d = 0x9e3779b9; // all-zero state is a fixed point
  }

  /**
   * The generator for one stream of one device. `seed` is the scenario seed (any safe integer),
   * `deviceIndex` the fleet index, `stream` a name or number that separates independent uses.
   */
  static create(seed: number, deviceIndex = 0, stream: RngStream | number = 'device'): SeededRng {
    if (!Number.isSafeInteger(seed)) throw new Error(`SeededRng: seed must be a safe integer, got ${seed}`);
    if (!Number.isSafeInteger(deviceIndex) || deviceIndex < 0) {
      throw new Error(`SeededRng: deviceIndex must be a non-negative integer, got ${deviceIndex}`);
    }
    const streamWord = typeof stream === 'number' ? stream >>> 0 : fnv1a32(stream);
    // Fold every input into one splitmix32 state, then draw the four state words from it.
    const sm = new SplitMix32(mix32(seed >>> 0) ^ 0x85ebca6b);
    sm.absorb(Math.floor(seed / TWO_POW_32) >>> 0);
    sm.absorb(deviceIndex >>> 0);
    sm.absorb(Math.floor(deviceIndex / TWO_POW_32) >>> 0);
    sm.absorb(streamWord);
    return new SeededRng(sm.next(), sm.next(), sm.next(), sm.next());
  }

  /** Next raw 32-bit unsigned value. */
  nextU32(): number {
    const a = this.a;
    const b = this.b;
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = (b << 9) >>> 0;
    this.c ^= a;
    this.d ^= b;
    this.b = (b ^ this.c) >>> 0;
    this.a = (a ^ this.d) >>> 0;
    this.c = (this.c ^ t) >>> 0;
    this.d = rotl(this.d, 11);
    this.c >>>= 0;
    return result;
  }

  next(): number {
    return this.nextU32() / TWO_POW_32;
  }

  range(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  int(n: number): number {
    if (!(n > 0)) throw new Error(`Rng.int: n must be positive, got ${n}`);
    return Math.floor(this.next() * n);
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 4) {
      let w = this.nextU32();
      for (let j = i; j < i + 4 && j < n; j++) {
        out[j] = w & 0xff;
        w >>>= 8;
      }
    }
    return out;
  }

  /**
   * A version 4 UUID from the next 16 bytes (as bytes(16) would give them). Written into a scratch
   * buffer and read as one string: every request carries one (X-Request-Id), and building it from 20
   * pieces left 20 strings of garbage.
   */
  uuid(): string {
    const out = UUID_SCRATCH;
    let p = 0;
    for (let i = 0; i < 16; i += 4) {
      let w = this.nextU32();
      for (let j = i; j < i + 4; j++) {
        let byte = w & 0xff;
        w >>>= 8;
        if (j === 6) byte = (byte & 0x0f) | 0x40; // version 4
        else if (j === 8) byte = (byte & 0x3f) | 0x80; // RFC 4122 variant
        if (j === 4 || j === 6 || j === 8 || j === 10) out[p++] = 0x2d; // '-'
        out[p++] = HEX_DIGITS[byte >>> 4]!;
        out[p++] = HEX_DIGITS[byte & 15]!;
      }
    }
    return out.toString('latin1', 0, 36);
  }

  /** Picks one element uniformly. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick: empty list');
    return items[this.int(items.length)]!;
  }

  /** Snapshot of the state (for tests and replays). */
  state(): [number, number, number, number] {
    return [this.a, this.b, this.c, this.d];
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** splitmix32-style finaliser (murmur3 fmix32 constants). */
function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

class SplitMix32 {
  constructor(private s: number) {}
  absorb(word: number): void {
    this.s = mix32((this.s ^ word) + 0x9e3779b9);
  }
  next(): number {
    this.s = (this.s + 0x9e3779b9) >>> 0;
    return mix32(this.s);
  }
}

function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
