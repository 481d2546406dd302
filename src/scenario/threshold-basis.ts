// Thresholds that scale with the fleet: a count bound written per device, so `--devices N` keeps it
// meaningful. The bound is the number written × the devices of the basis (after `--devices`; only
// the devices of the tagged API with `{api:v1}`):
//   register.count >= 1 per device           config{api:v1}.count >= 3 per device
//   onboarded.count >= 90% of devices        (the same as `>= 0.9 per device`)
//   attestation_devices.QUOTE_FAILED == 1 per tampered device
//   attestation_devices.TPM_RESET == 1 per device of reboot-wave
// The TPM categories follow the group's TPM plan (tpm-plan.ts), which decides exactly which devices
// have a TPM and which of those boot tampered, so such bounds stay exact after scaling.

import type { DeviceBasisKind, GroupSpec, PerDeviceBasis, Scenario, ThresholdSpec } from './scenario-types.js';
import { groupTpmPlan } from './attestation/tpm-plan.js';
import { didYouMean } from './suggest.js';

/** A group's devices in a run: all of them, those with a TPM, and those of them booting tampered. */
export type GroupCounts = { total: number; tpm: number; tampered: number };

/** Each basis as written after "per", its plural for messages, and how many of a group's devices it holds. */
const BASES: Readonly<Record<DeviceBasisKind, { plural: string; of: (g: GroupCounts) => number }>> = {
  device: { plural: 'devices', of: (g: GroupCounts) => g.total },
  'TPM device': { plural: 'TPM devices', of: (g: GroupCounts) => g.tpm },
  'device without TPM': { plural: 'devices without TPM', of: (g: GroupCounts) => g.total - g.tpm },
  'tampered device': { plural: 'tampered devices', of: (g: GroupCounts) => g.tampered },
  'untampered device': { plural: 'untampered devices', of: (g: GroupCounts) => g.total - g.tampered },
  'untampered TPM device': { plural: 'untampered TPM devices', of: (g: GroupCounts) => g.tpm - g.tampered },
};

export type { DeviceBasisKind };
export const DEVICE_BASES = Object.keys(BASES) as DeviceBasisKind[];

const FORMS = '"<n> per device", "<n> per device of <group>", "<n>% of devices" or a TPM basis (per TPM device, per tampered device, ...)';

/**
 * Splits `1 per device of kvm` / `90% of devices` into the number part and the basis; undefined when
 * the value has no "per"/"of" part. Throws, naming the expression, on a basis it does not know.
 */
export function splitPerDevice(value: string, source: string): { number: string; percent: boolean; basis: PerDeviceBasis } | undefined {
  const m = /^(\S+?)\s*(?:\s(per)\s+|\s(of)\s+)(.*)$/i.exec(value);
  if (!m) return undefined;
  const [, number, per, , rest] = m;
  const { name, group } = splitGroup(rest!);
  if (per) {
    const kind = DEVICE_BASES.find((b) => b.toLowerCase() === name.toLowerCase());
    if (!kind) {
      throw new Error(`"${source}": unknown basis "per ${name}"${didYouMean(name, DEVICE_BASES)}; write ${FORMS}`);
    }
    if (number!.endsWith('%')) throw new Error(`"${source}": "per ${name}" takes a number, not a percentage; write e.g. "${number!.slice(0, -1)}% of devices" or "0.5 per device"`);
    return { number: number!, percent: false, basis: group ? { kind, group } : { kind } };
  }
  if (name.toLowerCase() !== 'devices') {
    throw new Error(`"${source}": unknown basis "of ${name}"${didYouMean(name, ['devices'])}; write ${FORMS}`);
  }
  if (!number!.endsWith('%')) throw new Error(`"${source}": "of devices" takes a percentage, e.g. "90% of devices" (or write "${number} per device")`);
  return { number: number!, percent: true, basis: group ? { kind: 'device', group } : { kind: 'device' } };
}

function splitGroup(rest: string): { name: string; group?: string } {
  const m = /^(.*?)\s+of\s+(\S+)$/i.exec(rest.trim());
  return m ? { name: m[1]!.replace(/\s+/g, ' '), group: m[2]! } : { name: rest.trim().replace(/\s+/g, ' ') };
}

type BasisGroup = Pick<GroupSpec, 'name' | 'count' | 'api' | 'tpmShare' | 'tampered'>;

/** Every device of the group (a whole-fleet run). */
function wholeGroupCounts(g: BasisGroup): GroupCounts {
  const plan = groupTpmPlan(g);
  return { total: g.count, tpm: plan.tpmDevices, tampered: plan.tamperedDevices };
}

/**
 * How many devices of `groups` the basis holds (only the groups of `api` when given). `countsOf`
 * says which of a group's devices the run has (group number in `groups`): all of them by default,
 * a shard's part with `evesim run --shard`.
 */
export function basisDevices(
  groups: readonly BasisGroup[],
  basis: PerDeviceBasis,
  api?: 'v1' | 'v2',
  countsOf: (g: BasisGroup, groupNumber: number) => GroupCounts = wholeGroupCounts,
): number {
  let n = 0;
  groups.forEach((g, i) => {
    if (api !== undefined && g.api !== api) return;
    if (basis.group !== undefined && g.name !== basis.group) return;
    n += BASES[basis.kind].of(countsOf(g, i));
  });
  return n;
}

/** Sets the device count of every per-device threshold from the (scaled) groups. */
export function resolveThresholdBases(scenario: Pick<Scenario, 'groups' | 'thresholds'>): void {
  for (const t of scenario.thresholds) {
    if (t.perDevice) t.perDevice.devices = basisDevices(scenario.groups, t.perDevice, t.api);
  }
}

/** value × devices, rounded to 12 significant digits so that 10% of 30 is 3, not 3.0000000000000004. */
export function perDeviceBound(value: number, devices: number): number {
  return Number((value * devices).toPrecision(12));
}

/** "20 devices", "1 tampered device", "6 devices of reboot-wave", "15 v1 devices". */
export function describeBasis(spec: Pick<ThresholdSpec, 'api'>, basis: PerDeviceBasis, devices: number): string {
  const words = devices === 1 ? basis.kind : BASES[basis.kind].plural;
  const api = spec.api ? `${spec.api} ` : '';
  return `${devices} ${api}${words}${basis.group !== undefined ? ` of ${basis.group}` : ''}`;
}
