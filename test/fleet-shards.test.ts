// `evesim run --shard i/n`: the n shards of a fleet, each split over its own worker threads, are
// exactly the fleet a single run builds, device by device (index, serials, group, arrival offset,
// device-side timeline actions), with no device in two shards; per-device thresholds count the
// shard's devices; the flag's bad forms are one-line errors.

import { describe, expect, it } from 'vitest';
import { planShards, shardIndex } from '../src/fleet/arrival-schedule.js';
import { planFleet, plannedDevices, type PlannedDevice } from '../src/fleet/fleet-plan.js';
import { WHOLE_FLEET, devicesInShard, parseShardArg } from '../src/fleet/fleet-shard.js';
import { FleetIdentityStore } from '../src/identity/fleet-identity-store.js';
import { resolveShardThresholdBases } from '../src/runner/shard-thresholds.js';
import { basisDevices } from '../src/scenario/threshold-basis.js';
import type { Scenario } from '../src/scenario/scenario-types.js';
import { testGroup } from './fixtures/test-group.js';

function scenario(): Scenario {
  return {
    file: 'shards.yaml',
    name: 'shards',
    seed: 7,
    durationMs: 60_000,
    target: { kind: 'embedded' },
    // Uneven group sizes, so group boundaries fall at every residue of every shard count.
    groups: [testGroup('a', 13), testGroup('b', 29, { tpmShare: 0.5, tampered: { count: 4 } }), testGroup('c', 1), testGroup('d', 40)],
    arrival: { model: 'poisson', ratePerSec: 20 },
    timeline: [
      { atMs: 1000, action: 'reboot', group: 'b' },
      { atMs: 2000, action: 'maintenance', enabled: true },
      { atMs: 3000, action: 'power-on' },
      { atMs: 4000, action: 'reboot', group: 'c' },
    ],
    thresholds: [],
  };
}

/** Everything but the worker, which depends on the split by design. */
const withoutWorker = ({ worker: _w, ...rest }: PlannedDevice) => rest;

describe('fleet shards', () => {
  const s = scenario();
  const FLEET_ID = 'shard-test';
  const whole = plannedDevices(s, planFleet(s, WHOLE_FLEET, 1), FLEET_ID).map(withoutWorker);

  it('the whole plan is the fleet in index order, with its timeline actions and seeded arrivals', () => {
    expect(whole.map((d) => d.index)).toEqual(Array.from({ length: 83 }, (_, i) => i));
    expect(whole[13]!.group).toBe('b');
    expect(whole[13]!.timelineActions).toEqual([0, 2]); // reboot b, power-on all (maintenance is the controller's)
    expect(whole[42]!.timelineActions).toEqual([2, 3]);
    expect(whole[0]!.arrivalOffsetMs).toBe(0);
    expect(whole[82]!.arrivalOffsetMs).toBeGreaterThan(whole[81]!.arrivalOffsetMs);
    expect(new Set(whole.map((d) => d.serial)).size).toBe(83);
  });

  for (const n of [1, 2, 3, 7]) {
    for (const workers of [1, 2, 3]) {
      it(`${n} shard(s) of ${workers} worker(s) each are the whole fleet, device by device, none in two`, () => {
        const seen = new Map<number, ReturnType<typeof withoutWorker>>();
        for (let i = 0; i < n; i++) {
          const plan = planFleet(s, { index: i, count: n }, workers);
          const devices = plannedDevices(s, plan, FLEET_ID);
          expect(devices.length).toBe(plan.shardDevices);
          expect(plan.groups.reduce((t, g) => t + g.devices, 0)).toBe(plan.shardDevices);
          expect(plan.fleetDevices).toBe(83);
          expect(plan.workers.length).toBe(Math.min(workers, plan.shardDevices));
          for (const d of devices) {
            expect(d.index % n).toBe(i);
            expect(seen.has(d.index)).toBe(false);
            seen.set(d.index, withoutWorker(d));
          }
        }
        expect([...seen.keys()].sort((a, b) => a - b)).toEqual(whole.map((d) => d.index));
        for (const d of whole) expect(seen.get(d.index)).toEqual(d);
      });
    }
  }

  it('worker k of w in shard i/n gets the indices i + n·k, stride n·w', () => {
    const workers = planShards(83, 3, { index: 2, count: 7 });
    expect(workers.map((w) => [w.firstIndex, w.stride])).toEqual([
      [2, 21],
      [9, 21],
      [16, 21],
    ]);
    const all = workers.flatMap((w) => Array.from({ length: w.count }, (_, k) => shardIndex(w, k))).sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: 12 }, (_, k) => 2 + 7 * k)); // 2, 9, ..., 79
    // A shard with no devices (fleet smaller than the shard count) plans one empty worker.
    expect(planShards(3, 4, { index: 5, count: 6 })).toEqual([{ firstIndex: 5, count: 0, stride: 6 }]);
    expect(() => planShards(10, 2, { index: 2, count: 2 })).toThrow(/shard index must be 0\.\.1/);
  });

  it('counts the devices of a shard within an index range', () => {
    for (const [start, count, i, n] of [
      [0, 10, 0, 3],
      [5, 7, 1, 4],
      [13, 29, 6, 7],
      [4, 0, 0, 2],
      [3, 1, 2, 3],
    ] as const) {
      let expected = 0;
      for (let j = start; j < start + count; j++) if (j % n === i) expected++;
      expect(devicesInShard(start, count, { index: i, count: n })).toBe(expected);
    }
  });

  it("a shard's identities carry the serials the plan gives its indices", () => {
    const plan = planFleet(s, { index: 1, count: 3 }, 2);
    const store = FleetIdentityStore.open({ seed: s.seed, fleetId: FLEET_ID });
    for (const d of plannedDevices(s, plan, FLEET_ID).slice(0, 4)) {
      const id = store.device(d.index);
      expect(id.serial).toBe(d.serial);
      expect(id.softSerial).toBe(d.softSerial);
    }
  });

  it("per-device thresholds count the shard's devices of the basis; the shards add up to the fleet", () => {
    const perDevice = [{ kind: 'device' as const }, { kind: 'TPM device' as const }, { kind: 'tampered device' as const }, { kind: 'device' as const, group: 'b' }];
    for (const basis of perDevice) {
      const fleet = basisDevices(s.groups, basis);
      let sum = 0;
      for (let i = 0; i < 3; i++) {
        const sc = scenario();
        sc.thresholds = [{ source: 'x', metric: 'register.count', op: '>=', value: 1, perDevice: { ...basis, devices: fleet } } as Scenario['thresholds'][number]];
        resolveShardThresholdBases(sc, { index: i, count: 3 });
        sum += sc.thresholds[0]!.perDevice!.devices!;
      }
      expect(sum).toBe(fleet);
    }
    // Shard 0 of 3 holds fleet indices 0, 3, ..., 81: 28 devices.
    const sc = scenario();
    sc.thresholds = [{ source: 'x', metric: 'register.count', op: '>=', value: 1, perDevice: { kind: 'device', devices: 83 } } as Scenario['thresholds'][number]];
    resolveShardThresholdBases(sc, { index: 0, count: 3 });
    expect(sc.thresholds[0]!.perDevice!.devices).toBe(28);
  });

  it('--shard takes i/n with 0 ≤ i < n and says what is wrong in one line', () => {
    expect(parseShardArg('2/5')).toEqual({ index: 2, count: 5 });
    expect(parseShardArg('0/1')).toEqual({ index: 0, count: 1 });
    expect(() => parseShardArg('3/3')).toThrow('--shard: "3/3": the shard index i must be 0..2 (shards are numbered from 0)');
    expect(() => parseShardArg('a/b')).toThrow('--shard: "a/b" is not of the form i/n (e.g. 0/4: the first of 4 shards)');
    expect(() => parseShardArg('1/0')).toThrow('--shard: "1/0": the shard count n must be at least 1');
    expect(() => parseShardArg('-1/3')).toThrow(/not of the form i\/n/);
  });
});
