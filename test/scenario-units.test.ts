// Duration and rate strings of scenario files.

import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../src/scenario/parse-duration.js';
import { parseRate } from '../src/scenario/parse-rate.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['90s', 90_000],
    ['2m', 120_000],
    ['1h30m', 5_400_000],
    ['1h30m15s250ms', 5_415_250],
    ['1.5s', 1500],
    ['0s', 0],
  ])('%s → %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each([
    ['60', 'has no unit'],
    ['', 'empty duration'],
    ['5 min', 'is not a duration'],
    ['1m1h', 'largest to smallest'],
    ['1s1s', 'largest to smallest'],
    ['-5s', 'is not a duration'],
    ['10d', 'is not a duration'],
  ])('refuses %j (%s)', (text, why) => expect(() => parseDuration(text)).toThrow(why));

  it('formats back for messages', () => {
    expect(formatDuration(250)).toBe('250ms');
    expect(formatDuration(1500)).toBe('1.5s');
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(60_000)).toBe('1m');
  });
});

describe('parseRate', () => {
  it.each([
    ['50/s', 50],
    ['3000/m', 50],
    ['3000/min', 50],
    ['7200/h', 2],
    [12.5, 12.5],
  ])('%j → %d per second', (v, perSec) => expect(parseRate(v)).toBe(perSec));

  it.each(['fast', '50', '50/d', '0/s', -1, 0])('refuses %j', (v) => expect(() => parseRate(v)).toThrow());
});

describe('tryParseDuration', () => {
  it('returns undefined instead of throwing', async () => {
    const { tryParseDuration } = await import('../src/scenario/parse-duration.js');
    expect(tryParseDuration('2m')).toBe(120_000);
    expect(tryParseDuration('2 minutes')).toBeUndefined();
  });
});
