// A measured run with nothing in it (no requests, every device onboarded), for threshold tests to
// override the figures they judge.

import { emptyEndpointStats, type MeasuredRun } from '../../src/runner/summary-json.js';

export function measuredRun(over: Partial<MeasuredRun> = {}, devices = 1000): MeasuredRun {
  return {
    scenario: 't',
    scenarioFile: 't.yaml',
    seed: 1,
    target: 'embedded',
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 60_000,
    machine: { cpus: 2, cpuModel: 'cpu', node: 'v20' },
    devices: { total: devices, onboarded: devices, byLifecycle: {} },
    endpoints: {},
    overall: emptyEndpointStats(),
    undelivered: { info: 0, logs: 0, flowlog: 0, total: 0 },
    findings: { total: 0, byKind: {} },
    generator: { workers: [{ worker: 0, eventLoopLagP99Ms: 3 }], mainEventLoopLagP99Ms: 1, cpuPercent: 20 },
    ...over,
  };
}
