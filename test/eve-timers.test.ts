import { describe, expect, it } from 'vitest';
import {
  ATTEST_RETRY_MS,
  CERT_RETRY_AFTER_FAILURE_MS,
  DEFAULT_DEVICE_TIMERS,
  FIRST_CONFIG_POLL_DELAY_MS,
  FIRST_METRICS_DELAY_MS,
  LogUploadSchedule,
  MetricsInterval,
  certRefreshDelayMs,
  configPollDelayMs,
  deviceInfoDelayMs,
  flowlogRetryDelayMs,
  logUploadBaseIntervalS,
  metricsDelayMs,
  onboardingRetryDelayMs,
  parseConfigItems,
} from '../src/device/core/eve-timers.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import type { Rng } from '../src/device/ports.js';

const rng = () => SeededRng.create(11, 0, 'timers');

/** min and max of many draws. */
function spread(draw: (r: Rng) => number, n = 20_000): [number, number] {
  const r = rng();
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = draw(r);
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  return [lo, hi];
}

describe('periodic jitter', () => {
  it('config poll: first immediately, then uniform in [0.3×, 1.0×]', () => {
    expect(FIRST_CONFIG_POLL_DELAY_MS).toBe(0);
    const [lo, hi] = spread((r) => configPollDelayMs(r, 60));
    expect(lo).toBeGreaterThanOrEqual(18_000);
    expect(lo).toBeLessThan(18_500); // the range is really covered
    expect(hi).toBeLessThanOrEqual(60_000);
    expect(hi).toBeGreaterThan(59_500);
  });

  it('metrics: first immediately, then uniform in [0.3×, 1.0×]', () => {
    expect(FIRST_METRICS_DELAY_MS).toBe(0);
    const [lo, hi] = spread((r) => metricsDelayMs(r, 120));
    expect(lo).toBeGreaterThanOrEqual(36_000);
    expect(lo).toBeLessThan(37_000);
    expect(hi).toBeLessThanOrEqual(120_000);
    expect(hi).toBeGreaterThan(119_000);
  });

  it('device info: uniform in [0.8×, 1.2×]', () => {
    const [lo, hi] = spread((r) => deviceInfoDelayMs(r, 600));
    expect(lo).toBeGreaterThanOrEqual(480_000);
    expect(lo).toBeLessThan(481_000);
    expect(hi).toBeLessThanOrEqual(720_000);
    expect(hi).toBeGreaterThan(719_000);
  });

  it('certs: [0.3×, 1.0×] normally, 120 s after a failed fetch', () => {
    const [lo, hi] = spread((r) => certRefreshDelayMs(r, 86400, false));
    expect(lo).toBeGreaterThanOrEqual(0.3 * 86400_000);
    expect(hi).toBeLessThanOrEqual(86400_000);
    expect(certRefreshDelayMs(rng(), 86400, true)).toBe(120_000);
    expect(CERT_RETRY_AFTER_FAILURE_MS).toBe(120_000);
  });

  it('the mean of a [0.3, 1.0] draw is near 0.65× (uniform, not clustered)', () => {
    const r = rng();
    let sum = 0;
    const n = 20_000;
    for (let i = 0; i < n; i++) sum += configPollDelayMs(r, 100);
    expect(sum / n / 100_000).toBeCloseTo(0.65, 2);
  });

  it('retry ladders: onboarding 1…600 s, flowlog 1…128 s, attestation 15 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 30].map((n) => onboardingRetryDelayMs(n) / 1000)).toEqual([
      1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600,
    ]);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 50].map((n) => flowlogRetryDelayMs(n) / 1000)).toEqual([
      1, 2, 4, 8, 16, 32, 64, 128, 128, 128,
    ]);
    expect(onboardingRetryDelayMs(0)).toBe(1000);
    expect(ATTEST_RETRY_MS).toBe(15_000);
  });

  it('is deterministic for the same seed', () => {
    const a = rng();
    const b = rng();
    for (let i = 0; i < 50; i++) expect(configPollDelayMs(a, 60)).toBe(configPollDelayMs(b, 60));
  });
});

describe('MetricsInterval', () => {
  it('applies a shorter interval at once and a longer one only after a successful send', () => {
    const m = new MetricsInterval(60);
    expect(m.configure(30)).toBe(true);
    expect(m.seconds).toBe(30);
    expect(m.configure(300)).toBe(false);
    expect(m.seconds).toBe(30);
    expect(m.pendingSeconds).toBe(300);
    expect(m.onSendSuccess()).toBe(true);
    expect(m.seconds).toBe(300);
    expect(m.onSendSuccess()).toBe(false);
    // A shorter value cancels a pending longer one.
    m.configure(600);
    m.configure(100);
    expect(m.seconds).toBe(100);
    expect(m.pendingSeconds).toBeUndefined();
  });
});

describe('parseConfigItems', () => {
  it('returns EVE defaults when nothing is configured', () => {
    const p = parseConfigItems(undefined);
    expect(p.timers).toEqual(DEFAULT_DEVICE_TIMERS);
    expect(p.timers.configIntervalS).toBe(60);
    expect(p.timers.metricIntervalS).toBe(60);
    expect(p.timers.deviceInfoIntervalS).toBe(600);
    expect(p.timers.certIntervalS).toBe(86400);
    expect(p.timers.networkFallbackAnyEth).toBe('disabled');
    expect(p.timers.newlogAllowFastUpload).toBe(false);
    expect(p.status).toEqual({ configItems: {}, unknownConfigItems: {} });
  });

  it('accepts valid values, including the bounds', () => {
    const p = parseConfigItems([
      { key: 'timer.config.interval', value: '5' },
      { key: 'timer.metric.interval', value: '3600' },
      { key: 'timer.deviceinfo.interval', value: '30' },
      { key: 'newlog.allow.fastupload', value: 'true' },
      { key: 'maintenance.mode', value: 'enabled' },
      { key: 'debug.enable.ssh', value: 'ssh-ed25519 AAAA' },
      { key: 'debug.zedagent.loglevel', value: 'debug' },
    ]);
    expect(p.timers.configIntervalS).toBe(5);
    expect(p.timers.metricIntervalS).toBe(3600);
    expect(p.timers.deviceInfoIntervalS).toBe(30);
    expect(p.timers.newlogAllowFastUpload).toBe(true);
    expect(p.timers.maintenanceMode).toBe('enabled');
    expect(p.invalid).toEqual([]);
    expect(p.status.configItems['timer.config.interval']).toEqual({ value: '5' });
    expect(p.status.configItems['debug.enable.ssh']).toEqual({ value: 'ssh-ed25519 AAAA' });
    expect(p.status.configItems['debug.zedagent.loglevel']).toEqual({ value: 'debug' });
    expect(p.status.unknownConfigItems).toEqual({});
  });

  it('keeps the default and reports an error for out-of-range and unparsable values', () => {
    const p = parseConfigItems([
      { key: 'timer.config.interval', value: '4' },
      { key: 'timer.metric.interval', value: '3601' },
      { key: 'timer.deviceinfo.interval', value: 'ten' },
      { key: 'timer.cert.interval', value: '-60' },
      { key: 'timer.send.timeout', value: '99999999999' },
      { key: 'newlog.allow.fastupload', value: 'yes' },
    ]);
    expect(p.timers.configIntervalS).toBe(60);
    expect(p.timers.metricIntervalS).toBe(60);
    expect(p.timers.deviceInfoIntervalS).toBe(600);
    expect(p.timers.certIntervalS).toBe(86400);
    expect(p.timers.sendTimeoutS).toBe(120);
    expect(p.timers.newlogAllowFastUpload).toBe(false);
    expect(p.invalid.sort()).toEqual(
      ['newlog.allow.fastupload', 'timer.cert.interval', 'timer.config.interval', 'timer.deviceinfo.interval', 'timer.metric.interval', 'timer.send.timeout'].sort(),
    );
    const s = p.status.configItems;
    expect(s['timer.config.interval']).toEqual({
      value: '4',
      error: 'bad value 4 for timer.config.interval. Error: value out of bounds. Parsed value: 4, Max: 86400, Min: 5',
    });
    expect(s['timer.metric.interval']!.error).toMatch(/out of bounds.*3601.*Max: 3600/);
    expect(s['timer.deviceinfo.interval']!.error).toMatch(/strconv.ParseUint: parsing "ten": invalid syntax/);
    expect(s['timer.cert.interval']!.error).toMatch(/invalid syntax/);
    expect(s['timer.send.timeout']!.error).toMatch(/value out of range/);
    expect(s['newlog.allow.fastupload']!.error).toMatch(/ParseBool/);
  });

  it('reports unknown keys separately with EVE error text', () => {
    const p = parseConfigItems([{ key: 'timer.bogus.interval', value: '5' }]);
    expect(p.status.unknownConfigItems).toEqual({
      'timer.bogus.interval': { value: '5', error: 'Unknown configItem timer.bogus.interval value 5' },
    });
    expect(p.status.configItems).toEqual({});
    expect(p.timers).toEqual(DEFAULT_DEVICE_TIMERS);
  });

  it('a later duplicate wins', () => {
    const p = parseConfigItems([
      { key: 'timer.config.interval', value: '2' },
      { key: 'timer.config.interval', value: '30' },
    ]);
    expect(p.timers.configIntervalS).toBe(30);
    expect(p.invalid).toEqual([]);
  });
});

describe('LogUploadSchedule', () => {
  it('maps backlog to the base interval', () => {
    expect([0, 4, 5, 24, 25, 49, 50, 199, 200, 999, 1000, 5000].map(logUploadBaseIntervalS)).toEqual([
      90, 90, 45, 45, 30, 30, 15, 15, 8, 8, 3, 3,
    ]);
  });

  it('starts at 90 s, evaluates after 1200 s, then every 1800 s, with ±20 % jitter', () => {
    const s = new LogUploadSchedule(0);
    expect(s.uploadDelayMs()).toBe(90_000);
    const r = rng();
    expect(s.maybeEvaluate(1_199_000, 100, r)).toBe(false);
    for (let i = 0; i < 3; i++) s.onSuccess(); // proven able to send
    expect(s.maybeEvaluate(1_200_000, 100, r)).toBe(true);
    expect(s.nextEvaluationAt).toBe(1_200_000 + 1_800_000);
    // backlog 100 → 15 s; jitter: floor(15·0.8)=12 .. 12+2·3−1=17
    const seen = new Set<number>();
    for (let i = 0; i < 300; i++) {
      const t = new LogUploadSchedule(0);
      for (let k = 0; k < 3; k++) t.onSuccess();
      t.maybeEvaluate(1_200_000, 100, r);
      seen.add(t.intervalS);
    }
    expect(Math.min(...seen)).toBe(12);
    expect(Math.max(...seen)).toBe(17);
  });

  it('a 429 enters back-off mode: interval doubled up to 300 s, evaluation skipped for 1 h', () => {
    const s = new LogUploadSchedule(0);
    for (let k = 0; k < 3; k++) s.onSuccess();
    s.onTooManyRequests(10_000);
    expect(s.intervalS).toBe(180);
    s.onTooManyRequests(20_000);
    expect(s.intervalS).toBe(300);
    expect(s.inBackoffMode(20_000 + 3_599_000)).toBe(true);
    const before = s.intervalS;
    s.maybeEvaluate(1_200_000, 2000, rng());
    expect(s.intervalS).toBe(before);
    // After the hour: re-evaluated 1 s later, slowed down (×2, min 10 s) because of the recent 429.
    const end = s.backoffEndsAt;
    s.onBackoffExpired(end);
    expect(s.nextEvaluationAt).toBe(end + 1000);
    s.maybeEvaluate(end + 1000, 2000, rng()); // backlog ≥1000 → 3 s → ×2 = 6 → min 10 s
    expect(s.intervalS).toBeGreaterThanOrEqual(8);
    expect(s.intervalS).toBeLessThanOrEqual(11);
  });

  it('after 20 min of failing uploads the interval becomes random in 180–900 s', () => {
    const s = new LogUploadSchedule(0); // assumes "failing" from start until 3 successes
    const r = rng();
    s.maybeEvaluate(1_200_001, 0, r);
    expect(s.intervalS).toBeGreaterThanOrEqual(180);
    expect(s.intervalS).toBeLessThan(900);
    expect(s.isFailing).toBe(true);
  });
});
