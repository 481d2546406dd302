// A growable byte buffer with fixed-width integers in either byte order. TPM structures are
// big-endian (the *Be methods); the TCG event log is little-endian (the *Le methods).

export class ByteWriter {
  private buf: Buffer;
  private len = 0;

  constructor(initialCapacity = 256) {
    this.buf = Buffer.allocUnsafe(Math.max(16, initialCapacity));
  }

  get length(): number {
    return this.len;
  }

  /** Reserves n bytes and returns their offset (may replace this.buf: read it after calling). */
  private room(n: number): number {
    const at = this.len;
    if (at + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, at + n));
      this.buf.copy(next, 0, 0, at);
      this.buf = next;
    }
    this.len = at + n;
    return at;
  }

  u8(v: number): this {
    const at = this.room(1);
    this.buf[at] = v & 0xff;
    return this;
  }

  u16be(v: number): this {
    const at = this.room(2);
    this.buf.writeUInt16BE(v, at);
    return this;
  }

  u32be(v: number): this {
    const at = this.room(4);
    this.buf.writeUInt32BE(v >>> 0, at);
    return this;
  }

  u64be(v: bigint | number): this {
    const at = this.room(8);
    this.buf.writeBigUInt64BE(BigInt(v), at);
    return this;
  }

  u16le(v: number): this {
    const at = this.room(2);
    this.buf.writeUInt16LE(v, at);
    return this;
  }

  u32le(v: number): this {
    const at = this.room(4);
    this.buf.writeUInt32LE(v >>> 0, at);
    return this;
  }

  u64le(v: bigint | number): this {
    const at = this.room(8);
    this.buf.writeBigUInt64LE(BigInt(v), at);
    return this;
  }

  bytes(b: Uint8Array): this {
    const at = this.room(b.length);
    this.buf.set(b, at);
    return this;
  }

  zeros(n: number): this {
    const at = this.room(n);
    this.buf.fill(0, at, this.len);
    return this;
  }

  /** TPM2B: big-endian u16 size, then the bytes. */
  tpm2b(b: Uint8Array): this {
    if (b.length > 0xffff) throw new RangeError(`TPM2B payload of ${b.length} bytes exceeds 65535`);
    return this.u16be(b.length).bytes(b);
  }

  /** A copy of the written bytes, sized exactly. */
  finish(): Uint8Array {
    return new Uint8Array(this.buf.subarray(0, this.len));
  }
}
