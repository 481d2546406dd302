// Bad scenario files: every error names FILE:LINE:COLUMN, the field path and what was wrong.

import { describe, expect, it } from 'vitest';
import { loadScenario, parseScenario } from '../src/scenario/load-scenario.js';
import { ScenarioError } from '../src/scenario/scenario-error.js';

const FIX = 'test/fixtures/scenarios';

function errorsOf(load: () => unknown): string[] {
  try {
    load();
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioError);
    return (e as ScenarioError).message.split('\n');
  }
  throw new Error('expected a ScenarioError, but the scenario loaded');
}

describe('scenario errors name file, line, column and field', () => {
  it('wrong type', () => {
    expect(errorsOf(() => loadScenario(`${FIX}/wrong-type.yaml`))).toEqual([
      `${FIX}/wrong-type.yaml:5:12: groups[0].count: must be an integer ≥ 1 (got "ten")`,
    ]);
  });

  it('unknown (misspelt) field points at the key and suggests the right one', () => {
    expect(errorsOf(() => loadScenario(`${FIX}/unknown-field.yaml`))).toEqual([
      `${FIX}/unknown-field.yaml:5:5: groups[0].eveVersoin: unknown field "eveVersoin" (did you mean "eveVersion"?); ` +
        'expected one of name, count, api, connection, v1Config, eveVersion, preRegistered, logs, flowlog, apps, configItems, globalProfile, hardware, appStep, firmwareVersion, tpm, tpmShare, tampered, gnss, cellular',
    ]);
  });

  it('bad durations, including a bare number without unit', () => {
    expect(errorsOf(() => loadScenario(`${FIX}/bad-duration.yaml`))).toEqual([
      `${FIX}/bad-duration.yaml:1:11: duration: must be a duration such as 500ms, 90s, 2m or 1h30m (got "5 minutes")`,
      `${FIX}/bad-duration.yaml:6:17: groups[0].flowlog.interval: must be a duration such as 500ms, 90s, 2m or 1h30m (got 120)`,
    ]);
  });

  it('bad thresholds, each with the parser reason', () => {
    expect(errorsOf(() => loadScenario(`${FIX}/bad-threshold.yaml`))).toEqual([
      `${FIX}/bad-threshold.yaml:7:5: thresholds[1]: unknown threshold subject "confg" (did you mean "config"?); ` +
        'expected an endpoint (ping, certs, register, uuid, attest, config, info, metrics, logs, newlogs, applogs, appnewlogs, flowlog), ' +
        'an LPS endpoint (lps.radio, ...), all, errors, expected, unfinished, onboarded, onboarding, devices, undelivered, findings, loop_lag, memory, attestation, attestation_devices, lps_command or lps_token',
      `${FIX}/bad-threshold.yaml:8:5: thresholds[2]: config.p99 is a latency: "200" has no unit; expected a duration such as 500ms, 90s, 2m or 1h30m`,
    ]);
  });

  it('unknown group and unknown app in the timeline', () => {
    expect(errorsOf(() => loadScenario(`${FIX}/unknown-timeline-group.yaml`))).toEqual([
      `${FIX}/unknown-timeline-group.yaml:10:12: timeline[0].group: unknown group "kvn" (did you mean "kvm"?); groups are kvm`,
      `${FIX}/unknown-timeline-group.yaml:14:10: timeline[1].app: unknown app "db" in group "kvm"; apps are web`,
    ]);
  });

  it('negative count', () => {
    expect(errorsOf(() => loadScenario(`${FIX}/negative-count.yaml`))).toEqual([
      `${FIX}/negative-count.yaml:4:12: groups[0].count: must be an integer ≥ 1 (got -5)`,
    ]);
  });

  it('YAML syntax error names the line of the unclosed bracket', () => {
    expect(errorsOf(() => loadScenario(`${FIX}/yaml-syntax.yaml`))).toEqual([
      `${FIX}/yaml-syntax.yaml:5:11: YAML syntax: this [ is never closed (noticed at line 6, column 1)`,
    ]);
  });

  it('other YAML syntax errors keep the parser position', () => {
    const e = errorsOf(() => parseScenario('duration: 1m\nduration: 2m\n', 'dup.yaml'));
    expect(e).toEqual(['dup.yaml:2:1: YAML syntax: Map keys must be unique']);
  });

  it('EVE config items out of range, non-numeric timers, bad booleans', () => {
    expect(errorsOf(() => loadScenario(`${FIX}/bad-config-item.yaml`))).toEqual([
      `${FIX}/bad-config-item.yaml:6:30: groups[0].configItems["timer.config.interval"]: must be from 5 to 86400 seconds; EVE rejects 1 and keeps its default`,
      `${FIX}/bad-config-item.yaml:7:30: groups[0].configItems["timer.metric.interval"]: must be a whole number of seconds (got "ten")`,
      `${FIX}/bad-config-item.yaml:8:32: groups[0].configItems["newlog.allow.fastupload"]: must be true or false (got "yes please")`,
    ]);
  });

  it('collects every error of a file, in file order, schema and semantic alike', () => {
    const err = (() => {
      try {
        loadScenario(`${FIX}/many-errors.yaml`);
      } catch (e) {
        return e as ScenarioError;
      }
      throw new Error('loaded');
    })();
    expect(err.errors.map((i) => [i.line, i.column, i.path])).toEqual([
      [3, 7, 'seed'],
      [6, 12, 'groups[0].count'],
      [7, 21, 'groups[0].logs.format'],
      [8, 11, 'groups[1].name'],
      [10, 34, 'arrival.rate'],
      [12, 11, 'timeline[0].at'],
      [13, 23, 'timeline[1].action'],
    ]);
    expect(err.errors[0]).toEqual({
      file: `${FIX}/many-errors.yaml`,
      line: 3,
      column: 7,
      path: 'seed',
      message: 'must be an integer from 0 to 4294967295 (got 1.5)',
    });
    expect(err.errors[3].message).toBe('group name "kvm" is used twice');
    expect(err.errors[5].message).toBe('is at or after the end of the run (duration 1m)');
    expect(err.errors[6].message).toBe(
      'unknown action "shutdown"; expected one of maintenance, config-item, app-activate, reboot, controller-epoch, local-profile, radio-silence, lps-throttle, app-command, device-command, power-on, partition, blackhole, latency, loss, reset, dns-failure, tls-failure, clock-skew, power-loss, tpm-reset',
    );
  });

  it('missing required fields point at the enclosing map', () => {
    const e = errorsOf(() => parseScenario('name: x\ngroups:\n  - name: a\n', 'req.yaml'));
    expect(e).toEqual([
      'req.yaml:1:1: missing required field "duration"',
      'req.yaml:3:5: groups[0]: missing required field "count"',
    ]);
  });

  it('arrival needs exactly one of rate or over, and all-at-once neither', () => {
    const base = 'duration: 1m\ngroups: [{name: a, count: 1}]\n';
    expect(errorsOf(() => parseScenario(`${base}arrival: {model: poisson}\n`, 'a.yaml'))).toEqual([
      'a.yaml:3:10: arrival: model poisson needs rate (e.g. 50/s) or over (e.g. 10s)',
    ]);
    expect(errorsOf(() => parseScenario(`${base}arrival: {model: uniform, rate: 5/s, over: 10s}\n`, 'a.yaml'))).toEqual([
      'a.yaml:3:38: arrival.over: give either rate or over, not both',
    ]);
    expect(errorsOf(() => parseScenario(`${base}arrival: {model: all-at-once, rate: 5/s}\n`, 'a.yaml'))).toEqual([
      'a.yaml:3:31: arrival.rate: has no meaning with model all-at-once (every device is due at 0s)',
    ]);
  });

  it('external target: bad URL and missing certificate files', () => {
    const text = [
      'duration: 1m',
      'groups: [{name: a, count: 1}]',
      'target:',
      '  url: ftp://127.0.0.1',
      '  rootCa: no-such-root.pem',
      '  onboardCert: no-such-cert.pem',
      '  onboardKey: no-such-key.pem',
      '',
    ].join('\n');
    expect(errorsOf(() => parseScenario(text, 't.yaml', {}, { baseDir: FIX }))).toEqual([
      't.yaml:4:8: target.url: must be an http:// or https:// URL (got "ftp://127.0.0.1")',
      't.yaml:5:11: target.rootCa: file "no-such-root.pem" does not exist (paths are relative to the scenario file)',
      't.yaml:6:16: target.onboardCert: file "no-such-cert.pem" does not exist (paths are relative to the scenario file)',
      't.yaml:7:15: target.onboardKey: file "no-such-key.pem" does not exist (paths are relative to the scenario file)',
    ]);
  });

  it('a wrong target string', () => {
    expect(errorsOf(() => parseScenario('duration: 1m\ngroups: [{name: a, count: 1}]\ntarget: embeded\n', 't.yaml'))).toEqual([
      't.yaml:3:9: target: must be "embedded" or a map with url, rootCa, onboardCert and onboardKey (got "embeded")',
    ]);
  });

  it('an unreadable file and an empty file', () => {
    expect(errorsOf(() => loadScenario(`${FIX}/does-not-exist.yaml`))).toEqual([
      `${FIX}/does-not-exist.yaml: cannot read the file (ENOENT)`,
    ]);
    expect(errorsOf(() => parseScenario('# nothing\n', 'empty.yaml'))).toEqual([
      'empty.yaml:1:1: the file is empty; a scenario needs at least duration and groups',
    ]);
  });

  it('errors behind a YAML merge key point at where the value was written', () => {
    const text = [
      'duration: 1m',
      'x-defaults: &d',
      '  count: zero',
      'groups:',
      '  - <<: *d',
      '    name: a',
      '',
    ].join('\n');
    const e = errorsOf(() => parseScenario(text, 'm.yaml'));
    expect(e).toContain('m.yaml:3:10: groups[0].count: must be an integer ≥ 1 (got "zero")');
  });
});
