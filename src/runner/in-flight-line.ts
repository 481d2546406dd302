// The report's "in flight" line: the workers' in-flight caps (--max-in-flight) beside the peaks
// they measured, and how many requests waited for a slot and for how long at worst. Their wait is
// in their latency (the gate sits inside the timed transport), so a capped run stays honest. When a
// worker's queue was overloaded it served the newest first (in-flight-gate.ts): the line says how
// many, since that is why the requests that timed out waiting were the oldest.

import { NEWEST_FIRST_AT_DEADLINE_SHARE } from '../transport/in-flight-gate.js';
import type { RunSummary } from './summary-json.js';

export function inFlightLine(s: RunSummary): string | undefined {
  const gates = s.generator.workers.flatMap((w) => (w.inFlight ? [w.inFlight] : []));
  if (gates.length === 0) return undefined;
  const peak = Math.max(...gates.map((g) => g.peak));
  const cap = Math.max(...gates.map((g) => g.maxInFlight));
  const peakDevice = Math.max(...gates.map((g) => g.peakPerDevice));
  const capDevice = Math.max(...gates.map((g) => g.maxPerDevice));
  const waited = gates.reduce((a, g) => a + g.waited, 0);
  const worst = Math.max(...gates.map((g) => g.worstWaitMs));
  const timedOut = gates.reduce((a, g) => a + g.timedOutWaiting, 0);
  const newestFirst = gates.reduce((a, g) => a + (g.handedOnNewestFirst ?? 0), 0);
  const head = `in flight    peak ${peak} of ${cap} per worker, ${peakDevice} of ${capDevice} per device`;
  if (waited === 0) return `${head}; no request waited for a slot`;
  return (
    `${head}; ${waited} requests waited for a slot (at most ${Math.max(...gates.map((g) => g.queuePeak))} at once), ` +
    `worst ${(worst / 1000).toFixed(2)} s, counted in their latency` +
    (newestFirst > 0 ? `; ${newestFirst} handed on newest first, the queue being overloaded (its oldest had used ${NEWEST_FIRST_AT_DEADLINE_SHARE * 100} % of its deadline)` : '') +
    (timedOut > 0 ? `; ${timedOut} timed out waiting` : '')
  );
}
