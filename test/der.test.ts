// DER element lengths, short and long form (tlv writes them in place).
import { describe, expect, test } from 'vitest';
import { tlv } from '../src/identity/der.js';

describe('DER tag-length-value', () => {
  test('short form below 128 bytes, long form with the fewest length bytes above', () => {
    const head = (n: number, bytes: number): string => Buffer.from(tlv(0x04, new Uint8Array(n)).subarray(0, bytes)).toString('hex');
    expect(head(0, 2)).toBe('0400');
    expect(head(127, 2)).toBe('047f');
    expect(head(128, 3)).toBe('048180');
    expect(head(255, 3)).toBe('0481ff');
    expect(head(256, 4)).toBe('04820100');
    expect(head(65535, 4)).toBe('0482ffff');
    expect(head(70000, 5)).toBe('0483011170');
    expect(tlv(0x30, Uint8Array.of(1, 2), Uint8Array.of(3))).toEqual(Uint8Array.of(0x30, 3, 1, 2, 3));
    expect(tlv(0x04, new Uint8Array(300)).length).toBe(304);
  });
});
