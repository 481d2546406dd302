// The graceful stop at the end of a run (k6's gracefulStop idea) — a simulator action, not EVE
// behaviour: EVE has no "end of test". When the planned duration is over, each device stops
// producing new data and delivers what it has queued at once instead of waiting for EVE's timers
// (1 min info re-run, 90 s log upload, flow log backoff up to 128 s), retrying quickly until the
// runner's drain limit; whatever is left then is counted as undelivered.

import type { Millis } from '../ports.js';

/** First retry while draining, and the most it waits between retries. */
const DRAIN_RETRY_MIN_MS = 500;
const DRAIN_RETRY_MAX_MS = 4_000;

/** Delay before the next delivery attempt while draining: 0 before any failure, then 0.5, 1, 2, 4, 4 … s. */
export function drainRetryDelayMs(failures: number): Millis {
  if (failures <= 0) return 0;
  return Math.min(DRAIN_RETRY_MIN_MS * 2 ** Math.min(failures - 1, 16), DRAIN_RETRY_MAX_MS);
}
