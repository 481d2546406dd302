// Whether `evesim run` starts itself again with jemalloc preloaded. glibc's malloc keeps 3-5 KiB
// more native memory per device than jemalloc in a large fleet (bench/README.md, "fleet-memory"),
// and LD_PRELOAD only takes effect when a process starts, so the command re-executes itself once
// (reexec-under-allocator.ts). EVESIM_ALLOCATOR chooses:
//   auto (default)  jemalloc when one of the usual library paths has it, else the system's malloc
//   jemalloc        jemalloc, or exit 2 when none is found
//   system          never re-execute
//   /path/lib.so    that library
// Only `run` re-executes: the other commands hold no fleet. Nor does a process under the inspector
// (--inspect in its flags or NODE_OPTIONS): the debugger is attached to it, and a child would
// contend for the same port.

import { allocatorChoice } from '../memory/process-allocator.js';

/** Marks the re-executed child, so it neither re-executes again nor outlives its parent. */
export const REEXEC_MARKER = 'EVESIM_ALLOCATOR_REEXEC';

export type AllocatorPlan =
  | { action: 'stay' }
  | { action: 'reexec'; library: string; env: Record<string, string | undefined> }
  | { action: 'fail'; message: string };

export interface AllocatorPlanInputs {
  /** process.argv without node and the script. */
  args: readonly string[];
  /** Node's own flags (process.execArgv). */
  execArgv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
  arch: string;
  exists: (path: string) => boolean;
}

const TRIPLETS: Readonly<Record<string, string>> = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' };

/** Where distributions put jemalloc's shared library: Debian/Ubuntu, Fedora/RHEL, Arch/Alpine, a source build. */
export function jemallocCandidates(arch: string): string[] {
  const triplet = TRIPLETS[arch];
  return [
    ...(triplet ? [`/usr/lib/${triplet}/libjemalloc.so.2`] : []),
    '/usr/lib64/libjemalloc.so.2',
    '/usr/lib/libjemalloc.so.2',
    '/usr/local/lib/libjemalloc.so.2',
  ];
}

export function planAllocator(i: AllocatorPlanInputs): AllocatorPlan {
  if (i.args[0] !== 'run' || i.env[REEXEC_MARKER]) return { action: 'stay' };
  const choice = allocatorChoice(i.env.EVESIM_ALLOCATOR);
  if (choice === 'system') return { action: 'stay' };
  if (/jemalloc/.test(i.env.LD_PRELOAD ?? '')) return { action: 'stay' };
  if ([...i.execArgv, i.env.NODE_OPTIONS ?? ''].some((a) => /(^|\s)--inspect/.test(a))) return { action: 'stay' };
  let library: string | undefined;
  if (choice.includes('/')) {
    if (!i.exists(choice)) return { action: 'fail', message: `EVESIM_ALLOCATOR=${choice}: no such file` };
    library = choice;
  } else if (choice === 'auto' || choice === 'jemalloc') {
    if (i.platform !== 'linux') {
      if (choice === 'auto') return { action: 'stay' };
      return { action: 'fail', message: `EVESIM_ALLOCATOR=jemalloc: preloading an allocator is only done on Linux (this is ${i.platform}); unset it or set system` };
    }
    const candidates = jemallocCandidates(i.arch);
    library = candidates.find(i.exists);
    if (!library) {
      if (choice === 'auto') return { action: 'stay' };
      return {
        action: 'fail',
        message: `EVESIM_ALLOCATOR=jemalloc: no jemalloc library in ${candidates.join(', ')}; install it (Debian/Ubuntu: apt-get install libjemalloc2) or give its path: EVESIM_ALLOCATOR=/path/to/libjemalloc.so.2`,
      };
    }
  } else {
    return { action: 'fail', message: `EVESIM_ALLOCATOR=${choice}: expected auto, jemalloc, system or the path of a libjemalloc.so` };
  }
  const preload = (i.env.LD_PRELOAD ?? '').trim();
  return { action: 'reexec', library, env: { ...i.env, LD_PRELOAD: preload ? `${preload} ${library}` : library, [REEXEC_MARKER]: '1' } };
}
