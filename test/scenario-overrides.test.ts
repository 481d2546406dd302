// Command-line overrides: --devices scaling, --duration and the timeline, --seed, --target.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadScenario, parseScenario, totalDevices } from '../src/scenario/load-scenario.js';
import { ScenarioError } from '../src/scenario/scenario-error.js';
import { scaleGroupCounts } from '../src/scenario/scale-groups.js';

describe('scaleGroupCounts', () => {
  it('keeps proportions exactly when they divide evenly', () => {
    expect(scaleGroupCounts([40, 10], 100)).toEqual([80, 20]);
    expect(scaleGroupCounts([9000, 1000], 50)).toEqual([45, 5]);
  });

  it('largest remainder, ties to the earlier group, total exactly N', () => {
    expect(scaleGroupCounts([1, 1, 1], 10)).toEqual([4, 3, 3]);
    expect(scaleGroupCounts([2, 1], 4)).toEqual([3, 1]);
  });

  it('keeps every group at one device or more, taking from the largest', () => {
    expect(scaleGroupCounts([1000, 1, 1], 3)).toEqual([1, 1, 1]);
    expect(scaleGroupCounts([1000, 1, 1], 10)).toEqual([8, 1, 1]);
    for (let n = 3; n < 200; n++) {
      const out = scaleGroupCounts([997, 2, 1], n);
      expect(out.reduce((a, b) => a + b, 0)).toBe(n);
      expect(Math.min(...out)).toBeGreaterThanOrEqual(1);
    }
  });

  it('refuses fewer devices than groups', () => {
    expect(() => scaleGroupCounts([5, 5, 5], 2)).toThrow(/cannot share 2 devices among 3 groups/);
  });
});

describe('loadScenario overrides', () => {
  it('--devices scales the shipped storm and keeps an `over` window, or a fixed rate', () => {
    const storm = loadScenario('scenarios/onboarding-storm.yaml', { devices: 100 });
    expect(storm.groups.map((g) => g.count)).toEqual([90, 10]);
    expect(storm.arrival.ratePerSec).toBe(1000);
    const smoke = loadScenario('scenarios/smoke.yaml', { devices: 500 });
    expect(totalDevices(smoke)).toBe(500);
    expect(smoke.groups.map((g) => g.count)).toEqual([450, 50]);
    // smoke spreads arrival `over: 10s`, so the rate follows the device count.
    expect(smoke.arrival.ratePerSec).toBe(50);
  });

  it('--duration keeps timeline times absolute and drops actions past the new end with a warning', () => {
    const s = loadScenario('scenarios/smoke.yaml', { durationMs: 20_000 });
    expect(s.durationMs).toBe(20_000);
    expect(s.timeline).toEqual([]);
    const line = readFileSync('scenarios/smoke.yaml', 'utf8').split('\n').indexOf('  - at: 30s') + 1;
    expect(line).toBeGreaterThan(0);
    expect(s.warnings).toEqual([
      `scenarios/smoke.yaml:${line}:9: timeline[0].at: dropped: --duration 20s ends the run before this config-item action`,
    ]);
    const longer = loadScenario('scenarios/smoke.yaml', { durationMs: 120_000 });
    expect(longer.timeline).toHaveLength(1);
    expect(longer.timeline[0].atMs).toBe(30_000);
  });

  it('--arrival-over spreads the devices over the new window, whatever the file said', () => {
    // smoke: 50 devices `over: 10s`; steady-state: 10,000 `over: 3m`; storm: all at once or a rate.
    expect(loadScenario('scenarios/smoke.yaml', { arrivalOverMs: 25_000 }).arrival).toEqual({ model: 'uniform', ratePerSec: 2 });
    const steady = loadScenario('scenarios/steady-state.yaml', { devices: 10_000, arrivalOverMs: 500_000 });
    expect(steady.arrival.ratePerSec).toBe(20);
    const text = ['duration: 1m', 'arrival: {model: all-at-once}', 'groups: [{name: a, count: 30}]', ''].join('\n');
    expect(parseScenario(text, 'a.yaml').arrival).toEqual({ model: 'all-at-once', ratePerSec: 0 });
    expect(parseScenario(text, 'a.yaml', { arrivalOverMs: 60_000 }).arrival).toEqual({ model: 'uniform', ratePerSec: 0.5 });
    const poisson = ['duration: 1m', 'arrival: {model: poisson, rate: 100}', 'groups: [{name: a, count: 30}]', ''].join('\n');
    expect(parseScenario(poisson, 'p.yaml', { arrivalOverMs: 10_000 }).arrival).toEqual({ model: 'poisson', ratePerSec: 3 });
  });

  it('--seed and --target replace the file values; a replaced target needs no files', () => {
    const text = [
      'duration: 1m',
      'groups: [{name: a, count: 1}]',
      'target: {url: "https://127.0.0.1:1", rootCa: missing.pem, onboardCert: missing.pem, onboardKey: missing.pem}',
      '',
    ].join('\n');
    expect(() => parseScenario(text, 'o.yaml')).toThrow(ScenarioError);
    const s = parseScenario(text, 'o.yaml', { seed: 99, target: { kind: 'embedded' } });
    expect(s.seed).toBe(99);
    expect(s.target).toEqual({ kind: 'embedded' });
  });

  it('bad overrides are errors naming the option', () => {
    const load = (o: Parameters<typeof loadScenario>[1]) => () => loadScenario('scenarios/smoke.yaml', o);
    expect(load({ devices: 1 })).toThrow(
      'scenarios/smoke.yaml: --devices: must be at least 2, the number of groups, so each group keeps a device (got 1)',
    );
    expect(load({ devices: 2.5 })).toThrow('scenarios/smoke.yaml: --devices: must be an integer ≥ 1 (got 2.5)');
    expect(load({ durationMs: 0 })).toThrow('scenarios/smoke.yaml: --duration: must be longer than 0 (got 0 ms)');
    expect(load({ arrivalOverMs: -5 })).toThrow('scenarios/smoke.yaml: --arrival-over: must be longer than 0 (got -5 ms)');
    expect(load({ seed: -1 })).toThrow('scenarios/smoke.yaml: --seed: must be an integer from 0 to 4294967295 (got -1)');
  });
});
