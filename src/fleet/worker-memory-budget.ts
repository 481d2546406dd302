// How many devices a worker thread can hold: each worker gets an explicit heap limit (3/4 of the
// machine's memory shared by the workers, at least 512 MiB, at most 16 GiB) so one that runs out is
// ended and reported instead of taking the process down. A fleet plan that puts more devices on a
// worker than that heap holds would only crawl into that limit; it is refused up front.

import os from 'node:os';

/** Budget per device on a worker's heap: the measured steady state (~30 KiB with its key, README
 *  "Measured figures") plus the in-memory log backlog (up to 32 KiB) and room for queued messages
 *  and requests in flight. */
export const DEVICE_MEMORY_BYTES = 96 * 1024;

/** The heap limit given to each of `workers` worker threads, MiB. */
export function workerHeapLimitMb(workers: number, totalMemBytes: number = os.totalmem()): number {
  const share = Math.floor(((totalMemBytes / 2 ** 20) * 0.75) / workers);
  return Math.min(16_384, Math.max(512, share));
}

/** Devices one worker of `workers` can hold on this machine. */
export function maxDevicesPerWorker(workers: number, totalMemBytes: number = os.totalmem()): number {
  return Math.floor((workerHeapLimitMb(workers, totalMemBytes) * 2 ** 20) / DEVICE_MEMORY_BYTES);
}

/** Why `devicesOnBusiestWorker` do not fit, or undefined when they do. */
export function workerMemoryProblem(devicesOnBusiestWorker: number, workers: number, totalMemBytes: number = os.totalmem()): string | undefined {
  const max = maxDevicesPerWorker(workers, totalMemBytes);
  if (devicesOnBusiestWorker <= max) return undefined;
  const heap = workerHeapLimitMb(workers, totalMemBytes);
  return (
    `${devicesOnBusiestWorker} devices on one worker, but a worker holds at most ${max} on this machine ` +
    `(${heap} MiB heap per worker of ${workers}, from ${Math.round(totalMemBytes / 2 ** 30)} GiB; ${DEVICE_MEMORY_BYTES / 1024} KiB per device): ` +
    'run fewer devices, or spread the fleet over machines with --shard i/n'
  );
}
