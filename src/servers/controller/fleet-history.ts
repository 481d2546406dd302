// The controller's fleet changes folded into the one PUT that leaves the registry where they left
// it. The registry saves its fleet this way (registry-store.ts): keeping every PATCH instead made
// the saved fleet grow with each run a long-lived controller served (a 40,000-device run added its
// whole device list each time) and rewrote all of it on every push.
//
// Replaying the folded PUT equals replaying the changes in order (DeviceRegistry.setFleet and
// mergeFleet):
// - PUT replaces everything; a PUT without groups leaves the default group;
// - PATCH before any PUT is a PUT;
// - PATCH adds the groups it lists that the fleet lacks, after the others, and with replaceGroups
//   makes those it lists again from their spec (in place, so a group keeps its position);
// - a serial listed again moves to the group named last. Its certificate, given earlier and not
//   again, is kept: the device was pre-registered by the change that gave it;
// - the PCR templates are those given last.
// Group overlays (config changes made since) are saved apart and applied after the replay.

import type { GroupSpec } from '../../scenario/scenario-types.js';
import { DEFAULT_GROUP, type FleetDevice, type FleetSpec } from './fleet-spec.js';

/** A fleet change as it was made (PUT = set, PATCH = merge), replayed in order at start. What the
 *  registry saves is one `set`, the changes folded; a registry saved before may hold more. */
export interface FleetChange {
  op: 'set' | 'merge';
  spec: FleetSpec;
}

/** The single `set` equal to `changes` replayed in order; undefined when there are none. */
export function foldFleetChanges(changes: readonly FleetChange[]): FleetChange | undefined {
  let groups: Map<string, GroupSpec> | undefined;
  let devices = new Map<string, FleetDevice>();
  let attestation: FleetSpec['attestation'];
  for (const { op, spec } of changes) {
    if (op === 'set' || groups === undefined) {
      groups = new Map((spec.groups.length > 0 ? spec.groups : [DEFAULT_GROUP]).map((g) => [g.name, g]));
      devices = new Map(spec.devices.map((d) => [d.serial, d]));
      attestation = spec.attestation;
      continue;
    }
    for (const g of spec.groups) if (spec.replaceGroups === true || !groups.has(g.name)) groups.set(g.name, g);
    for (const d of spec.devices) {
      const cert = d.deviceCertPem ?? devices.get(d.serial)?.deviceCertPem;
      devices.set(d.serial, cert === undefined ? d : { ...d, deviceCertPem: cert });
    }
    if (spec.attestation) attestation = spec.attestation;
  }
  if (groups === undefined) return undefined;
  const spec: FleetSpec = { groups: [...groups.values()], devices: [...devices.values()] };
  if (attestation !== undefined) spec.attestation = attestation;
  return { op: 'set', spec };
}
