// The benchmarks' options (bench/bench-args.ts): both `--name value` and `--name=value` are read, so
// an option written either way is never taken for absent.

import { describe, expect, it } from 'vitest';
import { envAssignmentsArg, hasArg, optionalStringArg, positiveIntArg, stringArg } from '../bench/bench-args.js';

const argv = ['node', 'bench.js', '--sizes', '2000,5000', '--baseline-node-options=--max-semi-space-size=64', '--trace-gc', '--workers=3'];

describe('bench options', () => {
  it('reads a value given after the option or after an equals sign', () => {
    expect(optionalStringArg('sizes', argv)).toBe('2000,5000');
    // Only the first "=" separates: the value may hold its own.
    expect(optionalStringArg('baseline-node-options', argv)).toBe('--max-semi-space-size=64');
    expect(positiveIntArg('workers', 1, argv)).toBe(3);
    expect(stringArg('sizes', 'x', argv)).toBe('2000,5000');
  });

  it('tells a present option from an absent one, without mistaking a longer name', () => {
    expect(hasArg('trace-gc', argv)).toBe(true);
    expect(hasArg('baseline-node-options', argv)).toBe(true);
    expect(hasArg('workers', argv)).toBe(true);
    expect(hasArg('baseline', argv)).toBe(false);
    expect(hasArg('trace', argv)).toBe(false);
    expect(optionalStringArg('tick', argv)).toBeUndefined();
    expect(stringArg('tick', '50ms', argv)).toBe('50ms');
    expect(positiveIntArg('devices', 7, argv)).toBe(7);
  });

  it('names the option whose value is missing or wrong', () => {
    expect(() => optionalStringArg('tick', ['node', 'b.js', '--tick'])).toThrow('--tick needs a value');
    expect(() => positiveIntArg('workers', 1, ['node', 'b.js', '--workers=0'])).toThrow('--workers needs a positive integer, got 0');
  });

  it('reads environment assignments, a value keeping its own "=", and names a part that is not one', () => {
    expect(envAssignmentsArg('baseline-env', ['node', 'b.js', '--baseline-env=EVESIM_HEAP_GROWING_PERCENT=0'])).toEqual({ EVESIM_HEAP_GROWING_PERCENT: '0' });
    expect(envAssignmentsArg('baseline-env', ['node', 'b.js', '--baseline-env', 'A=1,B_2=x=y,C='])).toEqual({ A: '1', B_2: 'x=y', C: '' });
    expect(envAssignmentsArg('baseline-env', ['node', 'b.js'])).toEqual({});
    expect(() => envAssignmentsArg('baseline-env', ['node', 'b.js', '--baseline-env', 'A=1,2B=3'])).toThrow('--baseline-env: "2B=3" is not NAME=value');
  });
});
