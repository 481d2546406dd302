// The scenario's thresholds for a merged run, with per-device bounds counted on the MERGED fleet
// (`register.count >= 1 per device` of three shards of 100 devices each is judged against 300).
// Each summary carries the thresholds as its loader resolved them and the groups they were counted
// from. Two ways a shard can describe its groups, both handled exactly:
//   - the whole fleet (every shard the same groups, their devices the sum of the shards' devices):
//     the bases are counted on those groups, as one process running the whole fleet would;
//   - its own part (its groups hold its devices.total): the bases are the sums of the shards'.
// Anything else cannot be counted and is refused when a threshold is per device.

import { basisDevices } from '../scenario/threshold-basis.js';
import type { ThresholdSpec } from '../scenario/scenario-types.js';
import { MergeRefused, type ShardSummary } from './merge-checks.js';
import type { BasisGroup } from './mergeable-summary.js';

export function mergedThresholds(shards: readonly ShardSummary[]): { thresholds: ThresholdSpec[]; groups: BasisGroup[] } {
  const first = shards[0]!;
  const thresholds = JSON.parse(JSON.stringify(first.summary.mergeable.thresholds)) as ThresholdSpec[];
  const groupsOf = (s: ShardSummary): BasisGroup[] => s.summary.mergeable.groups;
  const groupDevices = (s: ShardSummary): number => groupsOf(s).reduce((a, g) => a + g.count, 0);
  const mergedDevices = shards.reduce((a, s) => a + s.summary.devices.total, 0);

  const wholeFleet =
    shards.every((s) => JSON.stringify(groupsOf(s)) === JSON.stringify(groupsOf(first))) && groupDevices(first) === mergedDevices;
  const ownPart = shards.every((s) => groupDevices(s) === s.summary.devices.total);
  const groups = wholeFleet ? groupsOf(first) : ownPart ? summedGroups(shards.map(groupsOf)) : groupsOf(first);

  for (const t of thresholds) {
    if (!t.perDevice) continue;
    if (wholeFleet) {
      t.perDevice.devices = basisDevices(groupsOf(first), t.perDevice, t.api);
    } else if (ownPart) {
      t.perDevice.devices = shards.reduce((a, s) => a + basisDevices(groupsOf(s), t.perDevice!, t.api), 0);
    } else {
      const bad = shards.find((s) => groupDevices(s) !== s.summary.devices.total) ?? first;
      throw new MergeRefused(
        `${bad.file}: mergeable.groups hold ${groupDevices(bad)} devices but devices.total is ${bad.summary.devices.total}, and the shards' groups are not the ` +
          `merged fleet of ${mergedDevices} either: cannot count the devices of "${t.source}"`,
      );
    }
  }
  return { thresholds, groups };
}

/** Groups of the shards' own parts added up by name: the whole fleet's groups. */
function summedGroups(parts: readonly BasisGroup[][]): BasisGroup[] {
  const byName = new Map<string, BasisGroup>();
  for (const part of parts) {
    for (const g of part) {
      const e = byName.get(g.name);
      if (!e) {
        byName.set(g.name, { ...g, ...(g.tampered ? { tampered: { ...g.tampered } } : {}) });
        continue;
      }
      e.count += g.count;
      if (e.tampered && 'count' in e.tampered && g.tampered && 'count' in g.tampered) e.tampered.count += g.tampered.count;
    }
  }
  return [...byName.values()];
}
