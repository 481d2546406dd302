// Which timeline actions the workers apply to a device (reboot, power-on: to every device of the
// named group, or of the fleet), decided by the device's global fleet index alone, so an action
// reaches the same devices however the fleet is split into shards and workers.

import type { TimelineAction } from '../scenario/scenario-types.js';
import type { FleetLayout } from './fleet-layout.js';

export type DeviceSideAction = Extract<TimelineAction, { action: 'reboot' | 'power-on' }>;

export function isDeviceSide(action: TimelineAction): action is DeviceSideAction {
  return action.action === 'reboot' || action.action === 'power-on';
}

/** Whether the device-side `action` applies to fleet index `index`; `group` is the action's group number when known. */
export function actionTouchesDevice(action: DeviceSideAction, layout: FleetLayout, index: number, group = groupOfAction(action, layout)): boolean {
  return group === undefined || layout.groupOf(index) === group;
}

/** The group number a device-side action names, undefined for the whole fleet (throws on an unknown group). */
export function groupOfAction(action: DeviceSideAction, layout: FleetLayout): number | undefined {
  return action.group === undefined ? undefined : layout.groupNamed(action.group);
}
