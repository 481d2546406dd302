// `evesim run` checks its URL flag before anything starts: a bad --controller is exit 2 with a
// one-line reason, not identities made and workers failing (exit 1).

import { afterEach, describe, expect, it, vi } from 'vitest';
import { controllerUrlProblem, metricsHostArg, runRun } from '../src/cli/run-command.js';

afterEach(() => vi.restoreAllMocks());

describe('evesim run --controller', () => {
  it('names what is wrong with a controller URL', () => {
    expect(controllerUrlProblem('not-a-url')).toBe('"not-a-url" is not a URL; expected e.g. https://127.0.0.1:8443');
    expect(controllerUrlProblem('ftp://controller.example')).toBe('must be an http:// or https:// URL (got "ftp://controller.example")');
    expect(controllerUrlProblem('https://127.0.0.1:8443')).toBeUndefined();
    expect(controllerUrlProblem('https://controller.example')).toBeUndefined();
  });

  it('exits 2 with that reason before loading the scenario or making identities', async () => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((m: unknown) => void errors.push(String(m)));
    const code = await runRun({
      scenario: 'no-such-scenario.yaml', // never opened: the flag is checked first
      controller: 'not-a-url',
      rootCa: 'root.pem',
      onboardCert: 'onboard.cert.pem',
      onboardKey: 'onboard.key.pem',
      insecureSkipVerify: false,
      quiet: true,
    });
    expect(code).toBe(2);
    expect(errors).toEqual(['evesim: --controller: "not-a-url" is not a URL; expected e.g. https://127.0.0.1:8443']);
  });
});

describe('evesim run --metrics-linger', () => {
  it('exits 2 naming the flag when it is not a duration, before loading the scenario', async () => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((m: unknown) => void errors.push(String(m)));
    const code = await runRun({ scenario: 'no-such-scenario.yaml', metricsLinger: 'soon', insecureSkipVerify: false, quiet: true });
    expect(code).toBe(2);
    expect(errors).toEqual(['evesim: --metrics-linger: "soon" is not a duration (examples: 90s, 2m, 1h30m)']);
  });
});

describe('evesim run --metrics-host', () => {
  it('takes the flag, else $EVESIM_METRICS_HOST (0.0.0.0 in the container image), else leaves the 127.0.0.1 default', () => {
    expect(metricsHostArg('10.0.0.5', { EVESIM_METRICS_HOST: '0.0.0.0' })).toBe('10.0.0.5');
    expect(metricsHostArg(undefined, { EVESIM_METRICS_HOST: '0.0.0.0' })).toBe('0.0.0.0');
    expect(metricsHostArg(undefined, { EVESIM_METRICS_HOST: '' })).toBeUndefined();
    expect(metricsHostArg(undefined, {})).toBeUndefined();
  });
});

describe('evesim run --fault', () => {
  it('exits 2 naming the flag and the field before loading the scenario', async () => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((m: unknown) => void errors.push(String(m)));
    const code = await runRun({
      scenario: 'no-such-scenario.yaml', // never opened: the flags are checked first
      insecureSkipVerify: false,
      quiet: true,
      fault: ['partition at=1m for=60s', 'latency share=30% at=2m jitter=100ms'],
    });
    expect(code).toBe(2);
    expect(errors).toEqual([`evesim: --fault 'latency share=30% at=2m jitter=100ms': delay is missing: the added delay, e.g. delay=300ms`]);
  });

  it('a fault naming a group the scenario lacks is exit 2 with the file named', async () => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((m: unknown) => void errors.push(String(m)));
    vi.spyOn(process.stderr, 'write').mockImplementation((m: unknown) => errors.push(String(m)) > 0);
    const code = await runRun({ scenario: 'scenarios/smoke.yaml', insecureSkipVerify: false, quiet: true, dryRun: true, fault: 'partition group=nope at=10s' });
    expect(code).toBe(2);
    expect(errors.join('\n')).toContain('scenarios/smoke.yaml: --fault: partition at 10s: unknown group "nope"; groups are');
  });
});
