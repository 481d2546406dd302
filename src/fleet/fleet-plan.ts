// The fleet plan of one process: which devices it runs (its shard of the fleet), how they are split
// over its worker threads, and per device what the seed and the global fleet index decide (serials,
// group, arrival offset, device-side timeline actions). Pure and cheap: no keys, no files, no
// network; `evesim run --dry-run` prints it and the shard tests compare it device by device.

import { hardwareSerial, softSerial } from '../identity/serials.js';
import { identitySeed } from '../identity/fleet-id.js';
import type { Scenario } from '../scenario/scenario-types.js';
import { arrivalOffsetsMs, planShards, shardIndex, type ShardSpec } from './arrival-schedule.js';
import { actionTouchesDevice, isDeviceSide } from './device-timeline.js';
import { FleetLayout } from './fleet-layout.js';
import { devicesInShard, type FleetShard } from './fleet-shard.js';

export interface PlannedDevice {
  index: number;
  /** Worker thread (of this process) that runs it. */
  worker: number;
  serial: string;
  softSerial: string;
  group: string;
  arrivalOffsetMs: number;
  /** Positions in scenario.timeline of the device-side actions that apply to it. */
  timelineActions: number[];
}

export interface FleetPlan {
  shard: FleetShard;
  fleetDevices: number;
  shardDevices: number;
  /** Devices of this shard per group, in file order. */
  groups: { name: string; devices: number }[];
  workers: ShardSpec[];
}

export function planFleet(scenario: Pick<Scenario, 'groups'>, shard: FleetShard, workers: number): FleetPlan {
  const layout = FleetLayout.of(scenario);
  let start = 0;
  const groups = scenario.groups.map((g) => {
    const devices = devicesInShard(start, g.count, shard);
    start += g.count;
    return { name: g.name, devices };
  });
  const shardDevices = groups.reduce((n, g) => n + g.devices, 0);
  return { shard, fleetDevices: layout.total, shardDevices, groups, workers: planShards(layout.total, workers, shard) };
}

/** Every device of the plan, worker by worker, with what derives from the seed and its fleet index. */
export function plannedDevices(scenario: Pick<Scenario, 'groups' | 'seed' | 'arrival' | 'timeline'>, plan: FleetPlan, fleetId: string | undefined): PlannedDevice[] {
  const layout = FleetLayout.of(scenario);
  const serialSeed = identitySeed(scenario.seed, fleetId);
  const out: PlannedDevice[] = [];
  plan.workers.forEach((w, worker) => {
    const indices = Array.from({ length: w.count }, (_, k) => shardIndex(w, k));
    const offsets = arrivalOffsetsMs(scenario.arrival, scenario.seed, indices);
    indices.forEach((index, k) => {
      const timelineActions: number[] = [];
      scenario.timeline.forEach((a, n) => {
        if (isDeviceSide(a) && actionTouchesDevice(a, layout, index)) timelineActions.push(n);
      });
      out.push({
        index,
        worker,
        serial: hardwareSerial(serialSeed, index),
        softSerial: softSerial(serialSeed, index),
        group: layout.groups[layout.groupOf(index)]!.name,
        arrivalOffsetMs: offsets[k]!,
        timelineActions,
      });
    });
  });
  return out;
}
