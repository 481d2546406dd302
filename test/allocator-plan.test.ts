// When `evesim run` starts itself again under jemalloc (src/cli/allocator-plan.ts), decided from the
// command line, EVESIM_ALLOCATOR, LD_PRELOAD and which library paths exist; and how the allocator in
// use is read back from /proc/self/maps (src/memory/process-allocator.ts).

import { describe, expect, it } from 'vitest';
import { jemallocCandidates, planAllocator, REEXEC_MARKER, type AllocatorPlanInputs } from '../src/cli/allocator-plan.js';
import { allocatorInMaps } from '../src/memory/process-allocator.js';

const DEBIAN = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';

function plan(over: Partial<AllocatorPlanInputs> & { have?: string[] }) {
  const have = new Set(over.have ?? [DEBIAN]);
  return planAllocator({ args: ['run', 'x.yaml'], execArgv: [], env: {}, platform: 'linux', arch: 'x64', exists: (p) => have.has(p), ...over });
}

describe('planAllocator', () => {
  it('re-executes `run` with the Debian library preloaded and the child marked', () => {
    const p = plan({ env: { PATH: '/bin' } });
    expect(p).toEqual({ action: 'reexec', library: DEBIAN, env: { PATH: '/bin', LD_PRELOAD: DEBIAN, [REEXEC_MARKER]: '1' } });
  });

  it("keeps the user's own LD_PRELOAD, adding jemalloc after it", () => {
    const p = plan({ env: { LD_PRELOAD: '/opt/libtrace.so' } });
    expect(p.action === 'reexec' && p.env.LD_PRELOAD).toBe(`/opt/libtrace.so ${DEBIAN}`);
  });

  it('finds the library where other distributions put it, per architecture', () => {
    expect(plan({ have: ['/usr/lib64/libjemalloc.so.2'] })).toMatchObject({ action: 'reexec', library: '/usr/lib64/libjemalloc.so.2' });
    expect(plan({ arch: 'arm64', have: ['/usr/lib/aarch64-linux-gnu/libjemalloc.so.2'] })).toMatchObject({ library: '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2' });
    // The x86-64 path is not looked at on arm64.
    expect(jemallocCandidates('arm64')).not.toContain(DEBIAN);
    expect(jemallocCandidates('riscv64')[0]).toBe('/usr/lib64/libjemalloc.so.2');
  });

  it('stays for every other command, in the child, when jemalloc is already preloaded, and on request', () => {
    for (const args of [['controller'], ['validate', 'x.yaml'], [], ['--help']]) expect(plan({ args })).toEqual({ action: 'stay' });
    expect(plan({ env: { [REEXEC_MARKER]: '1' } })).toEqual({ action: 'stay' });
    expect(plan({ env: { LD_PRELOAD: '/usr/local/lib/libjemalloc.so' } })).toEqual({ action: 'stay' });
    expect(plan({ env: { EVESIM_ALLOCATOR: 'system' } })).toEqual({ action: 'stay' });
  });

  it('stays under the inspector (flags or NODE_OPTIONS), and passes other Node flags on', () => {
    for (const execArgv of [['--inspect'], ['--inspect-brk=0.0.0.0:9230'], ['--expose-gc', '--inspect-wait']]) expect(plan({ execArgv })).toEqual({ action: 'stay' });
    expect(plan({ env: { NODE_OPTIONS: '--max-old-space-size=8000 --inspect=9333' } })).toEqual({ action: 'stay' });
    expect(plan({ execArgv: ['--expose-gc', '--cpu-prof'], env: { NODE_OPTIONS: '--max-old-space-size=8000' } })).toMatchObject({ action: 'reexec' });
  });

  it('auto (the default, also when empty) stays on the system malloc where there is no jemalloc or no Linux', () => {
    expect(plan({ have: [] })).toEqual({ action: 'stay' });
    expect(plan({ env: { EVESIM_ALLOCATOR: ' ' }, have: [] })).toEqual({ action: 'stay' });
    expect(plan({ env: { EVESIM_ALLOCATOR: 'auto' }, platform: 'darwin' })).toEqual({ action: 'stay' });
  });

  it('jemalloc insists: no library or no Linux is an error that says what to do', () => {
    const missing = plan({ env: { EVESIM_ALLOCATOR: 'jemalloc' }, have: [] });
    expect(missing.action).toBe('fail');
    expect(missing.action === 'fail' && missing.message).toMatch(/^EVESIM_ALLOCATOR=jemalloc: no jemalloc library in \/usr\/lib\/x86_64-linux-gnu\/libjemalloc.so.2, .*apt-get install libjemalloc2/);
    expect(plan({ env: { EVESIM_ALLOCATOR: 'jemalloc' }, platform: 'darwin' })).toMatchObject({ action: 'fail', message: expect.stringContaining('only done on Linux (this is darwin)') });
    expect(plan({ env: { EVESIM_ALLOCATOR: 'jemalloc' } })).toMatchObject({ action: 'reexec', library: DEBIAN });
  });

  it('takes a path, which must exist, and rejects any other value', () => {
    expect(plan({ env: { EVESIM_ALLOCATOR: '/opt/je/libjemalloc.so.2' }, have: ['/opt/je/libjemalloc.so.2'] })).toMatchObject({ action: 'reexec', library: '/opt/je/libjemalloc.so.2' });
    expect(plan({ env: { EVESIM_ALLOCATOR: '/opt/none.so' } })).toEqual({ action: 'fail', message: 'EVESIM_ALLOCATOR=/opt/none.so: no such file' });
    expect(plan({ env: { EVESIM_ALLOCATOR: 'tcmalloc' } })).toEqual({ action: 'fail', message: 'EVESIM_ALLOCATOR=tcmalloc: expected auto, jemalloc, system or the path of a libjemalloc.so' });
  });
});

describe('allocatorInMaps', () => {
  const line = (path: string) => `7f1c2a000000-7f1c2a02f000 r-xp 00000000 08:01 1234 ${path}\n`;

  it('is jemalloc once its library is mapped, under any of its names', () => {
    expect(allocatorInMaps(line('/usr/bin/node') + line(DEBIAN) + line('/usr/lib/x86_64-linux-gnu/libc.so.6'))).toBe('jemalloc');
    expect(allocatorInMaps(line('/usr/local/lib/libjemalloc.so'))).toBe('jemalloc');
  });

  it("is the system's otherwise, even with a directory or file merely named like it", () => {
    expect(allocatorInMaps(line('/usr/bin/node') + line('/usr/lib/x86_64-linux-gnu/libc.so.6'))).toBe('system');
    expect(allocatorInMaps(line('/home/u/libjemalloc-notes/node'))).toBe('system');
    expect(allocatorInMaps('')).toBe('system');
  });
});
