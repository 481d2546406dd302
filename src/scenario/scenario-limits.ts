// Sanity limits of a scenario: values the schema accepts as numbers or durations but that no run
// can honour. A duration past Node's longest timer fires at once (a 100000h run would end
// immediately); a rate of a billion log lines a second allocates nothing and silently sends
// nothing; a billion devices runs out of memory after minutes. Each is refused with the field, its
// place in the file and the allowed range. scenarios/README.md ("Limits") lists the same table.

import type { PathSegment } from './scenario-error.js';

/** Node's setTimeout clamps anything longer (2^31−1 ms, about 24.8 days) to 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Devices of one fleet (all groups, all shards): beyond this a file is a typo, not a plan. */
export const MAX_FLEET_DEVICES = 10_000_000;

/** Fastest device arrival: beyond it arrivals within one millisecond tick, i.e. all at once. */
export const MAX_ARRIVAL_PER_SEC = 100_000;

export interface NumberLimit {
  /** Field path; '*' stands for every index of a list. */
  path: readonly (string | '*')[];
  min: number;
  max: number;
  /** What the number counts, for the message: "lines per second per device". */
  unit: string;
}

/** Every number of a scenario with a range the schema does not already give. */
export const NUMBER_LIMITS: readonly NumberLimit[] = [
  { path: ['groups', '*', 'count'], min: 1, max: MAX_FLEET_DEVICES, unit: 'devices' },
  // What one simulated device can generate and queue (its log backlog is bounded).
  { path: ['groups', '*', 'logs', 'linesPerSec'], min: 0, max: 1000, unit: 'lines per second per device' },
  { path: ['groups', '*', 'apps', '*', 'logLinesPerSec'], min: 0, max: 1000, unit: 'lines per second per app instance' },
  { path: ['groups', '*', 'apps', '*', 'flowsPerMessage'], min: 0, max: 10_000, unit: 'flow records per message' },
  { path: ['groups', '*', 'hardware', 'ncpu'], min: 1, max: 1024, unit: 'CPUs' },
  { path: ['groups', '*', 'hardware', 'memoryMB'], min: 1, max: 16 * 2 ** 20, unit: 'MB (16 TiB)' },
  { path: ['groups', '*', 'hardware', 'storageMB'], min: 1, max: 2 ** 30, unit: 'MB (1 PiB)' },
  { path: ['groups', '*', 'gnss', 'site', 'jitter'], min: 0, max: 100_000, unit: 'metres' },
];

/** Fastest GNSS route (1,000 km/h, an airliner): a faster one jumps between fixes, in m/s. */
export const MAX_ROUTE_SPEED_MPS = 1000 / 3.6;

/** Shortest flow log interval a device can keep (EVE's own is about 120 s). */
export const MIN_FLOWLOG_INTERVAL_MS = 1000;

/** Each value at `pattern` in the plain document, with its concrete path. */
export function valuesAt(doc: unknown, pattern: readonly (string | '*')[]): { path: PathSegment[]; value: unknown }[] {
  let at: { path: PathSegment[]; value: unknown }[] = [{ path: [], value: doc }];
  for (const seg of pattern) {
    const next: typeof at = [];
    for (const { path, value } of at) {
      if (seg === '*') {
        if (Array.isArray(value)) value.forEach((v, i) => next.push({ path: [...path, i], value: v }));
      } else if (typeof value === 'object' && value !== null && !Array.isArray(value) && seg in value) {
        next.push({ path: [...path, seg], value: (value as Record<string, unknown>)[seg] });
      }
    }
    at = next;
  }
  return at;
}
