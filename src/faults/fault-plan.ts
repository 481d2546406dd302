// Which devices each fault of the scenario hits, and when. Decided from the scenario seed and the
// device's fleet index alone, so every worker (and every shard) picks the same devices without
// talking, and the same scenario reproduces the same faults on the same devices. A share picks
// exactly round(share × devices) of them (at least one) by a seeded shuffle.

import { SeededRng } from '../device/core/seeded-rng.js';
import { FleetLayout } from '../fleet/fleet-layout.js';
import type { Scenario } from '../scenario/scenario-types.js';
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

  static of(scenario: Pick<Scenario, 'seed' | 'groups' | 'timeline'>): FaultPlan {
    const layout = FleetLayout.of(scenario);
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

function planOne(fault: FaultAction, id: number, layout: FleetLayout, seed: number): PlannedFault {
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
    const g = fault.group === undefined ? undefined : layout.groupNamed(fault.group);
    const first = g === undefined ? 0 : firstIndexOf(layout, g);
    const n = g === undefined ? total : layout.groups[g]!.count;
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

function firstIndexOf(layout: FleetLayout, group: number): number {
  let first = 0;
  for (let g = 0; g < group; g++) first += layout.groups[g]!.count;
  return first;
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
