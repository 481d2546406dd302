// Threshold expressions: parsing (with the reason for a bad one) and judging a run summary,
// including thresholds that cannot be checked, which must fail.

import { describe, expect, it } from 'vitest';
import { noThresholdFailed, evaluateThreshold, evaluateThresholds, parseThreshold } from '../src/runner/thresholds.js';
import { emptyEndpointStats, type EndpointStats, type MeasuredRun } from '../src/runner/summary-json.js';

function ep(count: number, errors: number, p99: number, extra: Partial<EndpointStats> = {}): EndpointStats {
  return { ...emptyEndpointStats(), count, errors, rate: count / 60, p50_ms: p99 / 4, p90_ms: p99 / 2, p99_ms: p99, max_ms: p99 * 2, ...extra };
}

function run(over: Partial<MeasuredRun> = {}): MeasuredRun {
  return {
    scenario: 'test',
    scenarioFile: 'scenarios/test.yaml',
    seed: 1,
    target: 'embedded',
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 60_000,
    machine: { cpus: 2, cpuModel: 'test cpu', node: 'v20.0.0' },
    devices: { total: 50, onboarded: 49, byLifecycle: { onboarded: 49, registering: 1 } },
    endpoints: { config: ep(600, 0, 150), register: ep(50, 2, 900), info: ep(1000, 1, 40) },
    overall: ep(1650, 3, 700),
    undelivered: { info: 0, logs: 3, flowlog: 0, total: 3 },
    findings: { total: 0, byKind: {} },
    generator: { workers: [{ worker: 0, eventLoopLagP99Ms: 5 }], mainEventLoopLagP99Ms: 2, cpuPercent: 30 },
    ...over,
  };
}

const check = (expr: string, r: MeasuredRun = run()) => evaluateThreshold(parseThreshold(expr), r);

describe('parseThreshold', () => {
  it.each([
    ['config.p99 < 200ms', { subject: 'config', stat: 'p99', op: '<', value: 200 }],
    ['all.max <= 1.5s', { subject: 'all', stat: 'max', op: '<=', value: 1500 }],
    ['register.rate >= 50/s', { subject: 'register', stat: 'rate', op: '>=', value: 50 }],
    ['register.rate > 600/m', { subject: 'register', stat: 'rate', op: '>', value: 10 }],
    ['errors.rate < 0.1%', { subject: 'errors', stat: 'rate', op: '<', value: 0.001 }],
    ['errors.rate<0.01', { subject: 'errors', stat: 'rate', op: '<', value: 0.01 }],
    ['errors.count == 0', { subject: 'errors', stat: 'count', op: '==', value: 0 }],
    ['onboarded.ratio == 1', { subject: 'onboarded', stat: 'ratio', op: '==', value: 1 }],
    ['onboarded.ratio >= 99%', { subject: 'onboarded', stat: 'ratio', op: '>=', value: 0.99 }],
    ['onboarded.count >= 50', { subject: 'onboarded', stat: 'count', op: '>=', value: 50 }],
    ['undelivered.count == 0', { subject: 'undelivered', stat: 'count', op: '==', value: 0 }],
    ['findings.count == 0', { subject: 'findings', stat: 'count', op: '==', value: 0 }],
    ['devices.total == 50', { subject: 'devices', stat: 'total', op: '==', value: 50 }],
  ])('%s', (source, want) => expect(parseThreshold(source)).toEqual({ source, ...want }));

  it.each([
    ['config.p99 < 200', 'config.p99 is a latency: "200" has no unit'],
    ['config.p(99) < 200ms', '"config" has no stat "p(99)" (write p99)'],
    ['confg.p99 < 1s', 'unknown threshold subject "confg" (did you mean "config"?)'],
    ['config.p95 < 1s', '"config" has no stat "p95"'],
    ['errors.rate < 5', 'errors.rate is a fraction: expected 0 to 1 or a percentage such as 0.1% (got "5")'],
    ['errors.count = 0', 'operator "=" is not supported'],
    ['errors.count == -1', 'errors.count is a count: expected a number ≥ 0 (got "-1")'],
    ['onboarded.ratio ==', 'has no value after "=="'],
    ['p99 < 1s', 'is not a threshold'],
  ])('refuses %j: %s', (source, why) => expect(() => parseThreshold(source)).toThrow(why));
});

describe('evaluateThreshold', () => {
  it('passes and fails on latency, with the actual value', () => {
    expect(check('config.p99 < 200ms')).toEqual({ source: 'config.p99 < 200ms', status: 'passed', passed: true, actual: 150, bound: 200, detail: '150ms' });
    expect(check('config.p99 < 100ms')).toMatchObject({ passed: false, actual: 150 });
    expect(check('register.max <= 1800ms')).toMatchObject({ passed: true, actual: 1800 });
    expect(check('register.max < 1800ms')).toMatchObject({ passed: false });
  });

  it('all.* percentiles come from the merged histogram; counts and rates from the endpoints', () => {
    expect(check('all.p99 < 1s')).toMatchObject({ passed: true, actual: 700 });
    expect(check('all.count == 1650')).toMatchObject({ passed: true, actual: 1650 });
    expect(check('all.rate >= 27/s')).toMatchObject({ passed: true, actual: 27.5, detail: '27.5/s' });
  });

  it('errors, onboarded, undelivered, findings, devices', () => {
    expect(check('errors.count == 0')).toMatchObject({ passed: false, actual: 3 });
    expect(check('errors.rate < 0.1%')).toMatchObject({ passed: false, detail: '0.182%' });
    expect(check('errors.rate < 1%')).toMatchObject({ passed: true });
    expect(check('onboarded.ratio == 1')).toMatchObject({ passed: false, actual: 0.98, detail: '98%' });
    expect(check('onboarded.ratio >= 98%')).toMatchObject({ passed: true });
    expect(check('onboarded.count >= 49')).toMatchObject({ passed: true });
    expect(check('undelivered.count == 0')).toMatchObject({ passed: false, actual: 3 });
    expect(check('findings.count == 0')).toMatchObject({ passed: true, actual: 0 });
    expect(check('devices.total == 50')).toMatchObject({ passed: true });
  });

  it('== tolerates floating-point noise only', () => {
    const r = run({ devices: { total: 3, onboarded: 3, byLifecycle: {} } });
    expect(check('onboarded.ratio == 1', r).passed).toBe(true);
    const r2 = run({ devices: { total: 1_000_000, onboarded: 999_999, byLifecycle: {} } });
    expect(check('onboarded.ratio == 1', r2).passed).toBe(false);
  });

  it('an endpoint with no requests counts 0, and its latency cannot be checked, which fails', () => {
    expect(check('flowlog.count == 0')).toMatchObject({ passed: true, actual: 0 });
    expect(check('flowlog.count >= 1')).toMatchObject({ passed: false, actual: 0 });
    expect(check('flowlog.p99 < 1s')).toEqual({
      source: 'flowlog.p99 < 1s',
      status: 'failed',
      passed: false,
      actual: null,
      bound: 1000,
      detail: 'cannot check: no requests to flowlog during the run, so no latency to check',
    });
    // Present but empty behaves the same.
    const r = run({ endpoints: { ...run().endpoints, attest: emptyEndpointStats() } });
    expect(check('attest.max < 10s', r)).toMatchObject({ passed: false, actual: null });
  });

  it('ratios of nothing cannot be checked and fail', () => {
    const none = run({ devices: { total: 0, onboarded: 0, byLifecycle: {} }, endpoints: {}, overall: emptyEndpointStats() });
    expect(check('onboarded.ratio == 1', none)).toMatchObject({ passed: false, detail: 'cannot check: the run had no devices' });
    expect(check('errors.rate < 1%', none)).toMatchObject({
      passed: false,
      detail: 'cannot check: no requests were made during the run',
    });
    expect(check('all.p99 < 1s', none)).toMatchObject({ passed: false, actual: null });
    // Endpoints counted requests but the merged histogram is empty: refuse rather than read zeros.
    const noOverall = run({ overall: emptyEndpointStats() });
    expect(check('all.p99 < 1s', noOverall)).toMatchObject({ passed: false, actual: null });
  });

  it('evaluates a list and summarises', () => {
    const results = evaluateThresholds(['config.p99 < 200ms', 'findings.count == 0'].map(parseThreshold), run());
    expect(noThresholdFailed(results)).toBe(true);
    const failing = evaluateThresholds(['config.p99 < 200ms', 'errors.count == 0'].map(parseThreshold), run());
    expect(noThresholdFailed(failing)).toBe(false);
  });
});
