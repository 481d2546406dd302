// The capability registries of the scenario layer and the runner agree: the same capabilities on
// both sides, every threshold subject a capability lets a scenario write is one its runner side
// measures, and every timeline action a runner capability applies is one the schema accepts.

import { describe, expect, it } from 'vitest';
import { SCENARIO_CAPABILITIES } from '../src/scenario/capabilities.js';
import { TIMELINE_ACTIONS } from '../src/scenario/scenario-schema.js';
import { RUN_CAPABILITIES } from '../src/runner/capabilities.js';
import { evaluateThreshold, parseThreshold, thresholdValueKind } from '../src/runner/thresholds.js';
import { emptyEndpointStats, type MeasuredRun } from '../src/runner/summary-json.js';

const EMPTY_RUN: MeasuredRun = {
  scenario: 'capabilities',
  scenarioFile: 'capabilities.yaml',
  seed: 1,
  target: 'embedded',
  startedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 1000,
  machine: { cpus: 1, cpuModel: 'test', node: 'v20' },
  devices: { total: 0, onboarded: 0, byLifecycle: {} },
  endpoints: {},
  overall: emptyEndpointStats(),
  undelivered: { info: 0, logs: 0, flowlog: 0, total: 0 },
  findings: { total: 0, byKind: {} },
  generator: { workers: [], mainEventLoopLagP99Ms: 0, cpuPercent: 0 },
};

describe('capability registries', () => {
  it('name the same capabilities in the scenario layer and the runner', () => {
    expect(RUN_CAPABILITIES.map((c) => c.name).sort()).toEqual(SCENARIO_CAPABILITIES.map((c) => c.name).sort());
    expect(SCENARIO_CAPABILITIES.map((c) => c.name)).toEqual(['attestation', 'lps', 'api-v1', 'faults']);
  });

  it('measure every threshold subject a scenario capability adds', () => {
    const subjects = SCENARIO_CAPABILITIES.flatMap((c) => Object.entries(c.thresholdSubjects ?? {}));
    expect(subjects.length).toBeGreaterThan(0);
    for (const [subject, stats] of subjects) {
      for (const stat of Object.keys(stats)) {
        const zero = thresholdValueKind({ subject, stat }) === 'latency-ms' ? '0ms' : '0';
        const r = evaluateThreshold(parseThreshold(`${subject}.${stat} >= ${zero}`), EMPTY_RUN);
        expect(r.detail, `${subject}.${stat}`).not.toMatch(/is not a measure evesim records/);
      }
    }
  });

  it('apply only timeline actions the scenario schema accepts', () => {
    const applied = RUN_CAPABILITIES.flatMap((c) => c.timelineActions ?? []);
    expect(applied).toContain('local-profile');
    for (const a of applied) expect(TIMELINE_ACTIONS).toContain(a);
  });
});
