// When each device comes online, as an offset from the start of the run. Computed per fleet index
// from the scenario seed alone, so the schedule is the same however the fleet is split into shards.

import { SeededRng } from '../device/core/seeded-rng.js';
import type { ArrivalSpec } from '../scenario/scenario-types.js';
import { WHOLE_FLEET, devicesInShard, shardProblem, type FleetShard } from './fleet-shard.js';

/**
 * Offsets (ms from run start) of the devices `indices` (ascending fleet indices). Poisson gaps are
 * drawn in index order from one seeded stream, so a worker draws up to its highest index.
 */
export function arrivalOffsetsMs(arrival: ArrivalSpec, seed: number, indices: ArrayLike<number>): Float64Array {
  const out = new Float64Array(indices.length);
  const rate = arrival.ratePerSec;
  if (arrival.model === 'all-at-once' || !(rate > 0)) return out;
  if (arrival.model === 'uniform') {
    const gap = 1000 / rate;
    for (let i = 0; i < indices.length; i++) out[i] = indices[i]! * gap;
    return out;
  }
  // poisson: the first device arrives at 0, then exponential gaps with mean 1/rate.
  const rng = SeededRng.create(seed, 0, 'arrival');
  const mean = 1000 / rate;
  let t = 0;
  let next = 0; // fleet index whose arrival time is t
  for (let i = 0; i < indices.length; i++) {
    const want = indices[i]!;
    if (want < next) throw new Error('arrivalOffsetsMs: indices must be ascending');
    while (next < want) {
      t += -Math.log(1 - rng.next()) * mean;
      next++;
    }
    out[i] = t;
  }
  return out;
}

/** One worker's devices: fleet indices firstIndex, firstIndex + stride, ... (count of them), global to the fleet. */
export interface ShardSpec {
  firstIndex: number;
  count: number;
  /** Distance between consecutive indices; 1 for a contiguous range. */
  stride: number;
}

/**
 * Splits this process's devices over `workers` worker threads by striding, so every worker gets
 * an equal share of each arrival wave and of each group, instead of worker 0 taking the whole
 * start of a ramp. The process runs `shard` (index i of n: the fleet indices ≡ i mod n) of a fleet
 * of `total` devices, so worker k of w gets the indices i + n·k, i + n·k + n·w, ... Never more
 * workers than devices.
 */
export function planShards(total: number, workers: number, shard: FleetShard = WHOLE_FLEET): ShardSpec[] {
  if (!Number.isInteger(total) || total < 0) throw new Error(`planShards: device total must be a whole number, got ${total}`);
  if (!Number.isInteger(workers) || workers < 1) throw new Error(`workers must be a whole number ≥ 1, got ${workers}`);
  const problem = shardProblem(shard);
  if (problem) throw new Error(`planShards: ${problem}`);
  const own = devicesInShard(0, total, shard);
  const w = Math.min(workers, Math.max(1, own));
  const stride = shard.count * w;
  const shards: ShardSpec[] = [];
  for (let k = 0; k < w; k++) {
    const firstIndex = shard.index + shard.count * k;
    const count = total > firstIndex ? Math.ceil((total - firstIndex) / stride) : 0;
    shards.push({ firstIndex, count, stride });
  }
  return shards;
}

export function shardIndex(shard: ShardSpec, local: number): number {
  return shard.firstIndex + local * shard.stride;
}

/** The inverse of shardIndex: the shard's local number of fleet device `index` (one of the shard's). */
export function shardLocal(shard: ShardSpec, index: number): number {
  return (index - shard.firstIndex) / shard.stride;
}
