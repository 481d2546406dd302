// Threshold expressions: parsing (with the reason for a bad one) and judging a run summary,
// including thresholds that cannot be checked, which must fail, per-device bounds, and figures a
// real controller cannot provide, which are "not checked" unless required.

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
    ['unfinished.count == 0', { subject: 'unfinished', stat: 'count', op: '==', value: 0 }],
    ['config.unfinished.count < 3', { subject: 'config.unfinished', stat: 'count', op: '<', value: 3 }],
    ['lps.radio.unfinished.count == 0', { subject: 'lps.radio.unfinished', stat: 'count', op: '==', value: 0 }],
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

  it('unfinished requests, over all endpoints and per endpoint', () => {
    const r = run({ endpoints: { config: ep(600, 4, 150, { unfinished: 4 }), info: ep(10, 1, 40, { unfinished: 1 }), register: ep(50, 0, 900) } });
    expect(check('unfinished.count == 0', r)).toMatchObject({ passed: false, actual: 5 });
    expect(check('config.unfinished.count <= 4', r)).toMatchObject({ passed: true, actual: 4 });
    expect(check('info.unfinished.count == 0', r)).toMatchObject({ passed: false, actual: 1 });
    // An endpoint without requests, and a summary written before the field existed, count 0.
    expect(check('flowlog.unfinished.count == 0', r)).toMatchObject({ passed: true, actual: 0 });
    const old = run({ endpoints: { config: { ...ep(600, 0, 150), unfinished: undefined as unknown as number } } });
    expect(check('unfinished.count == 0', old)).toMatchObject({ passed: true, actual: 0 });
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

describe('per-device thresholds', () => {
  it.each([
    ['register.count >= 1 per device', { subject: 'register', stat: 'count', op: '>=', value: 1, perDevice: { kind: 'device' } }],
    ['config{api:v1}.count >= 3 per device', { subject: 'config', stat: 'count', op: '>=', value: 3, api: 'v1', perDevice: { kind: 'device' } }],
    ['expected.count <= 0.5 per device', { subject: 'expected', stat: 'count', op: '<=', value: 0.5, perDevice: { kind: 'device' } }],
    ['onboarded.count >= 90% of devices', { subject: 'onboarded', stat: 'count', op: '>=', value: 0.9, perDevice: { kind: 'device' } }],
    ['onboarded.count >= 50% of devices of kvm', { subject: 'onboarded', stat: 'count', op: '>=', value: 0.5, perDevice: { kind: 'device', group: 'kvm' } }],
    ['attestation_devices.QUOTE_FAILED == 1 per tampered device', { subject: 'attestation_devices', stat: 'QUOTE_FAILED', op: '==', value: 1, perDevice: { kind: 'tampered device' } }],
    ['attestation_devices.TPM_DISABLED == 1 per device without TPM', { subject: 'attestation_devices', stat: 'TPM_DISABLED', op: '==', value: 1, perDevice: { kind: 'device without TPM' } }],
    ['attestation.KEYS_ESCROWED >= 1 per untampered TPM device', { subject: 'attestation', stat: 'KEYS_ESCROWED', op: '>=', value: 1, perDevice: { kind: 'untampered TPM device' } }],
    ['attestation_devices.TPM_RESET == 1 per device of reboot-wave', { subject: 'attestation_devices', stat: 'TPM_RESET', op: '==', value: 1, perDevice: { kind: 'device', group: 'reboot-wave' } }],
  ])('parses %s', (source, want) => expect(parseThreshold(source)).toEqual({ source, ...want }));

  it.each([
    ['register.count >= 1 per devices', '"register.count >= 1 per devices": unknown basis "per devices" (did you mean "device"?); write "<n> per device"'],
    ['register.count >= 1 per node', '"register.count >= 1 per node": unknown basis "per node"; write'],
    ['onboarded.count >= 90% of device', '"onboarded.count >= 90% of device": unknown basis "of device" (did you mean "devices"?)'],
    ['onboarded.count >= 90 of devices', '"onboarded.count >= 90 of devices": "of devices" takes a percentage, e.g. "90% of devices" (or write "90 per device")'],
    ['onboarded.count >= 90% per device', '"onboarded.count >= 90% per device": "per device" takes a number, not a percentage'],
    ['config.p99 < 1s per device', '"config.p99 < 1s per device": only counts scale with devices; config.p99 is a latency'],
    ['onboarded.ratio == 1 per device', '"onboarded.ratio == 1 per device": only counts scale with devices; onboarded.ratio is a fraction'],
    ['register.count >= many per device', 'register.count per device is a count: expected a number ≥ 0 (got "many")'],
    ['onboarded.count >= 150% of devices', 'onboarded.count per device is a fraction: expected 0 to 1'],
  ])('refuses %j', (source, why) => expect(() => parseThreshold(source)).toThrow(why));

  it('multiplies the bound by the run\'s devices and shows the effective bound', () => {
    const r = run({ devices: { total: 20, onboarded: 20, byLifecycle: {} }, endpoints: { register: ep(23, 0, 900) } });
    expect(check('register.count >= 1 per device', r)).toEqual({
      source: 'register.count >= 1 per device',
      status: 'passed',
      passed: true,
      actual: 23,
      bound: 20,
      perDevice: { devices: 20, effective: '≥ 20 for 20 devices' },
      detail: '23',
    });
    expect(check('register.count >= 2 per device', r)).toMatchObject({ status: 'failed', actual: 23, bound: 40 });
    expect(check('register.count <= 1 per device', r)).toMatchObject({ status: 'failed', bound: 20 });
    // The same threshold on the 50-device default run asks for 50.
    expect(check('register.count >= 1 per device')).toMatchObject({ status: 'passed', bound: 50, perDevice: { devices: 50 } });
  });

  it('a percentage of devices is the same fraction per device, exact for round products', () => {
    const r = run({ devices: { total: 30, onboarded: 3, byLifecycle: {} } });
    // 10% of 30 is 3 (not 3.0000000000000004, which 3 would not reach).
    expect(check('onboarded.count >= 10% of devices', r)).toMatchObject({ status: 'passed', bound: 3, perDevice: { effective: '≥ 3 for 30 devices' } });
    expect(check('onboarded.count >= 11% of devices', r)).toMatchObject({ status: 'failed', bound: 3.3, perDevice: { effective: '≥ 3.30 for 30 devices' } });
  });

  it('with an {api:…} tag counts the devices of that API', () => {
    const v1 = { devices: { total: 15, onboarded: 15 }, endpoints: { config: ep(46, 0, 100) }, overall: ep(46, 0, 100) };
    const r = run({ devices: { total: 40, onboarded: 40, byLifecycle: {} }, byApi: { v1 } });
    expect(check('config{api:v1}.count >= 3 per device', r)).toMatchObject({
      status: 'passed',
      actual: 46,
      bound: 45,
      perDevice: { devices: 15, effective: '≥ 45 for 15 v1 devices' },
    });
    expect(check('devices{api:v1}.total == 1 per device', r)).toMatchObject({ status: 'passed', bound: 15 });
  });

  it('uses the devices the loader counted for the basis; an unresolved group basis cannot be checked', () => {
    const spec = parseThreshold('attestation_devices.QUOTE_FAILED == 1 per tampered device');
    const a = { byCode: {}, tpmDisabled: 0, storeKeys: {}, failureReasons: {}, nonces: 0, devices: { byLastCode: { QUOTE_FAILED: 3 }, tpmDisabled: 0, tpmReset: 0 } };
    const resolved = { ...spec, perDevice: { ...spec.perDevice!, devices: 3 } };
    expect(evaluateThreshold(resolved, run({ attestation: a }))).toMatchObject({
      status: 'passed',
      bound: 3,
      perDevice: { devices: 3, effective: '= 3 for 3 tampered devices' },
    });
    expect(evaluateThreshold({ ...spec, perDevice: { ...spec.perDevice!, devices: 1 } }, run({ attestation: a }))).toMatchObject({
      status: 'failed',
      actual: 3,
      perDevice: { effective: '= 1 for 1 tampered device' },
    });
    expect(evaluateThreshold(spec, run({ attestation: a }))).toMatchObject({
      status: 'failed',
      actual: null,
      bound: null,
      detail: 'cannot check: "attestation_devices.QUOTE_FAILED == 1 per tampered device" was not resolved against a scenario\'s groups',
    });
  });
});

describe('thresholds a real controller cannot provide figures for', () => {
  const external = run({ target: 'https://127.0.0.1:8443' });

  it('are not checked, with the reason, and do not fail the run', () => {
    const r = check('attestation_devices.SUCCESS == 1 per device', external);
    expect(r).toMatchObject({
      status: 'not-checked',
      passed: false,
      actual: null,
      bound: 50,
      detail: "not checked: no attestation outcomes: they come from the embedded controller's admin API (a real controller has none)",
    });
    expect(check('lps_command.p99 < 1m', external)).toMatchObject({ status: 'not-checked', detail: expect.stringMatching(/^not checked: the run had no local profile server/) });
    expect(check('lps_token.rejected == 0', external)).toMatchObject({ status: 'not-checked' });
    expect(check('lps.radio.count >= 10 per device', external)).toMatchObject({ status: 'not-checked', bound: 500 });
    expect(noThresholdFailed([r, check('config.p99 < 200ms', external)])).toBe(true);
    expect(noThresholdFailed([r, check('config.p99 < 100ms', external)])).toBe(false);
  });

  it('fail when required', () => {
    const spec = { ...parseThreshold('attestation.QUOTE_FAILED == 0'), required: true };
    const r = evaluateThreshold(spec, external);
    expect(r).toMatchObject({ status: 'failed', passed: false, required: true, actual: null });
    expect(r.detail).toBe("not checked, but required: no attestation outcomes: they come from the embedded controller's admin API (a real controller has none)");
    expect(noThresholdFailed([r])).toBe(false);
  });

  it('fail with the embedded controller, which must provide them', () => {
    expect(check('attestation.QUOTE_FAILED == 0')).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^cannot check: no attestation outcomes/) });
    expect(check('lps.radio.p99 < 1s')).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^cannot check: the run had no local profile server/) });
  });

  it('other figures that cannot be measured still fail against a real controller', () => {
    expect(check('flowlog.p99 < 1s', external)).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^cannot check: no requests to flowlog/) });
    const none = run({ target: 'https://127.0.0.1:8443', devices: { total: 0, onboarded: 0, byLifecycle: {} } });
    expect(check('onboarded.ratio == 1', none)).toMatchObject({ status: 'failed', detail: 'cannot check: the run had no devices' });
  });
});

describe('drain thresholds', () => {
  const drain = { gracefulStopMs: 15_000, durationMs: 6_000, complete: true, leftAtStop: {} };

  it('judge the drain\'s own requests, apart from the run\'s', () => {
    const newlogs = ep(40, 2, 4_200, { rate: 40 / 6 });
    const r = run({ drain: { ...drain, endpoints: { newlogs }, overall: newlogs } });
    expect(check('drain.newlogs.p99 < 5s', r)).toMatchObject({ status: 'passed', actual: 4_200 });
    expect(check('drain.newlogs.p99 < 2s', r)).toMatchObject({ status: 'failed', actual: 4_200 });
    expect(check('drain.all.count == 40', r)).toMatchObject({ status: 'passed' });
    expect(check('drain.newlogs.rate > 6/s', r)).toMatchObject({ status: 'passed' });
    // The run's figures know nothing of them.
    expect(check('newlogs.count == 0', r)).toMatchObject({ status: 'passed' });
    expect(check('all.count == 1650', r)).toMatchObject({ status: 'passed' });
    // An endpoint the drain did not use: count 0, and no latency to judge.
    expect(check('drain.config.count == 0', r)).toMatchObject({ status: 'passed' });
    expect(check('drain.config.p99 < 1s', r)).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^cannot check: the drain made no requests to config/) });
  });

  it('cannot be checked without a drain, or with a drain that made no requests', () => {
    expect(check('drain.newlogs.count == 0')).toMatchObject({ status: 'failed', detail: 'cannot check: the run had no graceful stop, so no drain figures' });
    const quiet = run({ drain });
    expect(check('drain.all.count == 0', quiet)).toMatchObject({ status: 'passed' });
    expect(check('drain.all.p99 < 1s', quiet)).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^cannot check: the drain made no requests/) });
  });

  it('are known for the whole drain only: no window, no API tag, no unknown stat', () => {
    expect(() => parseThreshold('drain.newlogs.p99 < 2s after 1m')).toThrow(/known only for the whole run/);
    expect(() => parseThreshold('drain.newlogs{api:v1}.p99 < 2s')).toThrow(/no figures per API/);
    expect(() => parseThreshold('drain.newlogs.acked < 2')).toThrow(/has no stat "acked"/);
    expect(() => parseThreshold('drain.errors.count == 0')).toThrow(/unknown threshold subject "drain\.errors"/);
  });
});
