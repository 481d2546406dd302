// The report's "in flight" line from the workers' gate figures: caps beside peaks, the waits, and
// when a worker's queue was overloaded, how many requests it handed on newest first.

import { describe, expect, it } from 'vitest';
import { inFlightLine } from '../src/runner/in-flight-line.js';
import type { RunSummary } from '../src/runner/summary-json.js';
import type { InFlightStats } from '../src/transport/in-flight-gate.js';

const gate = (over: Partial<InFlightStats>): InFlightStats => ({
  maxInFlight: 256,
  maxPerDevice: 8,
  peak: 10,
  peakPerDevice: 2,
  queuePeak: 0,
  waited: 0,
  worstWaitMs: 0,
  timedOutWaiting: 0,
  ...over,
});
const summary = (...gates: InFlightStats[]) => ({ generator: { workers: gates.map((inFlight) => ({ inFlight })) } }) as unknown as RunSummary;

describe('inFlightLine', () => {
  it('says no request waited when none did, and nothing without gates', () => {
    expect(inFlightLine(summary(gate({}), gate({ peak: 40 })))).toBe('in flight    peak 40 of 256 per worker, 2 of 8 per device; no request waited for a slot');
    expect(inFlightLine({ generator: { workers: [{}] } } as unknown as RunSummary)).toBeUndefined();
  });

  it('sums the waits of every worker, with the timeouts and the requests handed on newest first', () => {
    const line = inFlightLine(
      summary(
        gate({ peak: 256, waited: 900, queuePeak: 700, worstWaitMs: 121_000, timedOutWaiting: 40, handedOnNewestFirst: 500 }),
        gate({ peak: 256, waited: 100, queuePeak: 90, worstWaitMs: 3_000, timedOutWaiting: 2, handedOnNewestFirst: 7 }),
      ),
    );
    expect(line).toBe(
      'in flight    peak 256 of 256 per worker, 2 of 8 per device; 1000 requests waited for a slot (at most 700 at once), worst 121.00 s, counted in their latency; ' +
        '507 handed on newest first, the queue being overloaded (its oldest had used 50 % of its deadline); 42 timed out waiting',
    );
  });

  it('leaves the newest-first clause out when every queue stayed short', () => {
    const line = inFlightLine(summary(gate({ waited: 5, queuePeak: 5, worstWaitMs: 12 })));
    expect(line).toBe('in flight    peak 10 of 256 per worker, 2 of 8 per device; 5 requests waited for a slot (at most 5 at once), worst 0.01 s, counted in their latency');
  });
});
