// Which group each fleet index belongs to (groups take consecutive index ranges in file order),
// and the DeviceBehaviour a group gives its devices.

import type { AppSpec, DeviceBehaviour } from '../device/device-options.js';
import { DEFAULT_CELLULAR } from '../device/radio/device-radios.js';
import type { GroupSpec, Scenario } from '../scenario/scenario-types.js';

export class FleetLayout {
  /** starts[g] = first fleet index of group g; starts[groups.length] = total. */
  private readonly starts: number[];
  readonly behaviours: (DeviceBehaviour & { apps: AppSpec[] })[];

  constructor(readonly groups: readonly GroupSpec[]) {
    this.starts = [0];
    for (const g of groups) this.starts.push(this.starts[this.starts.length - 1]! + g.count);
    this.behaviours = groups.map(behaviourOf);
  }

  static of(scenario: Pick<Scenario, 'groups'>): FleetLayout {
    return new FleetLayout(scenario.groups);
  }

  get total(): number {
    return this.starts[this.starts.length - 1]!;
  }

  /** Group number (index into groups) of fleet index `i`. */
  groupOf(i: number): number {
    if (!(i >= 0 && i < this.total)) throw new RangeError(`device index ${i} is outside the fleet of ${this.total}`);
    // Binary search for the last start <= i.
    let lo = 0;
    let hi = this.groups.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= i) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Position of fleet index `i` within its group (0-based). */
  positionInGroup(i: number): number {
    return i - this.starts[this.groupOf(i)]!;
  }

  groupNamed(name: string): number {
    const g = this.groups.findIndex((x) => x.name === name);
    if (g < 0) throw new Error(`no group named "${name}" (groups: ${this.groups.map((x) => x.name).join(', ')})`);
    return g;
  }
}

/**
 * The group's behaviour. `apps` (per-app log and flow rates by display name) is not in the
 * DeviceBehaviour contract yet; VirtualDevice reads it when present.
 */
export function behaviourOf(g: GroupSpec): DeviceBehaviour & { apps: AppSpec[] } {
  return {
    eveVersion: g.eveVersion,
    logFormat: g.logFormat,
    logLinesPerSec: g.logLinesPerSec,
    ...(g.logQuotaMB !== undefined ? { logQuotaBytes: g.logQuotaMB * 1_000_000 } : {}),
    flowlogIntervalMs: g.flowlogIntervalMs,
    preRegistered: g.preRegistered,
    api: g.api,
    ...(g.v1ConfigMethod !== undefined ? { v1ConfigMethod: g.v1ConfigMethod } : {}),
    appStepMs: g.appStepMs,
    hardware: { ...g.hardware },
    ...(g.firmwareVersion !== undefined ? { firmwareVersion: g.firmwareVersion } : {}),
    // Every device carries an LTE modem unless its group says otherwise; GNSS only when given.
    cellular: g.cellular ?? DEFAULT_CELLULAR,
    ...(g.gnss !== undefined ? { gnss: g.gnss } : {}),
    apps: g.apps.map((a) => ({ name: a.name, logLinesPerSec: a.logLinesPerSec, flowsPerMessage: a.flowsPerMessage })),
  };
}
