// The shipped scenarios load, and the loader fills defaults and normalises units as documented.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenario, parseScenario, totalDevices } from '../src/scenario/load-scenario.js';
import { APP_DEFAULTS, GROUP_DEFAULTS } from '../src/scenario/scenario-defaults.js';

describe('shipped scenarios', () => {
  it('smoke.yaml: ~50 devices, 90 s, embedded, uniform arrival over 10 s, fast timers', () => {
    const s = loadScenario('scenarios/smoke.yaml');
    expect(s.name).toBe('smoke');
    expect(s.warnings).toBeUndefined();
    expect(totalDevices(s)).toBe(50);
    expect(s.durationMs).toBe(90_000);
    expect(s.target).toEqual({ kind: 'embedded' });
    expect(s.arrival).toEqual({ model: 'uniform', ratePerSec: 5 });
    for (const g of s.groups) {
      expect(g.apps).toHaveLength(2);
      expect(g.configItems['timer.config.interval']).toBe('10');
      expect(g.configItems['newlog.allow.fastupload']).toBe('true');
      expect(g.flowlogIntervalMs).toBe(15_000);
    }
    expect(s.groups.map((g) => g.logFormat).sort()).toEqual(['legacy', 'newlogs']);
    const sources = s.thresholds.map((t) => t.source);
    for (const required of ['onboarded.ratio == 1', 'errors.count == 0', 'undelivered.count == 0', 'findings.count == 0']) {
      expect(sources).toContain(required);
    }
    expect(s.timeline).toEqual([
      { atMs: 30_000, action: 'config-item', group: 'kvm', key: 'timer.metric.interval', value: '20' },
    ]);
  });

  it('onboarding-storm.yaml: 10,000 devices at a high rate with onboarding thresholds', () => {
    const s = loadScenario('scenarios/onboarding-storm.yaml');
    expect(totalDevices(s)).toBe(10_000);
    expect(s.arrival.ratePerSec).toBeGreaterThanOrEqual(1000);
    const subjects = s.thresholds.map((t) => `${t.subject}.${t.stat}`);
    expect(subjects).toEqual(expect.arrayContaining(['register.p99', 'uuid.p99', 'config.p99', 'onboarded.ratio', 'onboarding.p99', 'onboarding.trail']));
    expect(s.groups.some((g) => g.preRegistered)).toBe(true);
  });

  it('steady-state.yaml: 10,000 devices for 10 minutes on default timers', () => {
    const s = loadScenario('scenarios/steady-state.yaml');
    expect(totalDevices(s)).toBe(10_000);
    expect(s.durationMs).toBe(600_000);
    expect(s.groups.every((g) => Object.keys(g.configItems).length === 0)).toBe(true);
    expect(s.arrival.ratePerSec).toBeCloseTo(10_000 / 180, 6); // arriving over 3 minutes
  });

  it('fleet-100k.yaml: 100,000 devices for 10 minutes on default timers with apps, generator loop lag judged after the arrival, memory bounds', () => {
    const s = loadScenario('scenarios/fleet-100k.yaml');
    expect(totalDevices(s)).toBe(100_000);
    expect(s.durationMs).toBe(600_000);
    expect(s.warnings).toBeUndefined();
    expect(s.groups.every((g) => Object.keys(g.configItems).length === 0 && g.apps.length > 0)).toBe(true);
    const arrivalEndMs = (100_000 / s.arrival.ratePerSec!) * 1000;
    expect(arrivalEndMs).toBeLessThanOrEqual(s.durationMs / 2);
    const lag = s.thresholds.find((t) => t.subject === 'loop_lag')!;
    expect(lag).toMatchObject({ stat: 'p99', op: '<', value: 100 });
    // Judged from after the last arrival, leaving steady state in the window.
    expect(lag.window!.fromMs).toBeGreaterThan(arrivalEndMs);
    expect(lag.window!.fromMs).toBeLessThanOrEqual(s.durationMs - 180_000);
    expect(s.thresholds.filter((t) => t.subject === 'memory').map((t) => t.stat).sort()).toEqual(['rss', 'rss_per_device']);
    expect(s.thresholds.map((t) => t.source)).toEqual(expect.arrayContaining(['onboarded.ratio == 1', 'errors.rate < 0.1%']));
  });

  it('controller-outage.yaml: 2,000 devices lose the controller for 60 s, thresholds on recovery', () => {
    const s = loadScenario('scenarios/controller-outage.yaml');
    expect(totalDevices(s)).toBe(2000);
    expect(s.timeline).toEqual([{ atMs: 180_000, action: 'partition', forMs: 60_000 }]);
    expect(s.thresholds.map((t) => t.source)).toEqual(expect.arrayContaining(['fault_recovery.ratio == 1', 'fault_recovery.max < 2m', 'undelivered.count == 0']));
  });

  it('flaky-network.yaml: latency, loss and resets on shares of the fleet', () => {
    const s = loadScenario('scenarios/flaky-network.yaml');
    expect(s.timeline.map((t) => t.action)).toEqual(['latency', 'loss', 'reset']);
    expect(s.timeline.every((t) => 'share' in t && t.share! > 0 && t.share! < 1)).toBe(true);
    expect(s.thresholds.map((t) => t.source)).toEqual(expect.arrayContaining(['fault_recovery.ratio == 1', 'undelivered.count == 0']));
  });
});

describe('defaults and normalisation', () => {
  it('fills every documented default for a minimal file', () => {
    const s = parseScenario('duration: 90s\ngroups:\n  - name: a\n    count: 3\n    apps: [{name: web}]\n', 'dir/minimal.yaml');
    expect(s).toEqual({
      file: 'dir/minimal.yaml',
      name: 'minimal',
      seed: 1,
      durationMs: 90_000,
      gracefulStopMs: 15_000,
      target: { kind: 'embedded' },
      groups: [{ ...GROUP_DEFAULTS, name: 'a', count: 3, apps: [{ ...APP_DEFAULTS, name: 'web' }] }],
      arrival: { model: 'uniform', ratePerSec: 20 },
      timeline: [],
      thresholds: [],
    });
    expect(GROUP_DEFAULTS.flowlogIntervalMs).toBe(120_000);
  });

  it('config item values become decimal strings; unknown keys are kept with a warning', () => {
    const s = parseScenario(
      [
        'duration: 1m',
        'groups:',
        '  - name: a',
        '    count: 1',
        '    configItems:',
        '      timer.config.interval: 1e3',
        '      newlog.allow.fastupload: false',
        '      timer.send.timeout: "30"',
        '      my.custom.key: 2.5',
        '',
      ].join('\n'),
      'c.yaml',
    );
    expect(s.groups[0].configItems).toEqual({
      'timer.config.interval': '1000',
      'newlog.allow.fastupload': 'false',
      'timer.send.timeout': '30',
      'my.custom.key': '2.5',
    });
    expect(s.warnings).toEqual([
      'c.yaml:9:7: groups[0].configItems["my.custom.key"]: "my.custom.key" is not a config item evesim knows; it is served as is and devices treat it as unknown',
    ]);
  });

  it('units: durations, rates, hardware overrides, all-at-once arrival', () => {
    const s = parseScenario(
      [
        'duration: 1h30m',
        'arrival: {model: all-at-once}',
        'groups:',
        '  - name: a',
        '    count: 2',
        '    appStep: 500ms',
        '    flowlog: {interval: 2m}',
        '    logs: {format: legacy, linesPerSec: 0}',
        '    hardware: {ncpu: 2}',
        'timeline:',
        '  - {at: 1h, action: maintenance, enabled: true}',
        '  - {at: 10m, action: controller-epoch}',
        '  - {at: 10m, action: reboot, group: a}',
        '',
      ].join('\n'),
      'u.yaml',
    );
    expect(s.durationMs).toBe(5_400_000);
    expect(s.arrival).toEqual({ model: 'all-at-once', ratePerSec: 0 });
    expect(s.groups[0].appStepMs).toBe(500);
    expect(s.groups[0].flowlogIntervalMs).toBe(120_000);
    expect(s.groups[0].logFormat).toBe('legacy');
    expect(s.groups[0].logLinesPerSec).toBe(0);
    expect(s.groups[0].hardware).toEqual({ ...GROUP_DEFAULTS.hardware, ncpu: 2 });
    // Sorted by time, file order kept among equal times.
    expect(s.timeline).toEqual([
      { atMs: 600_000, action: 'controller-epoch' },
      { atMs: 600_000, action: 'reboot', group: 'a' },
      { atMs: 3_600_000, action: 'maintenance', enabled: true },
    ]);
  });

  it("logs.quotaMB: EVE's 2048 MB by default, the group's newlog.gzipfiles.ondisk.maxmegabytes, or as written (EVE's range)", () => {
    const quota = (group: string) => parseScenario(`duration: 1m\ngroups:\n  - {name: a, count: 1${group}}\n`, 'q.yaml').groups[0]!.logQuotaMB;
    expect(quota('')).toBe(2048);
    expect(quota(", configItems: {newlog.gzipfiles.ondisk.maxmegabytes: 64}")).toBe(64);
    expect(quota(", logs: {quotaMB: 10}, configItems: {newlog.gzipfiles.ondisk.maxmegabytes: 64}")).toBe(10);
    expect(() => quota(', logs: {quotaMB: 9}')).toThrow(/q\.yaml:3:.*groups\[0\]\.logs\.quotaMB.*10 to 4294967295/);
  });

  it('arrival rate written per minute', () => {
    const s = parseScenario('duration: 1m\ngroups: [{name: a, count: 1}]\narrival: {model: poisson, rate: 600/m}\n', 'r.yaml');
    expect(s.arrival).toEqual({ model: 'poisson', ratePerSec: 10 });
  });

  it('external target: paths resolved against the scenario file, TLS-off warns', () => {
    const dir = mkdtempSync(join(tmpdir(), 'evesim-scn-'));
    for (const f of ['root.pem', 'onboard.pem', 'onboard.key']) writeFileSync(join(dir, f), 'x', { mode: 0o600 });
    const file = join(dir, 'ext.yaml');
    writeFileSync(
      file,
      [
        'duration: 1m',
        'groups: [{name: a, count: 1}]',
        'target:',
        '  url: https://127.0.0.1:8443',
        '  rootCa: root.pem',
        '  onboardCert: onboard.pem',
        '  onboardKey: onboard.key',
        '  insecureSkipVerify: true',
        '',
      ].join('\n'),
    );
    const s = loadScenario(file);
    expect(s.target).toEqual({
      kind: 'external',
      url: 'https://127.0.0.1:8443',
      rootCaFile: join(dir, 'root.pem'),
      onboardCertFile: join(dir, 'onboard.pem'),
      onboardKeyFile: join(dir, 'onboard.key'),
      insecureSkipVerify: true,
    });
    expect(s.warnings).toEqual([`${file}:8:3: target.insecureSkipVerify: TLS verification of the controller is OFF`]);
  });

  it('warns when arrival is slower than the run', () => {
    const s = parseScenario('duration: 10s\ngroups: [{name: a, count: 100}]\narrival: {model: uniform, rate: 5/s}\n', 'w.yaml');
    expect(s.warnings).toEqual([
      'w.yaml:3:33: arrival.rate: 100 devices at this rate take 20s, longer than the run (10s): late devices never start',
    ]);
  });
});
