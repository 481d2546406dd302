// A catalogue of malformed scenario files (test/fixtures/bad-scenarios/), each refused with exactly
// one line naming the file, line, column, field and what was wrong (for a limit: the allowed
// range), and `evesim validate` ending 2 with that line. Checked through the library (no child
// process), so the whole catalogue takes well under a second. The older cases of
// scenario-errors.test.ts (fixtures/scenarios/) are not repeated here.

import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runValidate } from '../src/cli/validate-command.js';
import { loadScenario, parseScenario } from '../src/scenario/load-scenario.js';
import { ScenarioError } from '../src/scenario/scenario-error.js';

const DIR = 'test/fixtures/bad-scenarios';

/** Fixture (without .yaml) → the one error line after "FILE:". */
const EXPECTED: [string, string][] = [
  ["action-after-end", "6:9: timeline[0].at: is at or after the end of the run (duration 1m)"],
  ["action-without-at", "6:5: timeline[0]: missing required field \"at\""],
  ["api-v3", "5:10: groups[0].api: must be one of v1, v2 (got \"v3\") (did you mean \"v1\"?)"],
  ["app-log-lines", "7:25: groups[0].apps[0].logLinesPerSec: must be from 0 to 1,000 lines per second per app instance (got 5000)"],
  ["app-name-twice", "7:15: groups[0].apps[1].name: app name \"web\" is used twice in this group"],
  ["app-step-past-timer", "5:14: groups[0].appStep: must be at most 596h31m23.647s, the longest timer Node.js can set (about 24.8 days) (got \"1000h\")"],
  ["arrival-model-unknown", "2:19: arrival.model: must be one of all-at-once, uniform, poisson (got \"linear\")"],
  ["arrival-over-past-timer", "4:9: arrival.over: must be at most 596h31m23.647s, the longest timer Node.js can set (about 24.8 days) (got \"700h\")"],
  ["arrival-rate-negative", "2:34: arrival.rate: must be a rate such as 50/s, 3000/m or a number per second (got \"-5/s\")"],
  ["arrival-rate-too-fast", "2:34: arrival.rate: must be from 1 per 596h31m23.647s to 100,000/s (got \"1000000/s\"; for every device at once use model: all-at-once)"],
  ["arrival-rate-too-slow", "2:34: arrival.rate: must be from 1 per 596h31m23.647s to 100,000/s (got 1e-7)"],
  ["arrival-rate-unit", "2:34: arrival.rate: must be a rate such as 50/s, 3000/m or a number per second (got \"5/day\")"],
  ["arrival-rate-zero", "2:34: arrival.rate: must be a rate such as 50/s, 3000/m or a number per second (got 0)"],
  ["cellular-drops-past-timer", "6:23: groups[0].cellular.drops.every: must be at most 596h31m23.647s, the longest timer Node.js can set (about 24.8 days) (got \"1000h\")"],
  ["cellular-modems-9", "5:25: groups[0].cellular.modems: must be an integer from 0 to 8 (got 9)"],
  ["config-item-over-max", "6:30: groups[0].configItems[\"timer.config.interval\"]: must be from 5 to 86400 seconds; EVE rejects 100000 and keeps its default"],
  ["config-item-without-value", "6:5: timeline[0]: missing required field \"value\""],
  ["count-billion", "4:12: groups[0].count: must be from 1 to 10,000,000 devices (got 1000000000)"],
  ["count-fraction", "4:12: groups[0].count: must be an integer ≥ 1 (got 2.5)"],
  ["count-zero", "4:12: groups[0].count: must be an integer ≥ 1 (got 0)"],
  ["description-number", "2:14: description: must be string (got 5)"],
  ["duration-past-timer", "1:11: duration: must be at most 596h31m23.647s, the longest timer Node.js can set (about 24.8 days) (got \"100000h\")"],
  ["duration-units-order", "1:11: duration: must be a duration such as 500ms, 90s, 2m or 1h30m (got \"30s1m\")"],
  ["duration-zero", "1:11: duration: must be longer than 0s"],
  ["fleet-total", "2:1: groups: 12,000,000 devices in all; a fleet has at most 10,000,000"],
  ["flowlog-interval-10ms", "5:26: groups[0].flowlog.interval: must be from 1s to 596h31m23.647s (got \"10ms\"; EVE itself collects about every 120s)"],
  ["flowlog-interval-past-timer", "5:26: groups[0].flowlog.interval: must be at most 596h31m23.647s, the longest timer Node.js can set (about 24.8 days) (got \"1000h\")"],
  ["flowlog-interval-zero", "5:26: groups[0].flowlog.interval: must be longer than 0s"],
  ["flows-per-message", "7:26: groups[0].apps[0].flowsPerMessage: must be from 0 to 10,000 flow records per message (got 1000000)"],
  ["gnss-jitter", "6:56: groups[0].gnss.site.jitter: must be from 0 to 100,000 metres (got 10000000)"],
  ["gnss-outages-every-zero", "7:25: groups[0].gnss.outages.every: must be longer than 0s"],
  ["gnss-site-and-route", "6:7: groups[0].gnss: gnss needs either \"site\" (a fixed place) or \"route\" (a vehicle), not both"],
  ["gnss-speed-supersonic", "6:98: groups[0].gnss.route.speed: must be from 0 to 1000km/h (277.8m/s) (got \"5000km/h\")"],
  ["gnss-speed-word", "6:98: groups[0].gnss.route.speed: \"fast\" is not a speed; expected e.g. 50km/h or 13.9m/s"],
  ["graceful-stop-no-unit", "2:15: gracefulStop: must be a duration such as 500ms, 90s, 2m or 1h30m (got 15)"],
  ["graceful-stop-past-timer", "2:15: gracefulStop: must be at most 596h31m23.647s, the longest timer Node.js can set (about 24.8 days) (got \"600h\")"],
  ["group-name-space", "3:11: groups[0].name: must be a name of letters, digits, \"_\", \".\" and \"-\" (got \"my group\")"],
  ["group-name-twice", "5:11: groups[1].name: group name \"kvm\" is used twice"],
  ["groups-empty", "2:9: groups: must be a list of at least one device group (got [])"],
  ["hardware-memory-zero", "5:27: groups[0].hardware.memoryMB: must be an integer ≥ 1 (got 0)"],
  ["hardware-ncpu", "5:23: groups[0].hardware.ncpu: must be from 1 to 1,024 CPUs (got 5000)"],
  ["hardware-storage-huge", "5:28: groups[0].hardware.storageMB: must be from 1 to 1,073,741,824 MB (1 PiB) (got 2000000000000)"],
  ["latitude-out-of-range", "6:25: groups[0].gnss.site.latitude: must be degrees from -90 to 90 (got 91)"],
  ["log-format-unknown", "5:21: groups[0].logs.format: must be one of newlogs, legacy (got \"json\")"],
  ["log-lines-billion", "6:20: groups[0].logs.linesPerSec: must be from 0 to 1,000 lines per second per device (got 1000000000)"],
  ["log-lines-negative", "5:26: groups[0].logs.linesPerSec: must be a number ≥ 0 (got -1)"],
  ["lps-action-unknown-site", "11:11: timeline[0].site: unknown site \"plnt\" (did you mean \"plant\"?); sites are plant"],
  ["outage-longer-than-interval", "6:36: groups[0].cellular.drops.lasting: must be shorter than \"every\" (1m)"],
  ["root-is-a-list", "1:1: must be a map of scenario fields (name, duration, groups, ...) (got [{\"duration\":\"1m\"}])"],
  ["seed-negative", "2:7: seed: must be an integer from 0 to 4294967295 (got -1)"],
  ["seed-too-large", "2:7: seed: must be an integer from 0 to 4294967295 (got 4294967296)"],
  ["site-name-twice", "10:11: sites[1].name: site name \"plant\" is used twice"],
  ["site-share-over-100", "8:12: sites[0].share: share must be more than 0 and at most 1 (100%), got 150%"],
  ["site-unknown-group", "7:14: sites[0].groups[0]: unknown group \"kvn\" (did you mean \"kvm\"?); groups are kvm"],
  ["target-file-missing", "4:11: target.rootCa: file \"no-such-root.pem\" does not exist (paths are relative to the scenario file)"],
  ["target-ftp-url", "3:8: target.url: must be an http:// or https:// URL (got \"ftp://controller.example\")"],
  ["target-missing-root-ca", "3:3: target: missing required field \"rootCa\" (it may be left out only with insecureSkipVerify: true)"],
  ["threshold-bad-operator", "6:5: thresholds[0]: \"config.p99 ~ 200ms\" is not a threshold; expected <subject>.<stat> <op> <value>, e.g. \"config.p99 < 200ms\""],
  ["threshold-map-without-expression", "6:5: thresholds[0]: missing required field \"threshold\""],
  ["threshold-unknown-group", "6:5: thresholds[0]: \"register.count >= 1 per device of kvn\": unknown group \"kvn\" (did you mean \"kvm\"?); groups are kvm"],
  ["tpm-share-1-5", "5:15: groups[0].tpmShare: must be a share of the group from 0 to 1, e.g. 0.8 (got 1.5)"],
  ["unknown-action", "7:13: timeline[0].action: unknown action \"rebot\" (did you mean \"reboot\"?); expected one of maintenance, config-item, app-activate, reboot, controller-epoch, local-profile, radio-silence, lps-throttle, app-command, device-command, power-on, partition, blackhole, latency, loss, reset, dns-failure, tls-failure, clock-skew, power-loss, tpm-reset"],
  ["unknown-top-level-field", "2:1: gracefullStop: unknown field \"gracefullStop\" (did you mean \"gracefulStop\"?); expected one of name, description, seed, duration, gracefulStop, target, groups, arrival, timeline, thresholds, attestation, sites"],
  ["yaml-tab-indent", "3:1: YAML syntax: Tabs are not allowed as indentation"],];

afterEach(() => vi.restoreAllMocks());

function errorLines(file: string): string[] {
  try {
    loadScenario(file);
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioError);
    return (e as ScenarioError).message.split('\n');
  }
  throw new Error(`${file} loaded, but it is in the catalogue of bad scenarios`);
}

describe('bad scenario files: one line each, naming file, line, field and the allowed values', () => {
  it('the catalogue has at least 50 files and every file has its expected message', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -'.yaml'.length)).sort();
    expect(files.length).toBeGreaterThanOrEqual(50);
    expect(EXPECTED.map(([f]) => f).sort()).toEqual(files);
  });

  it.each(EXPECTED)('%s', (name, expected) => {
    const file = `${DIR}/${name}.yaml`;
    expect(errorLines(file)).toEqual([`${file}:${expected}`]);
    const printed: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((m: unknown) => void printed.push(String(m)));
    vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(runValidate(file)).toBe(2);
    expect(printed).toEqual([`${file}:${expected}`]);
  });
});

describe('what the limits and rules still let through', () => {
  it('a real-controller target without rootCa, with insecureSkipVerify: true (a warning, no error)', () => {
    const text = 'duration: 1m\ntarget:\n  url: https://127.0.0.1:8443\n  onboardCert: wrong-type.yaml\n  onboardKey: wrong-type.yaml\n  insecureSkipVerify: true\ngroups: [{ name: a, count: 1 }]\n';
    const s = parseScenario(text, 'insecure.yaml', {}, { baseDir: 'test/fixtures/scenarios' });
    expect(s.target).toMatchObject({ kind: 'external', insecureSkipVerify: true });
    expect(s.target.kind === 'external' && s.target.rootCaFile).toBe(undefined);
    expect(s.warnings).toEqual(['insecure.yaml:6:3: target.insecureSkipVerify: TLS verification of the controller is OFF']);
  });

  it('values at the edges of the limits load', () => {
    const text =
      'duration: 596h31m23s\ngracefulStop: 596h31m23.647s\narrival: { model: uniform, rate: 100000/s }\n' +
      'groups:\n  - name: a\n    count: 10000000\n    logs: { linesPerSec: 1000 }\n    flowlog: { interval: 1s }\n    apps: [{ name: w, logLinesPerSec: 1000, flowsPerMessage: 10000 }]\n';
    const s = parseScenario(text, 'edges.yaml');
    expect(s.durationMs).toBe(2_147_483_000);
    expect(s.gracefulStopMs).toBe(2 ** 31 - 1);
    expect(s.groups[0]!.count).toBe(10_000_000);
  });
});
