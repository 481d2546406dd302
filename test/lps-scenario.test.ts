// The local profile server parts of scenarios (sites, gnss, cellular, LPS timeline actions and
// thresholds), the runner's sites (group → LPS address and token, timeline actions through the
// admin API, command records) and the summary / threshold figures made from them.

import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadScenario, parseScenario } from '../src/scenario/load-scenario.js';
import { ScenarioError } from '../src/scenario/scenario-error.js';
import { parseThreshold } from '../src/scenario/parse-threshold.js';
import { inLpsShare } from '../src/scenario/lps/lps-share.js';
import { LpsSites, type EmbeddedLpsOptions } from '../src/runner/lps/lps-sites.js';
import { buildLpsSummary, commandLatency } from '../src/runner/lps/lps-summary.js';
import { evaluateThresholds } from '../src/runner/thresholds.js';
import { lpsReportLines } from '../src/runner/lps/lps-report.js';
import type { MeasuredRun } from '../src/runner/summary-json.js';
import { createLpsServer, type LpsServer } from '../src/servers/lps/lps-server.js';
import { lpsServerFor } from '../src/servers/controller/lps-config.js';
import { DEFAULT_GROUP, parseFleetSpec } from '../src/servers/controller/fleet-spec.js';
import { behaviourOf } from '../src/fleet/fleet-layout.js';
import { DEFAULT_CELLULAR } from '../src/device/radio/device-radios.js';
import { decodeRecordedBody } from '../src/transport/record-decode.js';
import { Msg } from '../src/protocol/messages.js';

function errorsOf(text: string): string[] {
  try {
    parseScenario(text, 's.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioError);
    return (e as ScenarioError).errors.map((i) => `${i.line}:${i.path}: ${i.message}`);
  }
  throw new Error('expected a ScenarioError');
}

const BASE = `
duration: 2m
groups:
  - name: a
    count: 4
    apps: [{ name: web }, { name: db }]
  - name: b
    count: 2
    apps: [{ name: web }]
`;

describe('scenario: sites, radios, GNSS, LPS actions and thresholds', () => {
  it('loads scenarios/lps-site.yaml into sites, models and actions', () => {
    const s = loadScenario('scenarios/lps-site.yaml');
    expect(s.sites!.map((x) => [x.name, x.groups, x.throttleRule, x.share])).toEqual([
      ['site-a', ['plant-a'], 'eve', 1],
      ['site-b', ['fleet-b'], 'spec', 1],
      ['site-c', ['depot'], 'eve', 1],
    ]);
    expect(s.sites![2]!.radioSilence).toBe(false);
    const fleet = s.groups.find((g) => g.name === 'fleet-b')!;
    expect(fleet.gnss!.route!.speedMps).toBeCloseTo(50 / 3.6, 6);
    expect(fleet.gnss!.outages).toEqual({ meanIntervalS: 600, meanDurationS: 30 });
    expect(fleet.cellular).toEqual({ modems: 1, simSlots: 2, operator: 'vodafone-de', roamingOn: 'o2-de', drops: { meanIntervalS: 3600, meanDurationS: 40 } });
    expect(s.groups[0]!.gnss!.site).toEqual({ latitude: 48.1351, longitude: 11.582, altitude: 520, jitterM: 300 });
    expect(s.timeline.map((t) => t.action)).toEqual([
      'local-profile', 'radio-silence', 'app-command', 'app-command', 'device-command', 'radio-silence', 'local-profile', 'app-command', 'app-command',
    ]);
    expect(s.timeline[3]).toEqual({ atMs: 70_000, action: 'app-command', site: 'site-c', app: 'web', command: 'restart' });
    // A group without `cellular` still gets a modem (fleet-layout), one with modems: 0 none.
    expect(behaviourOf(s.groups[2]!).cellular).toEqual(DEFAULT_CELLULAR);
  });

  it('parses LPS thresholds, including dotted endpoint subjects', () => {
    expect(parseThreshold('lps_command.p99 < 2m')).toMatchObject({ subject: 'lps_command', stat: 'p99', value: 120_000 });
    expect(parseThreshold('lps_command.acked_ratio == 1')).toMatchObject({ subject: 'lps_command', stat: 'acked_ratio', value: 1 });
    expect(parseThreshold('lps.radio.p99 < 100ms')).toMatchObject({ subject: 'lps.radio', stat: 'p99', value: 100 });
    expect(parseThreshold('lps_token.rejected == 0')).toMatchObject({ subject: 'lps_token', stat: 'rejected' });
    expect(parseThreshold('config.p99 < 1s')).toMatchObject({ subject: 'config', stat: 'p99' });
    expect(() => parseThreshold('lps_comand.p99 < 2m')).toThrow(/did you mean "lps_command"/);
    expect(() => parseThreshold('lps.radio.acked < 2')).toThrow(/"lps.radio" has no stat "acked"/);
  });

  it('reports LPS mistakes with their place', () => {
    const errors = errorsOf(`${BASE}
    gnss: { site: { latitude: 1, longitude: 2 }, route: { waypoints: [{ latitude: 1, longitude: 2 }, { latitude: 1, longitude: 3 }], speed: fast } }
    cellular: { operator: telekom-xx, drops: { every: 10s, lasting: 20s } }
sites:
  - { name: s1, groups: [a, c] }
  - { name: s1, groups: [b] }
  - { name: s2, groups: [a], share: 150% }
timeline:
  - { at: 10s, action: local-profile, site: nowhere, profile: x }
  - { at: 20s, action: app-command, app: web, command: restart }
  - { at: 30s, action: app-command, group: a, app: cache, command: restart }
  - { at: 40s, action: device-command, group: b, command: reboot }
  - { at: 50s, action: device-command, site: s1, command: explode }
`);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/groups\[1\]\.gnss: gnss needs either "site" .* not both/),
        expect.stringMatching(/groups\[1\]\.gnss\.route\.speed: "fast" is not a speed/),
        expect.stringMatching(/groups\[1\]\.cellular\.operator: must be one of telekom-de/),
        expect.stringMatching(/groups\[1\]\.cellular\.drops\.lasting: must be shorter than "every"/),
        expect.stringMatching(/sites\[0\]\.groups\[1\]: unknown group "c"/),
        expect.stringMatching(/sites\[1\]\.name: site name "s1" is used twice/),
        expect.stringMatching(/sites\[2\]\.groups\[0\]: group "a" is already served by site "s1"/),
        expect.stringMatching(/sites\[2\]\.share: share must be more than 0 and at most 1/),
        expect.stringMatching(/timeline\[0\]\.site: unknown site "nowhere"/),
        expect.stringMatching(/timeline\[1\]: app-command needs either "site" .* not neither/),
        expect.stringMatching(/timeline\[2\]\.app: unknown app "cache" in group "a"/),
        expect.stringMatching(/timeline\[3\]\.group: group "b" is not served by any site/),
        expect.stringMatching(/timeline\[4\]\.command: must be one of shutdown, poweroff, reboot, collect-info/),
      ]),
    );
    // Every message carries a line number.
    for (const e of errors) expect(Number(e.split(':')[0])).toBeGreaterThan(0);
  });

  it('power-on is a device-side action; a bad action name lists the LPS actions', () => {
    const s = parseScenario(`${BASE}timeline:\n  - { at: 10s, action: power-on, group: b }\n`, 's.yaml');
    expect(s.timeline).toEqual([{ atMs: 10_000, action: 'power-on', group: 'b' }]);
    expect(errorsOf(`${BASE}timeline:\n  - { at: 10s, action: radio-silenc, site: x, enabled: true }\n`)[0]).toMatch(
      /unknown action "radio-silenc" \(did you mean "radio-silence"\?\).*local-profile, radio-silence, lps-throttle, app-command, device-command, power-on/,
    );
  });
});

describe('controller side: pointing devices at their LPS', () => {
  const group = { ...DEFAULT_GROUP, name: 'g', lps: { port: 41000, token: 'tok', share: 1 } };
  const uuid = '0b9c3f2e-1d2a-4b3c-8d4e-5f6a7b8c9d0e';

  it('gives every device of a served group its own LPS address and the site token', () => {
    expect(lpsServerFor(group, { uuid, serial: 'S1' })).toEqual({ address: `${uuid}.lps.invalid:41000`, token: 'tok' });
    expect(lpsServerFor({ ...DEFAULT_GROUP, name: 'h' }, { uuid, serial: 'S1' })).toEqual({ address: '', token: '' });
  });

  it('serves a share of a group by serial, the same way the runner picks command targets', () => {
    const serials = Array.from({ length: 2000 }, (_, i) => `SER${i}`);
    const served = serials.filter((s) => lpsServerFor({ ...group, lps: { ...group.lps, share: 0.25 } }, { uuid, serial: s }).address !== '');
    expect(served.length).toBeGreaterThan(400);
    expect(served.length).toBeLessThan(600);
    expect(served.every((s) => inLpsShare(s, 0.25))).toBe(true);
  });

  it('checks GroupSpec.lps in PUT /admin/fleet', () => {
    const body = (lps: unknown) => ({ groups: [{ name: 'g', lps }], devices: [] });
    expect(parseFleetSpec(body({ port: 8888, token: 't' })).groups[0]!.lps).toEqual({ port: 8888, token: 't', share: 1 });
    expect(() => parseFleetSpec(body({ port: 0, token: 't' }))).toThrow(/groups\[0\]\.lps\.port/);
    expect(() => parseFleetSpec(body({ port: 8888, token: 't', share: 2 }))).toThrow(/groups\[0\]\.lps\.share/);
    expect(() => parseFleetSpec(body({ port: 8888, token: 't', host: 'x' }))).toThrow(/groups\[0\]\.lps\.host/);
  });
});

describe('runner: sites, their timeline actions and figures', () => {
  const dir = mkdtempSync(join(tmpdir(), 'evesim-lps-sites-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const servers: LpsServer[] = [];
  const start = async (o: EmbeddedLpsOptions) => {
    const s = await createLpsServer(o);
    servers.push(s);
    return { address: s.address, adminUrl: s.adminUrl, token: s.token, stop: () => s.stop() };
  };

  it('starts one LPS per site, points groups at it and applies actions through the admin API', async () => {
    const s = parseScenario(
      `${BASE}sites:
  - { name: s1, groups: [a], share: 50%, profile: normal, radioSilence: false }
  - { name: s2, groups: [b], tokenMismatch: true }
timeline:
  - { at: 1s, action: local-profile, site: s1, profile: maintenance }
  - { at: 2s, action: app-command, group: a, app: db, command: restart }
  - { at: 3s, action: device-command, site: s2, command: reboot }
  - { at: 4s, action: radio-silence, site: s1, enabled: true }
  - { at: 5s, action: lps-throttle, site: s2, endpoints: [location] }
`,
      's.yaml',
    );
    const sites = await LpsSites.start(s.sites!, dir, start);
    try {
      const groups = sites.groups(s.groups);
      const [s1, s2] = servers;
      expect(groups[0]!.lps).toEqual({ port: Number(s1!.address.split(':')[1]), token: s1!.token, share: 0.5 });
      expect(groups[1]!.lps!.token).toBe(`not-${s2!.token}`);
      expect(s1!.site.profile).toBe('normal');
      // Devices as the controller lists them: only the served share of group a gets the command.
      const registered = Array.from({ length: 40 }, (_, i) => ({ uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, serial: `SN${i}`, group: i < 30 ? 'a' : 'b' }));
      const directory = { devices: async () => ({ total: registered.length, devices: registered }) };
      for (const a of s.timeline) if (a.action !== 'power-on') await sites.apply(a as never, directory);
      expect(s1!.site.profile).toBe('maintenance');
      expect(s1!.site.radioSilence).toBe(true);
      expect(s2!.site.throttledEndpoints()).toEqual(['location']);
      const commands = await sites.commands();
      const restarts = commands.filter((c) => c.command === 'restart');
      const servedA = registered.filter((d) => d.group === 'a' && inLpsShare(d.serial, 0.5)).map((d) => d.uuid);
      expect(restarts.map((c) => c.device).sort()).toEqual(servedA.sort());
      expect(restarts.every((c) => c.site === 's1' && c.completedAt === null)).toBe(true);
      expect(commands.filter((c) => c.command === 'reboot').map((c) => c.device).sort()).toEqual(registered.filter((d) => d.group === 'b').map((d) => d.uuid).sort());
    } finally {
      await sites.stop();
    }
  });

  it('command latency, LPS thresholds and report lines from the command records', () => {
    const c = (command: string, issuedAt: number, completedAt: number | null) => ({ site: 's', device: 'd', kind: 'app' as const, command, timestamp: issuedAt, issuedAt, completedAt });
    const records = [c('restart', 0, 1000), c('restart', 0, 3000), c('restart', 0, 2000), c('reboot', 0, 9000), c('reboot', 0, null)];
    const lat = commandLatency(records);
    expect(lat).toMatchObject({ issued: 5, acked: 4, ackedRatio: 0.8, p50_ms: 2000, p99_ms: 9000, max_ms: 9000 });
    expect(lat.byCommand.restart).toMatchObject({ issued: 3, acked: 3, p50_ms: 2000, max_ms: 3000 });
    const figures = { agent: { appCommandsAccepted: 3, appCommandsSkipped: 0, appCommandsCompleted: 3, deviceCommandsAccepted: 1, deviceCommandsRefused: 0, radioChangesApplied: 0, radioChangesFailed: 0, radioPostsSuppressed: 0, locationPostsThrottled: 0 }, tokenRejected: { 'lps.devinfo': 2 }, radio: { connected: 3 }, gnss: {} };
    const lps = buildLpsSummary([{ name: 's', address: '127.0.0.1:1', groups: ['a'] }], records, figures);
    const run = { endpoints: {}, lps } as unknown as MeasuredRun;
    const results = evaluateThresholds(['lps_command.acked_ratio == 1', 'lps_command.p99 < 10s', 'lps_command.count >= 5', 'lps_token.rejected == 0'].map(parseThreshold), run);
    expect(results.map((r) => [r.passed, r.actual])).toEqual([[false, 0.8], [true, 9000], [true, 5], [false, 2]]);
    const none = evaluateThresholds([parseThreshold('lps_command.p99 < 10s')], { endpoints: {} } as unknown as MeasuredRun)[0]!;
    expect(none.passed).toBe(false);
    expect(none.detail).toMatch(/cannot check: the run had no local profile server/);
    const lines = lpsReportLines(lps).join('\n');
    expect(lines).toContain('5 issued, 4 acknowledged (80%)');
    expect(lines).toContain('2 answers refused for a wrong server_token (lps.devinfo 2)');
    expect(lines).toContain('radios     connected 3; GNSS none');
  });
});

describe('recorded LPS exchanges', () => {
  it('decode as bare LPS messages, per direction', () => {
    const req = decodeRecordedBody('lps.devinfo', 'request', Msg.LocalDevInfo.encode({ device_uuid: 'u', last_cmd_timestamp: 7 }));
    expect(req).toEqual({ kind: 'message', message: 'org.lfedge.eve.profile.LocalDevInfo', value: { device_uuid: 'u', last_cmd_timestamp: '7' } });
    const res = decodeRecordedBody('lps.local_profile', 'response', Msg.LocalProfile.encode({ local_profile: 'p', server_token: 't' }), 200);
    expect(res).toMatchObject({ kind: 'message', value: { local_profile: 'p', server_token: 't' } });
    expect(decodeRecordedBody('lps.location', 'response', new Uint8Array(0), 200)).toEqual({ kind: 'empty' });
  });
});
