// Which malloc this process runs on. A large fleet's native memory (OpenSSL keys, TLS buffers, the
// workers' arenas) fragments under glibc's malloc: 3-5 KiB per device more than under jemalloc
// (bench/README.md, "fleet-memory"). The run summary names the allocator so a memory figure is read
// with it, and `evesim run` starts itself again under jemalloc when the machine has it
// (src/cli/allocator-plan.ts).

import { readFileSync } from 'node:fs';

/** 'jemalloc' when libjemalloc is mapped into the process, else 'system' (the C library's malloc). */
export type ProcessAllocator = 'jemalloc' | 'system';

/** The allocator named by a /proc/PID/maps text: jemalloc once its shared library is mapped. */
export function allocatorInMaps(maps: string): ProcessAllocator {
  return /\/libjemalloc[^/\s]*\.so/.test(maps) ? 'jemalloc' : 'system';
}

/** The user's choice, EVESIM_ALLOCATOR's value: trimmed, 'auto' when unset or blank. */
export function allocatorChoice(value: string | undefined): string {
  return (value ?? '').trim() || 'auto';
}

let cached: ProcessAllocator | undefined;

/** This process's allocator (read once from /proc/self/maps; 'system' where there is no /proc). */
export function processAllocator(): ProcessAllocator {
  if (cached) return cached;
  try {
    cached = allocatorInMaps(readFileSync('/proc/self/maps', 'utf8'));
  } catch {
    cached = 'system';
  }
  return cached;
}
