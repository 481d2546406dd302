// A configuration's items parsed once per thread for every device sent the same list. The devices
// of a group get the same config items, and a fleet-wide change (a scenario's timeline setting one
// item) makes every device apply them within a minute: parsing them and finding the shared timers
// and status (each a JSON key for shared-config-values.ts) per device cost about 40 µs each time.

import { parseConfigItems, type ConfigItemStatusReport, type DeviceTimers } from '../core/eve-timers.js';
import { SharedValueTable, sharedRecord } from './shared-config-values.js';

export interface SharedConfigItems {
  timers: Readonly<DeviceTimers>;
  status: Readonly<ConfigItemStatusReport>;
}

const byItems = new SharedValueTable<SharedConfigItems>();

/** The parsed timers and item status of `items` (shared, frozen: replace, never edit). */
export function sharedConfigItems(items: ReadonlyArray<{ key?: string; value?: string }>): SharedConfigItems {
  return byItems.get(itemsKey(items), () => {
    const parsed = parseConfigItems(items);
    return { timers: sharedRecord('timers', parsed.timers), status: sharedRecord('config-item-status', parsed.status) };
  });
}

/** Every key and value with its length in front, so no two different lists share a key. */
function itemsKey(items: ReadonlyArray<{ key?: string; value?: string }>): string {
  let key = '';
  for (const item of items) {
    const k = item.key ?? '';
    const v = item.value ?? '';
    key += `${k.length}:${k}${v.length}:${v}`;
  }
  return key;
}
