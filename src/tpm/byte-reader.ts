// Reads fixed-width integers and sized fields from bytes, naming the structure, the field and the
// offset in every error, so a malformed quote or event log says exactly where it went wrong.

export class TpmParseError extends Error {
  constructor(
    readonly structure: string,
    readonly field: string,
    readonly offset: number,
    detail: string,
  ) {
    super(`${structure}: field ${field} at byte ${offset}: ${detail}`);
    this.name = 'TpmParseError';
  }
}

export class ByteReader {
  private at = 0;
  private readonly view: DataView;

  /** `structure` names what is being parsed (and where it came from) for error messages. */
  constructor(
    readonly bytes: Uint8Array,
    readonly structure: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get offset(): number {
    return this.at;
  }

  get remaining(): number {
    return this.bytes.length - this.at;
  }

  fail(field: string, detail: string, offset = this.at): never {
    throw new TpmParseError(this.structure, field, offset, detail);
  }

  private take(n: number, field: string): number {
    if (this.at + n > this.bytes.length) {
      this.fail(field, `needs ${n} bytes but only ${this.bytes.length - this.at} remain`);
    }
    const at = this.at;
    this.at += n;
    return at;
  }

  u8(field: string): number {
    return this.view.getUint8(this.take(1, field));
  }

  u16be(field: string): number {
    return this.view.getUint16(this.take(2, field), false);
  }

  u32be(field: string): number {
    return this.view.getUint32(this.take(4, field), false);
  }

  u64be(field: string): bigint {
    return this.view.getBigUint64(this.take(8, field), false);
  }

  u16le(field: string): number {
    return this.view.getUint16(this.take(2, field), true);
  }

  u32le(field: string): number {
    return this.view.getUint32(this.take(4, field), true);
  }

  u64le(field: string): bigint {
    return this.view.getBigUint64(this.take(8, field), true);
  }

  /** A view (not a copy) of the next n bytes. */
  bytesView(n: number, field: string): Uint8Array {
    const at = this.take(n, field);
    return this.bytes.subarray(at, at + n);
  }

  /** A copy of the next n bytes. */
  bytesCopy(n: number, field: string): Uint8Array {
    return new Uint8Array(this.bytesView(n, field));
  }

  /** TPM2B: big-endian u16 size, then that many bytes (copied). `max` is the buffer[] limit. */
  tpm2b(field: string, max?: number): Uint8Array {
    const start = this.at;
    const size = this.u16be(`${field}.size`);
    if (max !== undefined && size > max) this.fail(`${field}.size`, `size ${size} exceeds the limit of ${max}`, start);
    return this.bytesCopy(size, `${field}.buffer`);
  }

  /** Throws unless every byte was consumed. */
  end(): void {
    if (this.at !== this.bytes.length) this.fail('(end)', `${this.bytes.length - this.at} unexpected trailing bytes`);
  }
}
