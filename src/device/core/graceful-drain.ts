// The graceful stop at the end of a run (k6's gracefulStop idea) — a simulator action, not EVE
// behaviour: EVE has no "end of test". When the planned duration is over every device stops
// producing new data at once, but delivers what it holds the way EVE sends a backlog, not as one
// burst: each device starts at its own seeded instant in the early part of the graceful-stop window
// (so the controller sees a ramp, not a spike at t = end), and from there its senders follow EVE's
// own rules (docs/eve-wire-facts.md):
//   - logs (§8.3): one tick uploads the oldest device file, then the oldest app file; ticks come at
//     the loguploader's shortest interval (3 s, its rate for a backlog of ≥ 1000 files and with
//     newlog.allow.fastupload), ±20 % jitter, and at least 10 s once a 429 was seen;
//   - info (§6.5): the deferred queue gets one kick (every item due), then its own per-item backoff
//     1, 2, 4 … min and pass timer;
//   - flow logs (§9): the head message is sent, then retried with backoff 1, 2, 4 … 128 s.
// Whatever is still queued when the window closes is counted as undelivered at stop.

import type { Millis, Rng } from '../ports.js';
import { SeededRng } from './seeded-rng.js';

/** Share of the graceful-stop window over which the devices' drain starts are spread. */
export const DRAIN_START_SPREAD_SHARE = 1 / 3;

/** EVE's shortest log upload interval (§8.3: ≥ 1000 files left, or fast upload), seconds. */
const DRAIN_LOG_INTERVAL_S = 3;
/** §8.3: the interval is doubled, at least 10 s, once a 429 was seen. */
const DRAIN_LOG_INTERVAL_AFTER_429_S = 10;

/**
 * When, after the end of the run, device `deviceIndex` starts delivering: uniform over the first
 * DRAIN_START_SPREAD_SHARE of the window, drawn from (seed, device index) alone, so the same
 * scenario seed gives every device the same start whatever the number of workers.
 */
export function drainStartOffsetMs(seed: number, deviceIndex: number, gracefulStopMs: number): Millis {
  const spread = Math.max(0, gracefulStopMs) * DRAIN_START_SPREAD_SHARE;
  if (spread === 0) return 0;
  // The device's own seeded stream for this one draw: independent of every other stream it uses.
  return Math.floor(SeededRng.create(seed, deviceIndex, 'drain').next() * spread);
}

/**
 * Delay between two log upload ticks while draining, ms: EVE's 3 s backlog interval with its ±20 %
 * jitter (integer seconds in [0.8×, 1.2×) as the loguploader computes it), 10 s after a 429.
 */
export function drainLogIntervalMs(rng: Rng, saw429: boolean): Millis {
  const interval = saw429 ? DRAIN_LOG_INTERVAL_AFTER_429_S : DRAIN_LOG_INTERVAL_S;
  const base = Math.floor((interval * 80) / 100);
  const span = (interval - base) * 2;
  return (span > 0 ? base + rng.int(span) : interval) * 1000;
}
