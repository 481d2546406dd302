// Thresholds on the time from each device's arrival to its first 'onboarded' (the summary's
// onboarding section) and on how much longer the slowest device took than the median one; a device that never
// onboarded fails them; the report prints the figures.

import { describe, expect, it } from 'vitest';
import { evaluateThreshold, parseThreshold } from '../src/runner/thresholds.js';
import type { MeasuredRun, RunSummary } from '../src/runner/summary-json.js';
import { measuredRun } from './fakes/measured-run.js';
import { formatElapsed, onboardingText } from '../src/runner/onboarding-text.js';
import { renderReport } from '../src/runner/report-table.js';
import type { OnboardingSummary } from '../src/fleet/onboarding-times.js';
import { devicesSection } from '../src/runner/html-report/run-facts.js';

const STORM: OnboardingSummary = { devices: 1000, p50Ms: 502, p90Ms: 5698, p99Ms: 6853, maxMs: 6988, medianAtMs: 25_149, lastAtMs: 56_648 };

/** A run whose onboarding section is `onboarding` (null: none, as when no device onboarded). */
function run(onboarding: OnboardingSummary | null = STORM, total = 1000): MeasuredRun {
  const r = measuredRun({}, total);
  r.devices.onboarded = onboarding?.devices ?? 0;
  return onboarding ? { ...r, onboarding } : r;
}

const check = (expr: string, r: MeasuredRun = run()) => evaluateThreshold(parseThreshold(expr), r);

describe('onboarding thresholds', () => {
  it('parses its stats as latencies, and only for the whole run', () => {
    expect(parseThreshold('onboarding.p99 < 10s')).toEqual({ source: 'onboarding.p99 < 10s', subject: 'onboarding', stat: 'p99', op: '<', value: 10_000 });
    expect(parseThreshold('onboarding.trail <= 5s')).toMatchObject({ stat: 'trail', value: 5000 });
    expect(() => parseThreshold('onboarding.p95 < 1s')).toThrow('"onboarding" has no stat "p95"');
    expect(() => parseThreshold('onboarding.p99 < 10')).toThrow('onboarding.p99 is a latency: "10" has no unit');
    expect(() => parseThreshold('onboarding.p99 < 10s after 1m')).toThrow('"onboarding" is known only for the whole run');
  });

  it('judges the time from arrival to onboarded, and the slowest device against the median one', () => {
    expect(check('onboarding.p50 < 1s')).toMatchObject({ status: 'passed', actual: 502 });
    expect(check('onboarding.p90 < 5s')).toMatchObject({ status: 'failed', actual: 5698 });
    expect(check('onboarding.p99 < 10s')).toMatchObject({ status: 'passed', actual: 6853 });
    expect(check('onboarding.max < 5s')).toMatchObject({ status: 'failed', actual: 6988, detail: '6988ms' });
    // The slowest device against the median one, each from its own arrival: 6988 - 502 ms.
    expect(check('onboarding.trail < 5s')).toMatchObject({ status: 'failed', actual: 6486 });
    expect(check('onboarding.trail < 7s')).toMatchObject({ status: 'passed' });
    // Arrivals spread over a minute are no trail: the same times, the last device much later.
    expect(check('onboarding.trail < 7s', run({ ...STORM, medianAtMs: 30_000, lastAtMs: 60_000 }))).toMatchObject({ status: 'passed', actual: 6486 });
  });

  it('fails when a device never onboarded, or none did: their time is beyond the run', () => {
    expect(check('onboarding.p50 < 1h', run(STORM, 1003))).toMatchObject({
      status: 'failed',
      detail: "cannot check: 3 of the run's 1003 devices never onboarded, so their time is beyond the run (see onboarded.ratio)",
    });
    expect(check('onboarding.p99 < 1h', run(null, 10))).toMatchObject({ status: 'failed', detail: 'cannot check: no device onboarded during the run' });
    expect(check('onboarding.p99 < 1h', run(null, 0))).toMatchObject({ status: 'failed', detail: 'cannot check: the run had no devices' });
  });

  it('is printed in the report and in words', () => {
    expect(formatElapsed(502)).toBe('502 ms');
    expect(formatElapsed(5698)).toBe('5.70 s');
    expect(formatElapsed(56_648)).toBe('56.6 s');
    const text = onboardingText(STORM);
    expect(text).toBe('p50 502 ms, p90 5.70 s, p99 6.85 s, slowest 6.99 s from arrival to onboarded (the slowest 6.49 s longer than the median); the last device onboarded 56.6 s into the run');
    const summary = { ...run(), thresholds: [], exitCode: 0 } as RunSummary;
    expect(renderReport(summary)).toContain(`onboarding   ${text}`);
    const none = { ...run(null, 5), thresholds: [], exitCode: 0 } as RunSummary;
    expect(renderReport(none)).not.toContain('onboarding   ');
    // The HTML page's devices table too.
    expect(devicesSection(summary)).toContain('time to onboard');
    expect(devicesSection(summary)).toContain('p99 6.85 s');
    expect(devicesSection(none)).not.toContain('time to onboard');
  });
});
