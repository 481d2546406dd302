// How a run shows its faults: the summary's faults section from the workers' tallies, the report's
// faults block, the fault_recovery thresholds and the evesim_faults_active gauge.

import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FaultPlan } from '../src/faults/fault-plan.js';
import type { FaultAction } from '../src/faults/fault-spec.js';
import { sumFaultTallies } from '../src/faults/fault-tally.js';
import { activeFaultDevices, registerFaultMetrics } from '../src/runner/faults/fault-metrics.js';
import { faultReportLines } from '../src/runner/faults/fault-report.js';
import { registerFaultsActive } from '../src/runner/prometheus/faults-active.js';
import { buildFaultSummary } from '../src/runner/faults/fault-summary.js';
import { measureFaultRecovery } from '../src/runner/faults/fault-thresholds.js';
import type { MeasuredRun } from '../src/runner/summary-json.js';
import type { GroupSpec } from '../src/scenario/scenario-types.js';

const groups = [{ name: 'edge', count: 10 }] as GroupSpec[];
const timeline: FaultAction[] = [
  { atMs: 60_000, action: 'partition', forMs: 60_000 },
  { atMs: 30_000, action: 'latency', share: 0.5, delayMs: 300, jitterMs: 100 },
  { atMs: 90_000, action: 'power-loss', group: 'edge', share: 0.2, forMs: 45_000 },
];
const scenario = { seed: 3, groups, timeline, durationMs: 300_000 };

describe('fault summary and report', () => {
  it('adds up the workers and words each fault', () => {
    const tallies = sumFaultTallies([
      [
        { id: 0, devices: 5, devicesHit: 5, requests: 40, recovered: 5, recoveryMs: 12_000 },
        { id: 1, devices: 3, devicesHit: 3, requests: 100 },
        { id: 2, devices: 1, devicesHit: 1, requests: 0 },
      ],
      [
        { id: 0, devices: 5, devicesHit: 4, requests: 30, recovered: 3, recoveryMs: 20_500 },
        { id: 1, devices: 2, devicesHit: 2, requests: 50 },
        { id: 2, devices: 1, devicesHit: 0, requests: 0 },
      ],
    ]);
    const faults = buildFaultSummary(scenario, tallies)!;
    expect(faults).toEqual([
      { kind: 'partition', target: 'all devices', startMs: 60_000, endMs: 120_000, devices: 10, devicesHit: 9, requests: 70, recovery: { devices: 8, maxMs: 20_500 } },
      { kind: 'latency', target: '50% of the fleet', params: 'delay 300ms ±100ms', startMs: 30_000, endMs: null, devices: 5, devicesHit: 5, requests: 150 },
      { kind: 'power-loss', target: '20% of group edge', startMs: 90_000, endMs: 135_000, devices: 2, devicesHit: 1, requests: 0 },
    ]);
    expect(faultReportLines(faults)).toEqual([
      'faults       3 injected by the generator',
      '  partition    all devices, 1m → 2m: 9 of 10 devices hit, 70 requests affected; 8 of 9 current again, the last 20.5s after the end',
      '  latency      50% of the fleet (delay 300ms ±100ms), 30s → end: 5 of 5 devices hit, 150 requests affected',
      '  power-loss   20% of group edge, 1m30s → 2m15s: 1 of 2 devices hit',
    ]);
    expect(faultReportLines(undefined)).toEqual([]);
    expect(buildFaultSummary({ ...scenario, timeline: [] }, undefined)).toBeUndefined();
  });

  it('no recovery figures for a window that ends after the run', () => {
    const faults = buildFaultSummary({ ...scenario, durationMs: 100_000 }, [{ id: 0, devices: 10, devicesHit: 10, requests: 5, recovered: 0, recoveryMs: 0 }])!;
    expect(faults[0]!.recovery).toBeUndefined();
  });
});

describe('fault_recovery thresholds', () => {
  const run = (faults: MeasuredRun['faults']) => ({ faults }) as MeasuredRun;
  const partition = { kind: 'partition', target: 'all devices', startMs: 0, endMs: 10, devices: 10, requests: 9 };

  it('ratio and max over the faults that ended', () => {
    const r = run([
      { ...partition, devicesHit: 8, recovery: { devices: 6, maxMs: 30_000 } },
      { ...partition, devicesHit: 2, recovery: { devices: 2, maxMs: 50_000 } },
      { ...partition, endMs: null, devicesHit: 10 },
    ]);
    expect(measureFaultRecovery('fault_recovery', 'ratio', r)).toEqual({ value: 0.8 });
    expect(measureFaultRecovery('fault_recovery', 'max', r)).toEqual({ cannot: '2 of the 10 devices hit got no configuration answer after the window' });
    expect(measureFaultRecovery('fault_recovery', 'max', run([{ ...partition, devicesHit: 2, recovery: { devices: 2, maxMs: 50_000 } }]))).toEqual({ value: 50_000 });
    expect(measureFaultRecovery('config', 'p99', r)).toBeUndefined();
    expect(measureFaultRecovery('fault_recovery', 'p99', r)).toEqual({ cannot: '"fault_recovery.p99" is not a measure evesim records' });
  });

  it('cannot be judged without a fault that ended, or one that hit nothing', () => {
    expect(measureFaultRecovery('fault_recovery', 'ratio', run(undefined))).toEqual({ cannot: 'the run had no network fault or power loss whose window ended before the run did' });
    expect(measureFaultRecovery('fault_recovery', 'ratio', run([{ ...partition, devicesHit: 0, recovery: { devices: 0, maxMs: 0 } }]))).toEqual({
      cannot: "the faults hit no device (none sent a request in a network fault's window or was up to lose power)",
    });
  });
});

describe('evesim_faults_active', () => {
  it('devices hit by the active faults of each kind, 0 outside their windows', async () => {
    const plan = FaultPlan.of(scenario);
    expect(activeFaultDevices(plan, undefined)).toEqual({ partition: 0, latency: 0, 'power-loss': 0 });
    expect(activeFaultDevices(plan, 45_000)).toEqual({ partition: 0, latency: 5, 'power-loss': 0 });
    expect(activeFaultDevices(plan, 100_000)).toEqual({ partition: 10, latency: 5, 'power-loss': 2 });
    const registry = new Registry();
    let elapsed: number | undefined = 70_000;
    // The metrics server registers the gauge (every kind at 0); the faults capability gives it its reader.
    registerFaultsActive(registry);
    expect(await registry.metrics()).toContain('evesim_faults_active{fault="partition"} 0');
    registerFaultMetrics(registry, plan, () => elapsed);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE evesim_faults_active gauge');
    expect(text).toContain('evesim_faults_active{fault="partition"} 10');
    expect(text).toContain('evesim_faults_active{fault="latency"} 5');
    expect(text).toContain('evesim_faults_active{fault="power-loss"} 0');
    elapsed = 200_000;
    expect(await registry.metrics()).toContain('evesim_faults_active{fault="partition"} 0');
  });
});
