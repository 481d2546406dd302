// The radios of a group of devices as the scenario describes them (DeviceBehaviour.cellular /
// .gnss): plain data that crosses into worker threads. device-radios.ts builds the models from it.

import type { CellOperatorId } from './cellular-model.js';
import type { GeoPoint } from './gnss-model.js';

/** Cellular modems of every device of a group (plain data). */
export interface CellularSpec {
  /** Modems per device (0 = none). */
  modems: number;
  simSlots: 1 | 2;
  /** Home operator of the SIMs; absent: drawn per device from the seed. */
  operator?: CellOperatorId;
  /** Served by this other operator (roaming). */
  roamingOn?: CellOperatorId;
  /** Signal drops: about one per interval lasting about the duration; null = never. */
  drops: { meanIntervalS: number; meanDurationS: number } | null;
  /** Set: every radio-silence change fails with this RadioStatus.config_error. */
  radioSilenceFails?: string;
}

/** GNSS receiver of every device of a group (plain data). Exactly one of site / route. */
export interface GnssSpec {
  /** A fixed site; each device stands somewhere within `jitterM` metres of it. */
  site?: GeoPoint & { jitterM?: number };
  /** A vehicle driving a route at a speed (m/s). */
  route?: { waypoints: GeoPoint[]; speedMps: number; loop?: 'back-and-forth' | 'closed' };
  /** Losses of fix (tunnels, obstructions). */
  outages?: { meanIntervalS: number; meanDurationS: number };
}
