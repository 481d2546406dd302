// What the runner asks of the embedded controller's admin API: the fleet map before the run and
// the controller-side timeline actions during it. The client itself is the controller's own
// (ControllerAdminClient, handed over by startControllerInThread); this file only says which call
// each action is.

import type { FleetDeviceInfo } from '../fleet/worker-protocol.js';
import type { AttestationSpec, GroupSpec, TimelineAction } from '../scenario/scenario-types.js';
import { RUN_CAPABILITIES } from './capabilities.js';
import type { ControllerAdminApi } from './controller-admin-api.js';

export type { ControllerAdminApi };

/** How a run's fleet reaches the controller: PUT (`replace`, the controller is the run's own), or
 *  PATCH added to what the other shards pushed (`merge`), the scenario's groups made again from their
 *  spec when this shard owns the timeline (`merge-owning-groups`), kept as they are otherwise. */
export type FleetPush = 'replace' | 'merge' | 'merge-owning-groups';

/** The groups and every device (serial → group, device cert when pre-registered), and the PCR
 *  templates quotes are held to, pushed as `how` says. */
export function pushFleet(
  admin: ControllerAdminApi,
  groups: readonly GroupSpec[],
  devices: readonly FleetDeviceInfo[],
  attestation: AttestationSpec | undefined,
  how: FleetPush,
): Promise<unknown> {
  if (how !== 'replace' && !admin.mergeFleet) throw new Error('the controller admin client cannot add to a fleet (no mergeFleet)');
  const push = how === 'replace' ? admin.setFleet.bind(admin) : admin.mergeFleet!.bind(admin);
  return push({
    ...(how === 'merge-owning-groups' ? { replaceGroups: true } : {}),
    ...(attestation ? { attestation } : {}),
    groups: [...groups],
    devices: devices.map((d) => ({
      serial: d.serial,
      group: d.group,
      ...(d.deviceCertPem !== undefined ? { deviceCertPem: d.deviceCertPem } : {}),
    })),
  });
}

/**
 * Applies one controller-side timeline action; an action that names no group applies to all of
 * `groups`. Device-side actions (reboot) belong to the workers and are ignored here.
 */
export async function applyTimelineAction(admin: ControllerAdminApi, action: TimelineAction, groups: readonly string[]): Promise<void> {
  const targets = 'group' in action && action.group !== undefined ? [action.group] : groups;
  switch (action.action) {
    case 'maintenance':
      // The controller-wide switch: every device endpoint answers 503 while it is on.
      await admin.setMaintenance(action.enabled);
      return;
    case 'config-item':
      for (const g of targets) await admin.patchGroup(g, { configItems: { [action.key]: action.value } });
      return;
    case 'app-activate':
      for (const g of targets) await admin.patchGroup(g, { apps: { [action.app]: { activate: action.activate } } });
      return;
    case 'controller-epoch':
      for (const g of targets) await admin.patchGroup(g, { controllerEpoch: true });
      return;
    case 'reboot':
      return;
  }
}

/** Timeline actions the runner applies through the admin API. */
export function isControllerSide(action: TimelineAction): boolean {
  // reboot and power-on belong to the workers, a capability's actions to it (LPS: the sites).
  return action.action !== 'reboot' && action.action !== 'power-on' && !RUN_CAPABILITIES.some((c) => c.timelineActions?.includes(action.action));
}
