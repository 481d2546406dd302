// The onboarding times (fleet/onboarding-times.ts) in the summary's mergeable section, and their
// merge over the shards of a fleet by `evesim merge`: histograms added, extremes taken. The moments
// are ms since each shard's own start; shards started at one instant (--start-at) merge exactly,
// others get their last moment shifted by their start offset (the median moment is not shifted).

import { onboardingSummaryOf, type OnboardingSummary, type OnboardingTimes } from '../fleet/onboarding-times.js';
import { encodeHistogram, sumEncodedHistograms, type MergeableOnboarding } from './mergeable-summary.js';

export function mergeableOnboarding(t: OnboardingTimes): MergeableOnboarding | undefined {
  if (t.took.totalCount === 0) return undefined;
  return { took: encodeHistogram(t.took), at: encodeHistogram(t.at), lastAtMs: t.lastAtMs, maxTookMs: t.maxTookMs };
}

/** Each part with its shard's start offset from the earliest start, ms. */
export function mergeOnboarding(parts: readonly { onboarding: MergeableOnboarding; startOffsetMs: number }[]): OnboardingSummary | undefined {
  if (parts.length === 0) return undefined;
  const took = sumEncodedHistograms(parts.map((p) => p.onboarding.took));
  const at = sumEncodedHistograms(parts.map((p) => p.onboarding.at));
  const lastAtMs = Math.max(...parts.map((p) => p.onboarding.lastAtMs + p.startOffsetMs));
  const maxTookMs = Math.max(...parts.map((p) => p.onboarding.maxTookMs));
  return onboardingSummaryOf(took, at, lastAtMs, maxTookMs);
}
