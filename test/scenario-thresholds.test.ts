// Thresholds in scenario files: the `{ threshold, required }` entry form (checked by the schema,
// errors with file:line:column), per-device bases counted from the groups after --devices, and
// every shipped scenario keeping consistent bounds when scaled down.

import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadScenario, parseScenario, totalDevices } from '../src/scenario/load-scenario.js';
import { ScenarioError } from '../src/scenario/scenario-error.js';
import { thresholdValueKind } from '../src/scenario/parse-threshold.js';
import type { Scenario, ThresholdSpec } from '../src/scenario/scenario-types.js';
import { groupTpmPlan } from '../src/scenario/attestation/tpm-plan.js';
import { perDeviceBound } from '../src/scenario/threshold-basis.js';

const GROUPS = `duration: 1m
groups:
  - name: kvm
    count: 40
  - name: old
    count: 10
    api: v1
  - name: tpm
    count: 10
    tpmShare: 0.5
    tampered: 1
`;

function errorsOf(text: string): string[] {
  try {
    parseScenario(text, 'x.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioError);
    return (e as ScenarioError).message.split('\n');
  }
  throw new Error('expected a ScenarioError, but the scenario loaded');
}

describe('threshold entries in a scenario file', () => {
  it('an expression, or a map that makes it required', () => {
    const s = parseScenario(
      `${GROUPS}thresholds:\n  - register.count >= 1 per device\n  - { threshold: "attestation_devices.SUCCESS == 1 per untampered device", required: true }\n  - threshold: errors.count == 0\n    required: false\n`,
      'x.yaml',
    );
    expect(s.thresholds.map((t) => [t.source, t.required, t.perDevice?.devices])).toEqual([
      ['register.count >= 1 per device', undefined, 60],
      ['attestation_devices.SUCCESS == 1 per untampered device', true, 59],
      ['errors.count == 0', undefined, undefined],
    ]);
  });

  it('a malformed entry is named with file, line and column', () => {
    expect(errorsOf(`${GROUPS}thresholds:\n  - { threshold: errors.count == 0, requird: true }\n  - { required: true }\n  - { threshold: errors.count == 0, required: yes }\n  - 42\n`)).toEqual([
      'x.yaml:13:37: thresholds[0].requird: unknown field "requird" (did you mean "required"?); expected one of threshold, required, abortOnFail, delayAbortEval',
      'x.yaml:14:5: thresholds[1]: missing required field "threshold"',
      'x.yaml:15:47: thresholds[2].required: must be true or false (got "yes")',
      'x.yaml:16:5: thresholds[3]: must be a threshold expression such as "config.p99 < 200ms" or a map { threshold: <expression>, required: true, abortOnFail: true, delayAbortEval: 30s } (got 42)',
    ]);
  });

  it('a bad expression names the expression and its position, in either form', () => {
    expect(errorsOf(`${GROUPS}thresholds:\n  - register.count >= 1 per devices\n  - threshold: config.count >= 3 per devices\n    required: true\n`)).toEqual([
      'x.yaml:13:5: thresholds[0]: "register.count >= 1 per devices": unknown basis "per devices" (did you mean "device"?); ' +
        'write "<n> per device", "<n> per device of <group>", "<n>% of devices" or a TPM basis (per TPM device, per tampered device, ...)',
      'x.yaml:14:16: thresholds[1].threshold: "config.count >= 3 per devices": unknown basis "per devices" (did you mean "device"?); ' +
        'write "<n> per device", "<n> per device of <group>", "<n>% of devices" or a TPM basis (per TPM device, per tampered device, ...)',
    ]);
  });

  it('a group basis must name a group of the tagged API', () => {
    expect(errorsOf(`${GROUPS}thresholds:\n  - onboarded.count == 1 per device of kvn\n  - register{api:v1}.count == 1 per device of kvm\n`)).toEqual([
      'x.yaml:13:5: thresholds[0]: "onboarded.count == 1 per device of kvn": unknown group "kvn" (did you mean "kvm"?); groups are kvm, old, tpm',
      'x.yaml:14:5: thresholds[1]: "register{api:v1}.count == 1 per device of kvm": group "kvm" uses API v2, so it has no devices of API v1',
    ]);
  });

  it('bases count the devices of the groups as --devices scales them, per API with a tag', () => {
    const text = `${GROUPS}thresholds:
  - register.count >= 1 per device
  - register{api:v1}.count == 1 per device
  - onboarded.count >= 90% of devices of kvm
  - attestation_devices.QUOTE_FAILED == 1 per tampered device
  - attestation_devices.TPM_DISABLED == 1 per device without TPM
  - attestation.KEYS_ESCROWED >= 1 per untampered TPM device
  - attestation_devices.SUCCESS == 1 per TPM device
`;
    const devices = (s: Scenario) => s.thresholds.map((t) => t.perDevice?.devices);
    // 60 devices: kvm 40, old 10 (v1), tpm 10 of which 5 have a TPM and 1 of those is tampered.
    expect(devices(parseScenario(text, 'x.yaml'))).toEqual([60, 10, 40, 1, 55, 4, 5]);
    // --devices 12: kvm 8, old 2, tpm 2 (1 TPM, tampered min(1, 1)).
    expect(devices(parseScenario(text, 'x.yaml', { devices: 12 }))).toEqual([12, 2, 8, 1, 11, 0, 1]);
  });
});

// Subjects whose count is a number of devices: a bound above the devices of its basis cannot be met.
const DEVICE_COUNTS = new Set(['onboarded.count', 'devices.total', ...['SUCCESS', 'NONCE_MISMATCH', 'NO_CERT_FOUND', 'QUOTE_FAILED', 'INVALID', 'TPM_DISABLED', 'TPM_RESET'].map((c) => `attestation_devices.${c}`)]);

function devicesOfApi(s: Scenario, api?: 'v1' | 'v2'): number {
  return s.groups.filter((g) => api === undefined || g.api === api).reduce((n, g) => n + g.count, 0);
}

function boundOf(s: Scenario, source: string): number {
  const t = s.thresholds.find((x) => x.source === source);
  if (!t) throw new Error(`${s.file} has no threshold "${source}"`);
  return t.perDevice ? perDeviceBound(t.value, t.perDevice.devices!) : t.value;
}

describe('shipped scenarios keep consistent threshold bounds under --devices', () => {
  const yamlIn = (dir: string): string[] => readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();
  const files = yamlIn('scenarios');
  // The benches' own scenarios (bench/overload-queue --scenario) are held to the same rules.
  const benchFiles = yamlIn('bench/scenarios');

  it('finds the shipped scenarios (every scenarios/*.yaml and bench/scenarios/*.yaml is checked below)', () => {
    expect(files).toEqual(expect.arrayContaining(['attestation.yaml', 'controller-outage.yaml', 'flaky-network.yaml', 'fleet-100k.yaml', 'lps-site.yaml', 'mixed-v1-v2.yaml', 'onboarding-storm.yaml', 'smoke.yaml', 'steady-state.yaml']));
    expect(benchFiles).toEqual(expect.arrayContaining(['slow-controller.yaml']));
  });

  for (const path of [...files.map((f) => `scenarios/${f}`), ...benchFiles.map((f) => `bench/scenarios/${f}`)]) {
    for (const devices of [undefined, 20, 7]) {
      it(`${path}${devices ? ` --devices ${devices}` : ''}`, () => {
        const s = loadScenario(path, devices ? { devices } : {});
        const total = totalDevices(s);
        if (devices) expect(total).toBe(devices);
        for (const t of s.thresholds) checkBound(s, t);
      });
    }
  }

  function checkBound(s: Scenario, t: ThresholdSpec): void {
    if (thresholdValueKind(t) !== 'count') return;
    const what = `${s.file}: ${t.source}`;
    const fleet = devicesOfApi(s, t.api);
    if (!t.perDevice) {
      // An absolute count does not follow --devices: only "none" (0) or "at least once" (1) may remain.
      expect(t.value, what).toBeLessThanOrEqual(1);
      return;
    }
    const n = t.perDevice.devices;
    expect(n, `${what}: basis resolved`).toBeDefined();
    expect(n!, what).toBeLessThanOrEqual(fleet);
    if (t.perDevice.kind === 'device' && t.perDevice.group === undefined) expect(n, what).toBe(fleet);
    const bound = perDeviceBound(t.value, n!);
    expect(bound, what).toBe(t.value * n!);
    if (t.op === '==') expect(Number.isInteger(bound), `${what}: an exact count is a whole number`).toBe(true);
    if (DEVICE_COUNTS.has(`${t.subject}.${t.stat}`) && t.op !== '<' && t.op !== '<=') {
      expect(bound, `${what}: no more devices than the ${fleet} there are`).toBeLessThanOrEqual(fleet);
    }
  }

  it('smoke --devices 20 asks for 20 registrations, not 50', () => {
    expect(boundOf(loadScenario('scenarios/smoke.yaml'), 'register.count >= 1 per device')).toBe(50);
    expect(boundOf(loadScenario('scenarios/smoke.yaml', { devices: 20 }), 'register.count >= 1 per device')).toBe(20);
  });

  it.each([undefined, 20, 7, 5])('attestation.yaml --devices %s: the exact outcomes follow the TPM plan of the scaled groups', (devices) => {
    const s = loadScenario('scenarios/attestation.yaml', devices ? { devices } : {});
    const plans = s.groups.map((g) => ({ g, plan: groupTpmPlan(g) }));
    const tampered = plans.reduce((n, p) => n + p.plan.tamperedDevices, 0);
    const withoutTpm = plans.reduce((n, p) => n + p.g.count - p.plan.tpmDevices, 0);
    const success = boundOf(s, 'attestation_devices.SUCCESS == 1 per untampered device');
    const failed = boundOf(s, 'attestation_devices.QUOTE_FAILED == 1 per tampered device');
    // Every device's last quote is answered SUCCESS or QUOTE_FAILED.
    expect(success + failed).toBe(totalDevices(s));
    expect(failed).toBe(tampered);
    expect(boundOf(s, 'attestation_devices.TPM_DISABLED == 1 per device without TPM')).toBe(withoutTpm);
    expect(boundOf(s, 'attestation_devices.TPM_RESET == 1 per device of reboot-wave')).toBe(s.groups.find((g) => g.name === 'reboot-wave')!.count);
    expect(boundOf(s, 'onboarded.count == 1 per untampered device')).toBe(success);
    if (devices === undefined) expect([success, failed, withoutTpm]).toEqual([33, 3, 10]); // the file's own table
  });

  it('mixed-v1-v2.yaml: the per-API device bounds add up to the fleet', () => {
    for (const devices of [undefined, 20, 7]) {
      const s = loadScenario('scenarios/mixed-v1-v2.yaml', devices ? { devices } : {});
      const v1 = boundOf(s, 'devices{api:v1}.total == 1 per device');
      const v2 = boundOf(s, 'devices{api:v2}.total == 1 per device');
      expect(v1 + v2).toBe(totalDevices(s));
      expect(boundOf(s, 'register{api:v1}.count == 1 per device')).toBe(v1);
      if (devices === undefined) expect([v1, v2]).toEqual([15, 25]);
    }
  });
});
