// The line naming a run's machine in the text and HTML reports (src/runner/machine-text.ts).

import { describe, expect, it } from 'vitest';
import { machineText } from '../src/runner/machine-text.js';

describe('machineText', () => {
  const m = { cpus: 2, cpuModel: 'AMD EPYC', node: 'v20.20.2' };

  it('names the cores, Node, the malloc and the V8 pool when the summary has them', () => {
    expect(machineText({ ...m, allocator: 'jemalloc', v8PoolSize: 4 })).toBe('2 × AMD EPYC, node v20.20.2, jemalloc malloc, V8 pool of 4 threads');
    expect(machineText({ ...m, allocator: 'system', v8PoolSize: 1 })).toBe('2 × AMD EPYC, node v20.20.2, system malloc, V8 pool of 1 thread');
    expect(machineText({ ...m, v8PoolSize: 0 })).toBe('2 × AMD EPYC, node v20.20.2, V8 pool sized by Node');
  });

  it("names the workers' heap growth: a percentage, or V8's own", () => {
    expect(machineText({ ...m, allocator: 'jemalloc', v8PoolSize: 4, heapGrowingPercent: 50 })).toBe(
      '2 × AMD EPYC, node v20.20.2, jemalloc malloc, V8 pool of 4 threads, worker heaps grow 50 %',
    );
    expect(machineText({ ...m, heapGrowingPercent: 0 })).toBe('2 × AMD EPYC, node v20.20.2, worker heaps grow as V8 chooses');
  });

  it('leaves out what a summary written before they were recorded lacks', () => {
    expect(machineText(m)).toBe('2 × AMD EPYC, node v20.20.2');
  });
});
