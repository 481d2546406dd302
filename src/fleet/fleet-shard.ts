// Which part of the fleet this process runs (`evesim run --shard i/n`): the devices whose global
// fleet index is ≡ i (mod n). Everything per device derives from the seed and that global index,
// so the n shards together are exactly the fleet a single run builds, and no device is in two.

export interface FleetShard {
  /** 0 ≤ index < count. */
  index: number;
  count: number;
}

/** The whole fleet in one process (no --shard). */
export const WHOLE_FLEET: FleetShard = Object.freeze({ index: 0, count: 1 });

/** Parses "i/n"; throws an Error whose message is one line naming the flag. */
export function parseShardArg(text: string): FleetShard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!m) throw new Error(`--shard: "${text}" is not of the form i/n (e.g. 0/4: the first of 4 shards)`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`--shard: "${text}": the shard count n must be at least 1`);
  if (!Number.isSafeInteger(index) || index >= count) throw new Error(`--shard: "${text}": the shard index i must be 0..${count - 1} (shards are numbered from 0)`);
  return { index, count };
}

/** Checks a shard handed over programmatically (runScenario's options). */
export function shardProblem(shard: FleetShard): string | undefined {
  if (!Number.isSafeInteger(shard.count) || shard.count < 1) return `the shard count must be a whole number ≥ 1 (got ${shard.count})`;
  if (!Number.isSafeInteger(shard.index) || shard.index < 0 || shard.index >= shard.count) {
    return `the shard index must be 0..${shard.count - 1} (got ${shard.index})`;
  }
  return undefined;
}

/** Devices of `shard` among the fleet indices [start, start + count). */
export function devicesInShard(start: number, count: number, shard: FleetShard): number {
  // Indices j in [start, end) with j ≡ index (mod n): the first is start + ((index - start) mod n).
  const n = shard.count;
  const first = start + ((((shard.index - start) % n) + n) % n);
  const end = start + count;
  return first < end ? Math.ceil((end - first) / n) : 0;
}

/** The fleet indices of `shard` among the fleet's first `total`, ascending. */
export function* shardIndices(total: number, shard: FleetShard): Generator<number> {
  for (let i = shard.index; i < total; i += shard.count) yield i;
}

export function describeShard(shard: FleetShard): string {
  return `${shard.index}/${shard.count}`;
}
