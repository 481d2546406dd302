// Onboarding times: a worker's records cross as deltas and add up on the main thread into the
// summary's onboarding section (median, p99, slowest, when the median and the last device got there).
import { describe, expect, it } from 'vitest';
import { OnboardingClock, OnboardingTimes } from '../src/fleet/onboarding-times.js';
import { mergeableOnboarding, mergeOnboarding } from '../src/runner/onboarding-merge.js';

describe('onboarding times', () => {
  it('sums two workers into percentiles of the time taken and the moments of the median and the last device', () => {
    const start = 1_000_000;
    const a = new OnboardingClock(start);
    const b = new OnboardingClock(start);
    // 99 devices due at start + i ms, each onboarded 1 s later; one trailer due at 0 that takes 23 s.
    for (let i = 0; i < 99; i++) (i % 2 ? a : b).record(start + i, start + i + 1000);
    const times = new OnboardingTimes();
    times.merge(a.take());
    expect(a.take()).toBeUndefined(); // nothing new since the last delta
    b.record(start, start + 23_000);
    times.merge(b.take());
    const s = times.summary()!;
    expect(s.devices).toBe(100);
    expect(s.p50Ms).toBe(1000);
    expect(s.p90Ms).toBe(1000);
    expect(s.maxMs).toBe(23_000);
    expect(s.lastAtMs).toBe(23_000);
    expect(s.medianAtMs).toBeGreaterThanOrEqual(1040);
    expect(s.medianAtMs).toBeLessThanOrEqual(1060);
  });

  it('merges shards: one shard gives its own figures, two add up with the later start shifting the last moment', () => {
    const shard = (tookMs: number, n: number): OnboardingTimes => {
      const c = new OnboardingClock(0);
      for (let i = 0; i < n; i++) c.record(i, i + tookMs);
      const t = new OnboardingTimes();
      t.merge(c.take());
      return t;
    };
    const a = shard(1000, 30);
    const b = shard(4000, 10);
    expect(mergeOnboarding([{ onboarding: mergeableOnboarding(a)!, startOffsetMs: 0 }])).toEqual(a.summary());
    const m = mergeOnboarding([
      { onboarding: mergeableOnboarding(a)!, startOffsetMs: 0 },
      { onboarding: mergeableOnboarding(b)!, startOffsetMs: 500 },
    ])!;
    expect(m.devices).toBe(40);
    expect(m.p50Ms).toBe(1000);
    expect(m.maxMs).toBe(4000);
    expect(m.lastAtMs).toBe(4009 + 500);
    expect(mergeableOnboarding(new OnboardingTimes())).toBeUndefined();
  });

  it('has no summary before a device onboarded', () => {
    expect(new OnboardingTimes().summary()).toBeUndefined();
  });
});
