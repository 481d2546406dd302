// The V8 pool size a run records in its summary (src/runner/v8-pool-size.ts), read from Node's flags.

import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { poolSizeInFlags, processV8PoolSize } from '../src/runner/v8-pool-size.js';

describe('V8 pool size', () => {
  it('finds --v8-pool-size in flags and NODE_OPTIONS text, either form, the last winning', () => {
    expect(poolSizeInFlags(['--expose-gc', '--v8-pool-size=2'])).toBe(2);
    expect(poolSizeInFlags(['--max-old-space-size=8000 --v8-pool-size 3'])).toBe(3);
    expect(poolSizeInFlags(['--v8-pool-size=2', '--v8-pool-size=6'])).toBe(6);
    expect(poolSizeInFlags(['--v8-pool-sizes=2', '--trace-gc', ''])).toBeUndefined();
  });

  it("reads a process's own size: the command line over NODE_OPTIONS, Node's 4 when none", () => {
    expect(processV8PoolSize([], undefined)).toBe(4);
    expect(processV8PoolSize(['--v8-pool-size=1'], '--v8-pool-size=4')).toBe(1);
    expect(processV8PoolSize([], '--v8-pool-size=2')).toBe(2);
    expect(processV8PoolSize(['--v8-pool-size=0'], undefined)).toBe(0);
  });

  it.skipIf(process.platform !== 'linux')('agrees with the threads Node starts: one fewer platform thread per size step', () => {
    // Node's threads at start: the main one, the platform pool, and a fixed set of others.
    const threads = (flags: string[], nodeOptions?: string) => {
      const { NODE_OPTIONS: _o, ...env } = process.env;
      const r = spawnSync(process.execPath, [...flags, '-e', "console.log(require('fs').readdirSync('/proc/self/task').length)"], {
        env: nodeOptions === undefined ? env : { ...env, NODE_OPTIONS: nodeOptions },
        encoding: 'utf8',
      });
      return Number(r.stdout.trim());
    };
    const base = threads([]);
    // The command line wins over NODE_OPTIONS, as processV8PoolSize reads it.
    expect(base - threads(['--v8-pool-size=1'], '--v8-pool-size=4')).toBe(4 - processV8PoolSize(['--v8-pool-size=1'], '--v8-pool-size=4'));
    expect(base - threads([], '--v8-pool-size=2')).toBe(4 - processV8PoolSize([], '--v8-pool-size=2'));
  });
});
