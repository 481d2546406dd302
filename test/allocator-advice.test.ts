// The warning a large run on the system's malloc prints (src/runner/allocator-advice.ts), and that
// it reaches the run's stderr: `evesim run --dry-run` of a 10,000-device fleet with EVESIM_ALLOCATOR
// unset would re-execute under jemalloc where the machine has it, so the run is started on the system
// malloc with the re-execution's marker set, as a machine without jemalloc would run it.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALLOCATOR_ADVICE_DEVICES, allocatorAdvice } from '../src/runner/allocator-advice.js';

const cli = fileURLToPath(new URL('../bin/evesim.js', import.meta.url));
const root = fileURLToPath(new URL('..', import.meta.url));

describe('allocatorAdvice', () => {
  it('warns a Linux run of 10,000 devices or more on the system malloc, naming the package', () => {
    const a = allocatorAdvice('system', 'linux', ALLOCATOR_ADVICE_DEVICES, undefined);
    expect(a).toMatch(/^warning: 10000 devices on the system's malloc, .*apt-get install libjemalloc2.*EVESIM_ALLOCATOR=system silences this\)$/);
    expect(allocatorAdvice('system', 'linux', 100_000, 'auto')).toContain('100000 devices');
  });

  it('says nothing on jemalloc, for smaller runs, off Linux, or when the user chose the system malloc', () => {
    expect(allocatorAdvice('jemalloc', 'linux', 100_000, undefined)).toBeUndefined();
    expect(allocatorAdvice('system', 'linux', ALLOCATOR_ADVICE_DEVICES - 1, undefined)).toBeUndefined();
    expect(allocatorAdvice('system', 'darwin', 100_000, undefined)).toBeUndefined();
    expect(allocatorAdvice('system', 'linux', 100_000, 'system')).toBeUndefined();
  });
});

describe.skipIf(process.platform !== 'linux')('a large run on the system malloc', () => {
  const { LD_PRELOAD: _p, EVESIM_ALLOCATOR: _a, ...env } = process.env;
  const dryRun = (extra: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, [cli, 'run', 'scenarios/steady-state.yaml', '--devices', '10000', '--dry-run'], { cwd: root, env: { ...env, ...extra }, encoding: 'utf8', timeout: 60_000 });

  it('prints the warning once on stderr, and not when EVESIM_ALLOCATOR=system chose it', () => {
    const warned = dryRun({ EVESIM_ALLOCATOR_REEXEC: '1' });
    expect(warned.status, warned.stderr).toBe(0);
    expect(warned.stderr.match(/evesim: warning: 10000 devices on the system's malloc/g)).toHaveLength(1);
    const quiet = dryRun({ EVESIM_ALLOCATOR: 'system' });
    expect(quiet.status, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain("system's malloc");
  }, 120_000);
});
