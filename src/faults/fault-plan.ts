// Which devices each fault of the scenario hits, and when. Decided from the scenario seed and the
// device's fleet index alone, so every worker (and every shard) picks the same devices without
// talking, and the same scenario reproduces the same faults on the same devices. A share picks
// exactly round(share × devices) of them (at least one) by a seeded shuffle.

import { SeededRng } from '../device/core/seeded-rng.js';
import type { GroupSpec, Scenario } from '../scenario/scenario-types.js';
import { faultEndMs, faultLabel, isFaultAction, type FaultAction } from './fault-spec.js';

export interface PlannedFault {
  /** Position among the scenario's faults (timeline order): the key of its counters. */
  id: number;
  fault: FaultAction;
  /** Window, ms from the run's start; endMs is Infinity for a fault that lasts to the end. */
  startMs: number;
  endMs: number;
  label: string;
  /** Devices it hits in the whole fleet. */
  deviceCount: number;
  /** Fleet indices listed by `devices` that the fleet does not have (after --devices). */
  outsideFleet: number[];
  /** Whether fleet index `index` is hit. */
  selects(index: number): boolean;
}

export class FaultPlan {
  private constructor(readonly faults: readonly PlannedFault[]) {}

  static of(scenario: { seed: number; groups: readonly Pick<GroupSpec, 'name' | 'count'>[]; timeline: Scenario['timeline'] }): FaultPlan {
    const layout = new GroupRanges(scenario.groups);
    const faults = scenario.timeline.filter(isFaultAction).map((f, id) => planOne(f, id, layout, scenario.seed));
    return new FaultPlan(faults);
  }

  get empty(): boolean {
    return this.faults.length === 0;
  }

  /** Faults of the given kinds that hit fleet index `index`. */
  forDevice(index: number, kinds?: readonly string[]): PlannedFault[] {
    return this.faults.filter((p) => (kinds === undefined || kinds.includes(p.fault.action)) && p.selects(index));
  }
}

/** Groups take consecutive fleet index ranges in file order (as FleetLayout has them). */
class GroupRanges {
  readonly total: number;
  constructor(private readonly groups: readonly Pick<GroupSpec, 'name' | 'count'>[]) {
    this.total = groups.reduce((n, g) => n + g.count, 0);
  }

  /** First fleet index and device count of the named group. */
  range(name: string): { first: number; count: number } {
    let first = 0;
    for (const g of this.groups) {
      if (g.name === name) return { first, count: g.count };
      first += g.count;
    }
    throw new Error(`fault: no group named "${name}" (groups: ${this.groups.map((g) => g.name).join(', ')})`);
  }
}

function planOne(fault: FaultAction, id: number, layout: GroupRanges, seed: number): PlannedFault {
  const total = layout.total;
  const hit = new Uint8Array(total);
  let deviceCount = 0;
  const outsideFleet: number[] = [];
  if (fault.devices) {
    for (const i of fault.devices) {
      if (i < total) {
        hit[i] = 1;
        deviceCount++;
      } else outsideFleet.push(i);
    }
  } else {
    const { first, count: n } = fault.group === undefined ? { first: 0, count: total } : layout.range(fault.group);
    const k = fault.share === undefined ? n : Math.min(n, Math.max(1, Math.round(n * fault.share)));
    for (const pos of choose(n, k, SeededRng.create(seed, id, `fault/${fault.action}`))) hit[first + pos] = 1;
    deviceCount = k;
  }
  return {
    id,
    fault,
    startMs: fault.atMs,
    endMs: faultEndMs(fault),
    label: faultLabel(fault),
    deviceCount,
    outsideFleet,
    selects: (index) => hit[index] === 1,
  };
}

/** k distinct positions of 0..n-1 (a partial Fisher–Yates shuffle); all of them when k == n. */
export function choose(n: number, k: number, rng: { int(n: number): number }): number[] {
  if (k >= n) return Array.from({ length: n }, (_, i) => i);
  const pos = new Int32Array(n);
  for (let i = 0; i < n; i++) pos[i] = i;
  for (let i = 0; i < k; i++) {
    const j = i + rng.int(n - i);
    const t = pos[i]!;
    pos[i] = pos[j]!;
    pos[j] = t;
  }
  return Array.from(pos.subarray(0, k)).sort((a, b) => a - b);
}
