// What a device keeps on disk, as EVE keeps it in /persist (eve-wire-facts §2.2, §3.5, §11.3):
// the UUID from /uuid (/persist/status/uuid), the restart counter, the last DeviceOpsCmd reboot
// and shutdown counters, why and when it last went down, what the local profile server client
// persists (last command timestamp, app commands, radio silence, local profile) and the apps as
// last reported. A generator killed in the middle of a run brings its devices back from it as
// after a power failure: no new onboarding, same UUID, boot reason POWER_FAIL.

import type { LpsPersistedState } from '../lps/lps-persisted-state.js';

export interface DeviceDiskState {
  /** Layout version of this record. */
  v: 1;
  uuid: string;
  restartCounter: number;
  lastRebootReason?: string;
  /** Epoch ms. */
  lastRebootTime?: number;
  rebootCounter?: number;
  shutdownCounter?: number;
  lps?: LpsPersistedState;
  /** Apps as last reported (ZSwState numbers): what EVE's volumes and checkpoints bring back at boot. */
  apps?: { uuid: string; name: string; state: number }[];
}

/** Why `value` cannot be a saved device state, or undefined when it can (the store skips bad records). */
export function diskStateProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'not an object';
  const s = value as Partial<DeviceDiskState>;
  if (s.v !== 1) return `layout version ${String(s.v)} is not 1`;
  if (typeof s.uuid !== 'string' || s.uuid === '') return 'uuid missing';
  if (typeof s.restartCounter !== 'number' || !Number.isInteger(s.restartCounter) || s.restartCounter < 0) return 'restartCounter is not a count';
  return undefined;
}
