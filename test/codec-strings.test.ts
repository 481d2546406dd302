import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ProtoDecodeError } from '../src/protocol/codec.js';
import { Msg } from '../src/protocol/messages.js';

// Strings a device keeps for its whole life (UUIDs, hashes, names from its configuration) come from
// decoded answers, which arrive as plain Uint8Arrays. protobufjs builds a string from such bytes 8
// characters at a time, so a UUID was a chain of cons strings (~250 bytes); the codec reads
// through a Buffer view instead, where strings are flat (56 bytes for a UUID).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapPerString(decode: (i: number) => string, n: number): number {
  const kept: string[] = new Array(n);
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < n; i++) kept[i] = decode(i);
  gc();
  const per = (process.memoryUsage().heapUsed - before) / n;
  expect(kept.length).toBe(n);
  return per;
}

describe('strings decoded from a plain Uint8Array', () => {
  it('are flat: a kept UUID costs about its length, not a chain of pieces', () => {
    const n = 20_000;
    const answers = Array.from({ length: 64 }, (_, k) => {
      const uuid = `${k.toString(16).padStart(8, '0')}-1111-4222-8333-444455556666`;
      const bytes = Msg.UuidResponse.encode({ uuid });
      return new Uint8Array(bytes); // a copy: no Buffer, as the device's transport gives it
    });
    expect(Buffer.isBuffer(answers[0])).toBe(false);
    const per = heapPerString((i) => Msg.UuidResponse.decode(answers[i % 64]!).uuid!, n);
    // Flat: 16 bytes of header + 36 characters = 56 (the array's slot is 8 more); a cons chain was ~250.
    expect(per).toBeLessThan(100);
    expect(Msg.UuidResponse.decode(answers[5]!).uuid).toBe('00000005-1111-4222-8333-444455556666');
  });

  it('are flat on both sides of the length where V8 starts making cons strings (13)', () => {
    for (const length of [12, 13, 14]) {
      const answers = Array.from({ length: 64 }, (_, k) => new Uint8Array(Msg.UuidResponse.encode({ uuid: `${k}`.padStart(length, 'x') })));
      const per = heapPerString((i) => Msg.UuidResponse.decode(answers[i % 64]!).uuid!, 20_000);
      // Measured 24–34 bytes flat (header, characters, the array's slot); 65 as protobufjs built them at 13 characters.
      expect(per, `${length} characters`).toBeLessThan(48);
      expect(Msg.UuidResponse.decode(answers[7]!).uuid).toBe('7'.padStart(length, 'x'));
    }
  });

  it('keep proto3 string rules: invalid UTF-8 is an error, multi-byte text and a byte order mark come through, a length past the end is an error', () => {
    const field1 = (payload: number[]) => new Uint8Array([0x0a, payload.length, ...payload]);
    const text = '\ufeffÄpp – 日本 🚀';
    expect(Msg.UuidResponse.decode(field1([...Buffer.from(text, 'utf8')])).uuid).toBe(text);
    expect(Msg.UuidResponse.decode(field1([0x41, 0x42])).uuid).toBe('AB');
    for (const bad of [[0xff], [0x41, 0xc3], [0xed, 0xa0, 0x80] /* a lone surrogate */, [0xc0, 0xaf] /* overlong */]) {
      expect(() => Msg.UuidResponse.decode(field1(bad))).toThrow(ProtoDecodeError);
    }
    expect(() => Msg.UuidResponse.decode(new Uint8Array([0x0a, 0x05, 0x41]))).toThrow(ProtoDecodeError);
  });
});
