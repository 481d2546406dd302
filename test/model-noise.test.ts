import { describe, expect, it } from 'vitest';
import { msToOutage, type OutagePlan } from '../src/device/radio/model-noise.js';

// msToOutage is asked for every device every few seconds, so it is written without arrays; these
// properties hold it to what it means rather than to its formula.
describe('msToOutage', () => {
  const plan: OutagePlan = { meanIntervalMs: 600_000, meanDurationMs: 30_000 };
  const samples = Array.from({ length: 400 }, (_, i) => 1_700_000_000_000 + i * 7_919_113);

  it('is Infinity without a plan, or with a plan that has no outages', () => {
    expect(msToOutage(1, 2, 1000, undefined)).toBe(Infinity);
    expect(msToOutage(1, 2, 1000, { meanIntervalMs: 0, meanDurationMs: 10 })).toBe(Infinity);
    expect(msToOutage(1, 2, 1000, { meanIntervalMs: 10, meanDurationMs: 0 })).toBe(Infinity);
  });

  it('puts an outage edge exactly at the distance it reports, and none closer', () => {
    let inside = 0;
    for (const t of samples) {
      const d = msToOutage(7, 201, t, plan);
      if (d === 0) {
        inside++;
        continue;
      }
      expect(d).toBeGreaterThan(0);
      expect(d).toBeLessThanOrEqual(plan.meanIntervalMs * 2);
      // The edge is a start at t + d, or an end at t - d (the window is [start, end)).
      const startAhead = msToOutage(7, 201, t + d, plan) === 0;
      const endBehind = msToOutage(7, 201, t - d - 1, plan) === 0;
      expect(startAhead || endBehind).toBe(true);
      for (let k = 1; k < 16; k++) {
        const x = (d * k) / 16;
        expect(msToOutage(7, 201, t + x, plan)).toBeGreaterThan(0);
        expect(msToOutage(7, 201, t - x, plan)).toBeGreaterThan(0);
      }
    }
    // About 5 % of the time is inside an outage (30 s of every 10 min, 15–45 s each).
    expect(inside).toBeGreaterThan(samples.length * 0.01);
    expect(inside).toBeLessThan(samples.length * 0.15);
  });

  it('has one outage per interval, lasting half to one and a half times the mean', () => {
    const from = 1_700_000_000_000;
    let outages = 0;
    let inOutage = false;
    let began = 0;
    const durations: number[] = [];
    for (let t = from; t < from + 50 * plan.meanIntervalMs; t += 250) {
      const now = msToOutage(3, 9, t, plan) === 0;
      if (now && !inOutage) {
        outages++;
        began = t;
      }
      if (!now && inOutage) durations.push(t - began);
      inOutage = now;
    }
    expect(outages).toBeGreaterThanOrEqual(49);
    expect(outages).toBeLessThanOrEqual(51);
    for (const d of durations) {
      expect(d).toBeGreaterThanOrEqual(plan.meanDurationMs * 0.5 - 250);
      expect(d).toBeLessThanOrEqual(plan.meanDurationMs * 1.5 + 250);
    }
  });
});
