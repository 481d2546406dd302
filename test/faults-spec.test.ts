// The fault parser (src/faults/fault-spec.ts) that the scenario timeline and --fault share, the
// --fault flags (fault-flags.ts), and fault timeline actions in scenario files: every fault kind
// parses to its normalised form, and every bad field is named with what is wrong.

import { describe, expect, it } from 'vitest';
import { describeFaultTarget, faultEndMs, faultLabel, parseFault, parseFaultFlag, type FaultParse } from '../src/faults/fault-spec.js';
import { appendFaults, parseFaultFlags } from '../src/faults/fault-flags.js';
import { parseScenario } from '../src/scenario/load-scenario.js';
import { ScenarioError } from '../src/scenario/scenario-error.js';

function ok(r: FaultParse) {
  if (!r.ok) throw new Error(`expected a fault, got ${JSON.stringify(r.problems)}`);
  return r.fault;
}

function problems(r: FaultParse): string[] {
  if (r.ok) throw new Error(`expected problems, got ${JSON.stringify(r.fault)}`);
  return r.problems.map((p) => `${p.field}: ${p.message}`);
}

describe('--fault flag syntax', () => {
  it('parses every kind with its own fields', () => {
    expect(ok(parseFaultFlag('partition group=edge share=30% at=1m for=60s'))).toEqual({ atMs: 60_000, action: 'partition', group: 'edge', share: 0.3, forMs: 60_000 });
    expect(ok(parseFaultFlag('blackhole at=10s until=40s'))).toEqual({ atMs: 10_000, action: 'blackhole', forMs: 30_000 });
    expect(ok(parseFaultFlag('latency share=0.5 at=0s delay=300ms jitter=100ms'))).toEqual({ atMs: 0, action: 'latency', share: 0.5, delayMs: 300, jitterMs: 100 });
    expect(ok(parseFaultFlag('loss at=5s for=1m loss=20%'))).toEqual({ atMs: 5000, action: 'loss', forMs: 60_000, lossShare: 0.2 });
    expect(ok(parseFaultFlag('reset devices=7,3,3 at=1s'))).toEqual({ atMs: 1000, action: 'reset', devices: [3, 7] });
    expect(ok(parseFaultFlag('dns-failure at=1s for=5s')).action).toBe('dns-failure');
    expect(ok(parseFaultFlag('tls-failure at=1s for=5s')).action).toBe('tls-failure');
    expect(ok(parseFaultFlag('clock-skew at=0s offset=+2h')).offsetMs).toBe(7_200_000);
    expect(ok(parseFaultFlag('clock-skew at=0s offset=-10m')).offsetMs).toBe(-600_000);
    expect(ok(parseFaultFlag('power-loss group=edge at=30s for=45s'))).toEqual({ atMs: 30_000, action: 'power-loss', group: 'edge', forMs: 45_000 });
    expect(ok(parseFaultFlag('tpm-reset at=30s'))).toEqual({ atMs: 30_000, action: 'tpm-reset' });
  });

  it('names the field and what is wrong with it', () => {
    expect(problems(parseFaultFlag('partiton at=1m'))).toEqual([
      'action: unknown fault "partiton"; faults are partition, blackhole, latency, loss, reset, dns-failure, tls-failure, clock-skew, power-loss, tpm-reset',
    ]);
    expect(problems(parseFaultFlag('partition share=30%'))).toEqual(['at: is missing: when the fault starts, e.g. at=1m']);
    expect(problems(parseFaultFlag('partition at=1m share=130%'))).toEqual(['share: must be more than 0 and at most 100%, got 130%']);
    expect(problems(parseFaultFlag('partition at=1m share=lots'))).toEqual(['share: "lots" is not a share; expected a percentage such as 30% or a fraction such as 0.3']);
    expect(problems(parseFaultFlag('partition at=60'))).toEqual(['at: "60" has no unit; expected a duration such as 500ms, 90s, 2m or 1h30m']);
    expect(problems(parseFaultFlag('partition at=1m for=0s'))).toEqual(['for: must be longer than 0s']);
    expect(problems(parseFaultFlag('partition at=1m until=30s'))).toEqual(['until: must be after at (1m)']);
    expect(problems(parseFaultFlag('partition at=1m for=1m until=3m'))).toEqual(['until: give either for or until, not both']);
    expect(problems(parseFaultFlag('partition at=1m delay=3s'))).toEqual(['delay: does not apply to partition (only to latency)']);
    expect(problems(parseFaultFlag('partition at=1m colour=red'))).toEqual(['colour: is not a fault field; fields are at, for, until, group, share, devices']);
    expect(problems(parseFaultFlag('latency at=1m'))).toEqual(['delay: is missing: the added delay, e.g. delay=300ms']);
    expect(problems(parseFaultFlag('loss at=1m'))).toEqual(['loss: is missing: the share of requests lost, e.g. loss=20%']);
    expect(problems(parseFaultFlag('clock-skew at=1m offset=+0s'))).toEqual(['offset: must not be 0 (a clock that is not skewed)']);
    expect(problems(parseFaultFlag('tpm-reset at=1m for=1s'))).toEqual(['for: does not apply to tpm-reset (it happens at one instant)']);
    expect(problems(parseFaultFlag('reset at=1m devices=1,x'))).toEqual(['devices: "x" is not a device index (an integer ≥ 0, as findings name devices)']);
    expect(problems(parseFaultFlag('reset at=1m devices=1 group=a'))).toEqual(['devices: names the devices itself: give devices, or group and/or share, not both']);
    expect(problems(parseFaultFlag('reset at=1m at=2m'))).toEqual(['at: is given twice']);
    expect(problems(parseFaultFlag('reset 1m'))).toEqual(['1m: is not key=value (e.g. at=1m)']);
  });

  it('parseFaultFlags words a bad flag as one message naming the flag', () => {
    expect(parseFaultFlags(['partition at=1m'])).toHaveLength(1);
    expect(() => parseFaultFlags(['partition at=1m', 'latency at=2m delay=soon'])).toThrow(
      `--fault 'latency at=2m delay=soon': delay "soon" is not a duration such as 500ms, 90s, 2m or 1h30m`,
    );
  });

  it('windows and labels', () => {
    const p = ok(parseFaultFlag('partition group=edge share=30% at=1m for=60s'));
    expect(faultEndMs(p)).toBe(120_000);
    expect(faultLabel(p)).toBe('partition 30% of group edge');
    expect(faultEndMs(ok(parseFaultFlag('blackhole at=1m')))).toBe(Infinity);
    expect(faultEndMs(ok(parseFaultFlag('power-loss at=1m')))).toBe(90_000); // the usual 30 s downtime
    expect(faultEndMs(ok(parseFaultFlag('tpm-reset at=1m')))).toBe(60_000);
    expect(faultLabel(ok(parseFaultFlag('latency at=0s delay=300ms jitter=100ms')))).toBe('latency all devices, delay 300ms ±100ms');
    expect(describeFaultTarget(ok(parseFaultFlag('reset at=0s devices=4')))).toBe('device 4');
  });
});

const BASE = `
name: faults
duration: 5m
groups:
  - { name: edge, count: 10 }
  - { name: core, count: 5 }
`;

describe('fault timeline actions in a scenario file', () => {
  it('loads every kind into the timeline', () => {
    const s = parseScenario(
      `${BASE}timeline:
  - { at: 2m, action: partition, group: edge, share: 30%, for: 60s }
  - { at: 10s, action: latency, share: 0.5, delay: 300ms, jitter: 100ms }
  - { at: 1m, action: loss, loss: 20%, until: 2m }
  - { at: 1m, action: clock-skew, devices: [0, 3], offset: "-1h" }
  - { at: 3m, action: tpm-reset, group: core }
`,
      'faults.yaml',
    );
    expect(s.timeline).toEqual([
      { atMs: 10_000, action: 'latency', share: 0.5, delayMs: 300, jitterMs: 100 },
      { atMs: 60_000, action: 'loss', lossShare: 0.2, forMs: 60_000 },
      { atMs: 60_000, action: 'clock-skew', devices: [0, 3], offsetMs: -3_600_000 },
      { atMs: 120_000, action: 'partition', group: 'edge', share: 0.3, forMs: 60_000 },
      { atMs: 180_000, action: 'tpm-reset', group: 'core' },
    ]);
  });

  it('names file, line and field of a bad fault', () => {
    const bad = (timeline: string): string[] => {
      try {
        parseScenario(`${BASE}timeline:\n${timeline}`, 'faults.yaml');
      } catch (e) {
        if (e instanceof ScenarioError) return e.errors.map((x) => `${x.line}: ${x.path}: ${x.message}`);
        throw e;
      }
      throw new Error('expected a ScenarioError');
    };
    expect(bad('  - { at: 1m, action: partition, group: edge, share: 200% }\n')).toEqual(['8: timeline[0].share: must be more than 0 and at most 100%, got 200%']);
    expect(bad('  - { at: 1m, action: latency }\n')).toEqual(['8: timeline[0]: delay is missing: the added delay, e.g. delay=300ms']);
    expect(bad('  - { at: 1m, action: partition, group: egde }\n')).toEqual(['8: timeline[0].group: unknown group "egde"; groups are edge, core']);
    expect(bad('  - { at: 1m, action: reset, devices: [3, 15] }\n')).toEqual(['8: timeline[0].devices: device 15 is not in the fleet of 15 devices (indices 0 to 14)']);
    expect(bad('  - { at: 1m, action: partition, delay: 1s }\n')[0]).toMatch(/^8: timeline\[0\]/);
    expect(bad('  - { at: 1m, action: partition, until: 30s }\n')).toEqual(['8: timeline[0].until: must be after at (1m)']);
  });
});

describe('--fault against the loaded scenario', () => {
  it('appends faults that name known groups and devices, and words the others', () => {
    const s = parseScenario(BASE, 'faults.yaml');
    expect(appendFaults(s, parseFaultFlags(['partition group=edge at=1m for=30s']))).toEqual([]);
    expect(s.timeline).toEqual([{ atMs: 60_000, action: 'partition', group: 'edge', forMs: 30_000 }]);
    const s2 = parseScenario(BASE, 'faults.yaml');
    expect(appendFaults(s2, parseFaultFlags(['partition group=nope at=1m', 'reset devices=99 at=1m', 'loss loss=5% at=6m']))).toEqual([
      'partition at 1m: unknown group "nope"; groups are edge, core',
      'reset at 1m: device 99 is not in the fleet of 15 devices',
      'loss at 6m: at is at or after the end of the run (duration 5m)',
    ]);
    expect(s2.timeline).toEqual([]);
  });

  it('a bad --fault stops the load with the flag named (exit 2 via ScenarioError)', () => {
    expect(() => parseScenario(BASE, 'faults.yaml', { faults: parseFaultFlags(['partition group=nope at=1m']) })).toThrow(
      'faults.yaml: --fault: partition at 1m: unknown group "nope"; groups are edge, core',
    );
    const s = parseScenario(BASE, 'faults.yaml', { faults: parseFaultFlags(['tpm-reset at=2m', 'partition at=1m for=10s']) });
    expect(s.timeline.map((t) => t.action)).toEqual(['partition', 'tpm-reset']);
  });
});
