// --log-memory: a size with its unit, or a bare 0 (every waiting log file on disk).

import { describe, expect, it } from 'vitest';
import { LOG_MEMORY_MAX_BYTES, parseLogMemory } from '../src/cli/parse-log-memory.js';

describe('parseLogMemory', () => {
  it('reads sizes with a unit and a bare 0', () => {
    expect(parseLogMemory('0')).toBe(0);
    expect(parseLogMemory(' 0 ')).toBe(0);
    expect(parseLogMemory('8KiB')).toBe(8192);
    expect(parseLogMemory('32KiB')).toBe(32 * 1024);
    expect(parseLogMemory('1MiB')).toBe(2 ** 20);
    expect(parseLogMemory('0B')).toBe(0);
    expect(parseLogMemory('64MiB')).toBe(LOG_MEMORY_MAX_BYTES);
  });

  it('refuses a bare number, an unknown unit, a fraction of a byte and more than 64 MiB, naming the flag', () => {
    expect(() => parseLogMemory('8192')).toThrow(/^--log-memory: "8192" has no unit; .*or 0 to keep every waiting log file on disk/);
    expect(() => parseLogMemory('8 lots')).toThrow(/^--log-memory: .*unknown unit "lots"/);
    expect(() => parseLogMemory('0.5B')).toThrow(/^--log-memory: "0.5B" is not a whole number of bytes/);
    expect(() => parseLogMemory('65MiB')).toThrow(/^--log-memory: at most 64MiB per device, got 65MiB/);
    expect(() => parseLogMemory('-1KiB')).toThrow(/^--log-memory: /);
  });
});
