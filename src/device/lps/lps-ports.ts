// What the fleet hands a device for its local profile server and radios (DeviceOptions.lps):
// plain settings plus the worker's transports and shared counters. lps-wiring.ts builds the
// device's LpsAgent from them.

import type { Rng, Transport } from '../ports.js';
import type { LpsAddress } from './lps-address.js';
import type { LpsAgentStats } from './lps-endpoints.js';
import type { RadioSilenceTiming } from './lps-radio-silence.js';

/** 'eve': only location throttles on 404 (real EVE). 'spec': appinfo, devinfo and location do. */
export type LpsThrottleRule = 'eve' | 'spec';

/** What the fleet hands a device for its LPS and radios (DeviceOptions.lps). */
export interface DeviceLpsPorts {
  /** Scenario seed: with the device index it seeds the GNSS and cellular models. */
  seed: number;
  /** The device's own 'lps' random stream (SeededRng.create(seed, index, 'lps')). */
  rng: Rng;
  /** The transport that reaches an LPS address (the worker keeps one per base URL). */
  transportFor(address: LpsAddress): Transport;
  /** Shared by every device of a worker. */
  stats: LpsAgentStats;
  /** 404 handling: 'eve' (default, only location throttles) or 'spec'. */
  throttleRule?: LpsThrottleRule;
  radioTiming?: RadioSilenceTiming;
}
