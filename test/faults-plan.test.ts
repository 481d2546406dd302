// Which devices a fault hits (src/faults/fault-plan.ts): seeded by the scenario seed, exact shares,
// the same devices in every worker and shard, and the fault windows as run events.

import { describe, expect, it } from 'vitest';
import { choose, FaultPlan } from '../src/faults/fault-plan.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import type { FaultAction } from '../src/faults/fault-spec.js';
import type { GroupSpec, Scenario } from '../src/scenario/scenario-types.js';
import { faultRunEvents } from '../src/runner/faults/fault-summary.js';

const groups = [{ name: 'edge', count: 1000 }, { name: 'core', count: 200 }] as GroupSpec[];

function planOf(timeline: FaultAction[], seed = 42): FaultPlan {
  return FaultPlan.of({ seed, groups, timeline } as Pick<Scenario, 'seed' | 'groups' | 'timeline'>);
}

function hits(plan: FaultPlan, id = 0): number[] {
  const out: number[] = [];
  for (let i = 0; i < 1200; i++) if (plan.faults[id]!.selects(i)) out.push(i);
  return out;
}

describe('fault plan', () => {
  it('a share of a group is exactly that share of its devices, all inside the group', () => {
    const plan = planOf([{ atMs: 0, action: 'partition', group: 'edge', share: 0.3 }]);
    const h = hits(plan);
    expect(h).toHaveLength(300);
    expect(plan.faults[0]!.deviceCount).toBe(300);
    expect(h.every((i) => i < 1000)).toBe(true);
    const core = hits(planOf([{ atMs: 0, action: 'partition', group: 'core', share: 0.25 }]));
    expect(core).toHaveLength(50);
    expect(core.every((i) => i >= 1000 && i < 1200)).toBe(true);
  });

  it('the same seed picks the same devices; another seed others', () => {
    const f: FaultAction = { atMs: 0, action: 'loss', share: 0.1, lossShare: 0.5 };
    expect(hits(planOf([f], 42))).toEqual(hits(planOf([f], 42)));
    expect(hits(planOf([f], 43))).not.toEqual(hits(planOf([f], 42)));
    expect(hits(planOf([f], 43))).toHaveLength(120);
  });

  it('no share: every device of the group or fleet; devices: exactly those, outside ones set aside', () => {
    expect(hits(planOf([{ atMs: 0, action: 'partition' }]))).toHaveLength(1200);
    expect(hits(planOf([{ atMs: 0, action: 'partition', group: 'core' }]))).toEqual(Array.from({ length: 200 }, (_, i) => 1000 + i));
    const plan = planOf([{ atMs: 0, action: 'reset', devices: [3, 1199, 5000] }]);
    expect(hits(plan)).toEqual([3, 1199]);
    expect(plan.faults[0]!.outsideFleet).toEqual([5000]);
  });

  it('a tiny share still hits one device', () => {
    expect(hits(planOf([{ atMs: 0, action: 'partition', group: 'core', share: 0.001 }]))).toHaveLength(1);
  });

  it('windows: start, end (Infinity to the end of the run), and per-device lookups', () => {
    const plan = planOf([
      { atMs: 60_000, action: 'partition', forMs: 60_000 },
      { atMs: 10_000, action: 'clock-skew', devices: [7], offsetMs: 1000 },
    ]);
    expect(plan.faults.map((p) => [p.startMs, p.endMs])).toEqual([
      [60_000, 120_000],
      [10_000, Infinity],
    ]);
    expect(plan.forDevice(7).map((p) => p.fault.action)).toEqual(['partition', 'clock-skew']);
    expect(plan.forDevice(8, ['clock-skew'])).toEqual([]);
  });

  it('choose(): k distinct sorted positions', () => {
    const c = choose(50, 20, SeededRng.create(1, 0, 'x'));
    expect(new Set(c).size).toBe(20);
    expect([...c].sort((a, b) => a - b)).toEqual(c);
    expect(c.every((x) => x >= 0 && x < 50)).toBe(true);
    expect(choose(5, 9, SeededRng.create(1))).toEqual([0, 1, 2, 3, 4]);
  });

  it('the fault windows as run events for the series, ends past the run left out', () => {
    const timeline: FaultAction[] = [
      { atMs: 60_000, action: 'partition', forMs: 60_000 },
      { atMs: 30_000, action: 'latency', group: 'edge', share: 0.5, delayMs: 300, forMs: 500_000 },
      { atMs: 90_000, action: 'tpm-reset', group: 'core' },
    ];
    expect(faultRunEvents({ seed: 1, groups, timeline }, 300_000)).toEqual([
      { tMs: 30_000, kind: 'fault-start', label: 'latency 50% of group edge, delay 300ms' },
      { tMs: 60_000, kind: 'fault-start', label: 'partition all devices' },
      { tMs: 90_000, kind: 'fault-start', label: 'tpm-reset group core' },
      { tMs: 120_000, kind: 'fault-end', label: 'partition all devices' },
    ]);
  });
});
