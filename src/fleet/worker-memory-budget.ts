// How many devices a worker thread can hold: each worker gets an explicit heap limit (3/4 of the
// machine's memory, or of the container's limit, shared by the workers, at least 512 MiB, at most 16 GiB) so one that runs out is
// ended and reported instead of taking the process down. A fleet plan that puts more devices on a
// worker than that heap holds would only crawl into that limit; it is refused up front.

import os from 'node:os';

/** Budget per device on a worker's heap: the measured steady state (~30 KiB with its key, README
 *  "Measured figures") plus the in-memory log backlog (up to 32 KiB) and room for queued messages
 *  and requests in flight. */
export const DEVICE_MEMORY_BYTES = 96 * 1024;

/** The memory this process may use: the machine's, or less when a container (cgroup) limits it,
 *  as in a Kubernetes pod (os.totalmem() reports the node's memory there). */
export function usableMemoryBytes(totalMem: number = os.totalmem(), constrained: number | undefined = process.constrainedMemory?.()): number {
  // No limit reads as 0, undefined or a huge number (2^64 − 1).
  return constrained !== undefined && constrained > 0 && constrained < totalMem ? constrained : totalMem;
}

/** The heap limit given to each of `workers` worker threads, MiB. */
export function workerHeapLimitMb(workers: number, totalMemBytes: number = usableMemoryBytes()): number {
  const share = Math.floor(((totalMemBytes / 2 ** 20) * 0.75) / workers);
  return Math.min(16_384, Math.max(512, share));
}

/** Devices one worker of `workers` can hold on this machine. */
export function maxDevicesPerWorker(workers: number, totalMemBytes: number = usableMemoryBytes()): number {
  return Math.floor((workerHeapLimitMb(workers, totalMemBytes) * 2 ** 20) / DEVICE_MEMORY_BYTES);
}

/** Why `devicesOnBusiestWorker` do not fit, or undefined when they do. */
export function workerMemoryProblem(devicesOnBusiestWorker: number, workers: number, totalMemBytes: number = usableMemoryBytes()): string | undefined {
  const max = maxDevicesPerWorker(workers, totalMemBytes);
  if (devicesOnBusiestWorker <= max) return undefined;
  const heap = workerHeapLimitMb(workers, totalMemBytes);
  return (
    `${devicesOnBusiestWorker} devices on one worker, but a worker holds at most ${max} on this machine ` +
    `(${heap} MiB heap per worker of ${workers}, from ${(totalMemBytes / 2 ** 30).toFixed(totalMemBytes < 10 * 2 ** 30 ? 1 : 0)} GiB; ${DEVICE_MEMORY_BYTES / 1024} KiB per device): ` +
    'run fewer devices, or spread the fleet over machines with --shard i/n'
  );
}
