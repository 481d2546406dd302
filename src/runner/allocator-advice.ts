// A large fleet on glibc's malloc keeps 3-5 KiB more memory per device than on jemalloc (README,
// "The memory allocator"). `evesim run` re-executes itself under jemalloc when the machine has it; when
// it does not, a large run says so once, with what to install, unless the user chose the system's.

import { allocatorChoice, type ProcessAllocator } from '../memory/process-allocator.js';

/** From this many devices in one process the difference is 30-50 MiB or more. */
export const ALLOCATOR_ADVICE_DEVICES = 10_000;

/** The warning for a run of `devices` devices in this process, or undefined when there is none to give. */
export function allocatorAdvice(allocator: ProcessAllocator, platform: NodeJS.Platform, devices: number, choice: string | undefined): string | undefined {
  if (allocator !== 'system' || platform !== 'linux' || devices < ALLOCATOR_ADVICE_DEVICES || allocatorChoice(choice) === 'system') return undefined;
  return (
    `warning: ${devices} devices on the system's malloc, which keeps about 3-5 KiB more memory per device than jemalloc; ` +
    'install jemalloc (Debian/Ubuntu: apt-get install libjemalloc2) and evesim run uses it by itself (EVESIM_ALLOCATOR=system silences this)'
  );
}
