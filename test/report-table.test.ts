// End-of-run report text, JUnit XML and summary JSON rendered from a sample summary.

import { describe, expect, it } from 'vitest';
import { renderJUnit } from '../src/runner/junit.js';
import { judgeGenerator, renderReport } from '../src/runner/report-table.js';
import { emptyEndpointStats, summaryToJson, type EndpointStats, type RunSummary } from '../src/runner/summary-json.js';
import { evaluateThresholds, parseThreshold } from '../src/runner/thresholds.js';

function ep(count: number, errors: number, p: [number, number, number, number], extra: Partial<EndpointStats> = {}): EndpointStats {
  return {
    ...emptyEndpointStats(),
    count,
    errors,
    rate: count / 60,
    p50_ms: p[0],
    p90_ms: p[1],
    p99_ms: p[2],
    max_ms: p[3],
    byStatus: { [count === errors ? '500' : '200']: count - errors },
    ...extra,
  };
}

function sample(over: Partial<RunSummary> = {}): RunSummary {
  const base: Omit<RunSummary, 'thresholds' | 'exitCode'> = {
    scenario: 'smoke',
    scenarioFile: 'scenarios/smoke.yaml',
    seed: 1,
    target: 'embedded',
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 60_000,
    machine: { cpus: 2, cpuModel: 'Test CPU @ 2GHz', node: 'v20.18.1' },
    devices: { total: 50, onboarded: 49, byLifecycle: { onboarded: 49, registering: 1 } },
    endpoints: {
      register: ep(50, 1, [12.5, 40, 812.25, 1400], { byStatus: { '201': 49, '503': 1 } }),
      certs: ep(50, 0, [1.234, 2.5, 4, 9]),
      config: ep(600, 3, [3, 8.5, 150, 220], { byStatus: { '200': 300, '304': 297 }, byError: { ECONNRESET: 3 } }),
    },
    overall: ep(700, 4, [3.5, 20, 700, 1400]),
    undelivered: { info: 0, logs: 2, flowlog: 1, total: 3 },
    findings: { total: 2, byKind: { 'bad-signature': 2 } },
    generator: {
      workers: [
        { worker: 0, eventLoopLagP99Ms: 4.2 },
        { worker: 1, eventLoopLagP99Ms: 7.75 },
      ],
      mainEventLoopLagP99Ms: 1.5,
      cpuPercent: 41.6,
    },
  };
  const specs = ['onboarded.ratio == 1', 'config.p99 < 200ms', 'flowlog.p99 < 1s'].map(parseThreshold);
  return { ...base, thresholds: evaluateThresholds(specs, base), exitCode: 1, ...over };
}

describe('renderReport', () => {
  it('renders the whole report for a sample run', () => {
    expect(renderReport(sample())).toBe(
      [
        'evesim: smoke (scenarios/smoke.yaml), seed 1, target embedded',
        'started 2026-01-01T00:00:00.000Z, ran 60.0 s on 2 × Test CPU @ 2GHz, node v20.18.1',
        '',
        'endpoint  count  errors  unfinished  rate/s  p50 ms  p90 ms  p99 ms  max ms',
        '--------  -----  ------  ----------  ------  ------  ------  ------  ------',
        'certs        50       0           0    0.83    1.23    2.50    4.00    9.00',
        'register     50       1           0    0.83    12.5    40.0     812    1400',
        'config      600       3           0    10.0    3.00    8.50     150     220',
        '--------  -----  ------  ----------  ------  ------  ------  ------  ------',
        'all         700       4           0    11.7    3.50    20.0     700    1400',
        '',
        'failed requests:',
        '  register: HTTP 503 ×1',
        '  config: ECONNRESET ×3',
        '',
        'devices      50 total, 49 onboarded (98%); at the end: onboarded 49, registering 1',
        'undelivered  3 reliable messages (info 0, logs 2, flowlog 1)',
        'findings     2 (bad-signature 2)',
        '',
        'thresholds   1 of 3 passed',
        '  ✗ onboarded.ratio == 1  98%',
        '  ✓ config.p99 < 200ms    150ms',
        '  ✗ flowlog.p99 < 1s      cannot check: no requests to flowlog during the run, so no latency to check',
        '',
        'generator    not the bottleneck: worker event-loop lag p99 ≤ 7.75 ms (2 workers, main 1.50 ms), CPU 42%',
        '             (the embedded controller runs on this machine and shares its CPU with the generator)',
        'saturated    neither the controller nor the generator: latency p99 700 ms over 700 requests; no request unanswered or timed out; worker loops free (worker event-loop lag p99 ≤ 7.75 ms, CPU 42%)',
        '',
      ].join('\n'),
    );
  });

  it("names the workers' longest single stall beside their p99 when the summary has it", () => {
    const stalled = sample({
      generator: { workers: [{ worker: 0, eventLoopLagP99Ms: 40, eventLoopLagMaxMs: 154.6 }, { worker: 1, eventLoopLagP99Ms: 60, eventLoopLagMaxMs: 92 }], mainEventLoopLagP99Ms: 2, cpuPercent: 53 },
    });
    // A 155 ms stall under a 60 ms p99 is not a bottleneck verdict, but it is said.
    expect(renderReport(stalled)).toContain('generator    not the bottleneck: worker event-loop lag p99 ≤ 60.0 ms, longest stall 155 ms (2 workers, main 2.00 ms), CPU 53%');
  });

  it("names the whole machine's CPU beside the generator's, and blames the machine when it was full", () => {
    const shared = sample({
      target: 'https://127.0.0.1:8443',
      generator: { workers: [{ worker: 0, eventLoopLagP99Ms: 40 }, { worker: 1, eventLoopLagP99Ms: 60 }], mainEventLoopLagP99Ms: 2, cpuPercent: 70, machineCpuPercent: 95.5 },
      endpoints: { ...sample().endpoints, config: { ...sample().endpoints.config!, unfinished: 9 } },
    });
    const text = renderReport(shared);
    expect(text).toContain('generator    not the bottleneck: worker event-loop lag p99 ≤ 60.0 ms (2 workers, main 2.00 ms), CPU 70% (the whole machine 96%)');
    expect(text).toContain("saturated    this machine's CPUs: the machine's CPUs were 96% busy, every process counted (this generator 70%, everything else 26%); 9 requests still unanswered at the end;");
  });

  it('says when the generator was the bottleneck (event-loop lag or CPU)', () => {
    const lagging = sample({
      target: 'https://127.0.0.1:8443',
      generator: { workers: [{ worker: 0, eventLoopLagP99Ms: 5 }, { worker: 1, eventLoopLagP99Ms: 250 }], mainEventLoopLagP99Ms: 3, cpuPercent: 95 },
    });
    const text = renderReport(lagging);
    expect(text).toContain(
      'generator    WAS THE BOTTLENECK: worker 1 event-loop lag p99 250 ms > 100 ms; CPU 95% of all cores ≥ 90%.',
    );
    expect(text).not.toContain('embedded controller');
    // The saturation line agrees with the generator line and gives the same evidence.
    expect(text).toContain('saturated    the generator: worker 1 event-loop lag p99 250 ms > 100 ms; CPU 95% of all cores ≥ 90%; latencies and rates understate the target');
    expect(judgeGenerator({ workers: [{ worker: 0, eventLoopLagP99Ms: 100 }], mainEventLoopLagP99Ms: 0, cpuPercent: 89 })).toEqual({
      bottleneck: false,
      reasons: [],
    });
    expect(judgeGenerator({ workers: [], mainEventLoopLagP99Ms: 0, cpuPercent: 90 }).bottleneck).toBe(true);
  });

  it('a run without requests or thresholds still renders', () => {
    const text = renderReport(sample({ endpoints: {}, overall: emptyEndpointStats(), thresholds: [] }));
    expect(text).toContain('(no requests)');
    expect(text).toContain('all           0       0           0    0.00       -       -       -       -');
    expect(text).toContain('thresholds   none set');
    expect(text).not.toContain('failed requests');
  });

  it('the drain line never says everything was delivered above a non-zero undelivered count', () => {
    const drain = { gracefulStopMs: 15_000, durationMs: 1_200, complete: true, leftAtStop: {} };
    const clean = renderReport(sample({ drain, undelivered: { info: 0, logs: 0, flowlog: 0, total: 0 } }));
    expect(clean).toMatch(/^drain .*every queued reliable message delivered$/m);
    // Queues empty at the end, but 3 messages were given up on during the run.
    const earlier = renderReport(sample({ drain }));
    expect(earlier).not.toContain('every queued reliable message delivered');
    expect(earlier).toMatch(/^drain .*queues emptied; 3 reliable messages were given up on before the drain \(counted undelivered\)$/m);
    expect(earlier).toMatch(/^undelivered  3 reliable messages/m);
    const left = renderReport(sample({ drain: { ...drain, complete: false, leftAtStop: { logs: 2 } }, undelivered: { info: 1, logs: 2, flowlog: 0, total: 3 } }));
    expect(left).toMatch(/^drain .*still queued at stop: logs 2 \(counted undelivered\); 1 more given up on before the drain$/m);
  });

  it("shows the drain's requests in their own table after the endpoint table, not in it", () => {
    const drain = { gracefulStopMs: 15_000, durationMs: 5_000, complete: true, leftAtStop: {} };
    // A drain without requests (or a summary from before the split): no table.
    expect(renderReport(sample({ drain }))).not.toContain("the drain's requests");
    const newlogs = ep(40, 2, [900, 2100, 4200, 4800], { rate: 8, byStatus: { '201': 38, '503': 2 } });
    const text = renderReport(sample({ drain: { ...drain, endpoints: { newlogs }, overall: newlogs } }));
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith("the drain's requests"));
    expect(at).toBeGreaterThan(lines.findIndex((l) => /^all\s+700\s/.test(l)));
    expect(lines[at + 1]).toMatch(/^drain\s+count\s+errors\s+unfinished\s+rate\/s\s+p50 ms\s+p90 ms\s+p99 ms\s+max ms$/);
    expect(lines[at + 3]).toMatch(/^newlogs\s+40\s+2\s+0\s+8(\.0+)?\s+900(\.0+)?\s+2100(\.0+)?\s+4200(\.0+)?\s+4800(\.0+)?$/);
    expect(lines[at + 5]).toMatch(/^all\s+40\s+2\s/);
    // The main table is the run's alone: no newlogs row there.
    expect(lines.slice(0, at).some((l) => l.startsWith('newlogs'))).toBe(false);
  });

  it("reports log files dropped by the device's quota apart from undelivered", () => {
    expect(renderReport(sample())).not.toContain("dropped by the device's quota");
    const text = renderReport(sample({ droppedByQuota: { logs: 7 } }));
    expect(text).toMatch(/^dropped by the device's quota  7 log files \(EVE deletes its oldest kept files over logs\.quotaMB; not in undelivered\)$/m);
    expect(text).toMatch(/^undelivered  3 reliable messages/m);
    expect(JSON.parse(summaryToJson(sample({ droppedByQuota: { logs: 7 } }))).droppedByQuota).toEqual({ logs: 7 });
  });
});

describe('renderJUnit', () => {
  it('one test case per threshold, failures with the actual value, XML-escaped', () => {
    const xml = renderJUnit(sample());
    expect(xml).toContain('<testsuites name="evesim" tests="3" failures="2" time="60.000">');
    expect(xml).toContain('<testcase classname="evesim.smoke" name="config.p99 &lt; 200ms" time="0"></testcase>');
    expect(xml).toContain('<failure type="threshold" message="98%">onboarded.ratio == 1: 98%</failure>');
    expect(xml).toContain('<property name="seed" value="1"/>');
    expect(xml).toMatch(/<system-out>evesim: smoke[\s\S]*thresholds {3}1 of 3 passed[\s\S]*<\/system-out>/);
    expect(xml).not.toMatch(/<(?!\/?(testsuites|testsuite|testcase|failure|properties|property|system-out)\b|\?xml)/);
  });
});

describe('per-device and not-checked thresholds in report, JUnit and JSON', () => {
  // Against a real controller: no attestation figures, so those thresholds are not checked unless required.
  function external(): RunSummary {
    const s = sample({ target: 'https://127.0.0.1:8443', devices: { total: 20, onboarded: 20, byLifecycle: {} } });
    s.endpoints = { ...s.endpoints, register: ep(23, 0, [1, 2, 3, 4]) };
    const specs = [
      parseThreshold('register.count >= 1 per device'),
      parseThreshold('attestation_devices.SUCCESS == 1 per device'),
      { ...parseThreshold('attestation.QUOTE_FAILED == 0'), required: true },
      parseThreshold('config.p99 < 200ms'),
    ];
    const thresholds = evaluateThresholds(specs, s);
    return { ...s, thresholds, exitCode: 1 };
  }

  it('the report shows the effective bound and marks not-checked thresholds apart', () => {
    const text = renderReport(external());
    const reason = "no attestation outcomes: they come from the embedded controller's admin API (a real controller has none)";
    expect(text).toContain(
      [
        'thresholds   2 of 4 passed, 1 not checked',
        '  ✓ register.count >= 1 per device (≥ 20 for 20 devices)               23',
        `  – attestation_devices.SUCCESS == 1 per device (= 20 for 20 devices)  not checked: ${reason}`,
        `  ✗ attestation.QUOTE_FAILED == 0                                      not checked, but required: ${reason}`,
        '  ✓ config.p99 < 200ms                                                 150ms',
      ].join('\n'),
    );
  });

  it('JUnit marks not-checked thresholds skipped; the JSON carries a status per threshold', () => {
    const s = external();
    const xml = renderJUnit(s);
    expect(xml).toContain('tests="4" failures="1" errors="0" skipped="1"');
    expect(xml).toMatch(
      /<testcase classname="evesim.smoke" name="attestation_devices.SUCCESS == 1 per device" time="0">\n {6}<skipped message="not checked: no attestation outcomes[^"]*"\/>\n {4}<\/testcase>/,
    );
    expect(xml).toContain('<failure type="threshold" message="not checked, but required: no attestation outcomes');
    expect(xml).toContain('<testcase classname="evesim.smoke" name="register.count &gt;= 1 per device" time="0"></testcase>');
    const parsed = JSON.parse(summaryToJson(s)) as RunSummary;
    expect(parsed.thresholds.map((t) => [t.source, t.status, t.bound])).toEqual([
      ['register.count >= 1 per device', 'passed', 20],
      ['attestation_devices.SUCCESS == 1 per device', 'not-checked', 20],
      ['attestation.QUOTE_FAILED == 0', 'failed', 0],
      ['config.p99 < 200ms', 'passed', 200],
    ]);
    expect(parsed.thresholds[0]!.perDevice).toEqual({ devices: 20, effective: '≥ 20 for 20 devices' });
    expect(parsed.thresholds[2]!.required).toBe(true);
  });
});

describe('summaryToJson', () => {
  it('round-trips and carries the documented top-level fields', () => {
    const s = sample();
    const parsed = JSON.parse(summaryToJson(s));
    expect(parsed).toEqual(s);
    expect(Object.keys(parsed)).toEqual(
      expect.arrayContaining(['scenario', 'seed', 'startedAt', 'durationMs', 'machine', 'devices', 'endpoints', 'undelivered', 'findings', 'thresholds', 'generator', 'exitCode']),
    );
  });
});
