// Devices per worker against the worker's heap limit: the limit follows the machine's memory and
// the number of workers, and a plan beyond it is refused with the figures that decide it.

import { describe, expect, it } from 'vitest';
import { DEVICE_MEMORY_BYTES, maxDevicesPerWorker, usableMemoryBytes, workerHeapLimitMb, workerMemoryProblem } from '../src/fleet/worker-memory-budget.js';

const GIB = 2 ** 30;

describe('worker memory budget', () => {
  it('gives each worker 3/4 of the memory shared, between 512 MiB and 16 GiB', () => {
    expect(workerHeapLimitMb(4, 16 * GIB)).toBe(3072);
    expect(workerHeapLimitMb(64, 8 * GIB)).toBe(512);
    expect(workerHeapLimitMb(1, 64 * GIB)).toBe(16_384);
  });

  it('holds heap / per-device cost devices per worker', () => {
    expect(DEVICE_MEMORY_BYTES).toBe(96 * 1024);
    expect(maxDevicesPerWorker(4, 16 * GIB)).toBe(32_768);
    expect(workerMemoryProblem(32_768, 4, 16 * GIB)).toBeUndefined();
    expect(workerMemoryProblem(32_769, 4, 16 * GIB)).toBe(
      '32769 devices on one worker, but a worker holds at most 32768 on this machine (3072 MiB heap per worker of 4, from 16 GiB; 96 KiB per device): ' +
        'run fewer devices, or spread the fleet over machines with --shard i/n',
    );
  });

  it("takes a container's memory limit when it is below the machine's", () => {
    expect(usableMemoryBytes(64 * GIB, 1 * GIB)).toBe(1 * GIB);
    expect(usableMemoryBytes(64 * GIB, 2 ** 64 - 1)).toBe(64 * GIB); // no limit
    expect(usableMemoryBytes(64 * GIB, 0)).toBe(64 * GIB);
    expect(usableMemoryBytes(64 * GIB, undefined)).toBe(64 * GIB);
    // The shipped Kubernetes shard: 10,000 devices on 2 workers in a 1 GiB pod fit (512 MiB heap each).
    expect(workerMemoryProblem(5000, 2, usableMemoryBytes(64 * GIB, 1 * GIB))).toBeUndefined();
  });
});
