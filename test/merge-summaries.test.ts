// `evesim merge`: a seeded stream of requests over a 42-device fleet, recorded by one process and
// by 2, 3 and 7 shards (devices split by index, two workers per shard sending deltas as a run
// does); each shard's summary goes through its JSON text and the merge must give exactly the
// figures of the single process, thresholds judged on the merged fleet, refusals named.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MetricRecorder } from '../src/fleet/metric-recorder.js';
import type { FleetDelta } from '../src/fleet/fleet-delta.js';
import { newLatencyHistogram, percentileMs, recordLatencyMs, type LatencyHistogram } from '../src/fleet/latency-histogram.js';
import { FleetAggregate } from '../src/runner/aggregate.js';
import { buildMeasuredRun } from '../src/runner/build-summary.js';
import { mergeSummaries } from '../src/runner/merge-summaries.js';
import { lpsCommandTimes, type BasisGroup } from '../src/runner/mergeable-summary.js';
import { commandLatency } from '../src/runner/lps/lps-summary.js';
import { summaryToJson, type RunSummary } from '../src/runner/summary-json.js';
import { evaluateThresholds, noThresholdFailed } from '../src/runner/thresholds.js';
import { parseThreshold } from '../src/scenario/parse-threshold.js';
import { resolveThresholdBases } from '../src/scenario/threshold-basis.js';
import type { Scenario, ThresholdSpec } from '../src/scenario/scenario-types.js';
import type { RequestEndpointKey } from '../src/device/ports.js';
import { runMerge } from '../src/cli/merge-command.js';

const DEVICES = 42;
/** Devices 0..11 are group b (API v1), 12..41 group a (API v2). */
const V1_DEVICES = 12;
const WHOLE_FLEET: BasisGroup[] = [
  { name: 'b', count: V1_DEVICES, api: 'v1' },
  { name: 'a', count: DEVICES - V1_DEVICES, api: 'v2' },
];
const STARTED = Date.UTC(2026, 10, 24, 12);
const ENDPOINTS: RequestEndpointKey[] = ['config', 'config', 'config', 'info', 'metrics', 'logs', 'register'];

interface Sample {
  device: number;
  endpoint: RequestEndpointKey;
  us: number;
  status: number;
  error?: string;
  expected?: true;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Log-normal latencies around 20 ms with a long tail, a few up to the histogram's hour. */
function sampleStream(n: number, seed: number): Sample[] {
  const rnd = mulberry32(seed);
  const out: Sample[] = [];
  for (let i = 0; i < n; i++) {
    const device = Math.floor(rnd() * DEVICES);
    const endpoint = ENDPOINTS[Math.floor(rnd() * ENDPOINTS.length)]!;
    const z = Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
    let us = Math.max(1, Math.round(Math.exp(Math.log(20_000) + 1.3 * z)));
    if (rnd() < 0.0005) us = Math.round(rnd() * 3_600_000_000);
    const r = rnd();
    const s: Sample = { device, endpoint, us, status: 200 };
    if (r < 0.02) s.status = 503;
    else if (r < 0.03) {
      s.status = 0;
      s.error = rnd() < 0.5 ? 'timeout' : 'ECONNRESET';
    } else if (r < 0.04 && endpoint === 'config') {
      s.status = 403;
      s.expected = true;
    } else if (r < 0.045) s.status = 304;
    out.push(s);
  }
  return out;
}

const SAMPLES = sampleStream(300_000, 20261124);

interface ShardPlan {
  shard?: { index: number; count: number };
  /** Device indexes this process runs. */
  devices: number[];
  /** Devices that never onboard. */
  notOnboarded?: ReadonlySet<number>;
  thresholds: string[];
  /** The groups the shard's loader saw: the whole fleet (default) or its own part. */
  groups?: 'whole' | 'own';
  startedAtMs?: number;
}

function groupsOf(devices: readonly number[]): BasisGroup[] {
  const b = devices.filter((d) => d < V1_DEVICES).length;
  return [
    { name: 'b', count: b, api: 'v1' },
    { name: 'a', count: devices.length - b, api: 'v2' },
  ];
}

function resolvedThresholds(sources: readonly string[], groups: BasisGroup[]): ThresholdSpec[] {
  const scenario = { groups: groups as Scenario['groups'], thresholds: sources.map((t) => parseThreshold(t)) };
  resolveThresholdBases(scenario);
  return scenario.thresholds;
}

/** One process's summary JSON, as `evesim run --summary-json` writes it, parsed back. */
function processSummary(p: ShardPlan): RunSummary {
  const mine = new Set(p.devices);
  const workers = [new MetricRecorder(), new MetricRecorder()];
  const workerOf = (device: number): number => p.devices.indexOf(device) % 2;
  const agg = new FleetAggregate();
  const seq = [0, 0];
  const flush = (w: number, final: boolean): void => {
    const devs = p.devices.filter((d) => workerOf(d) === w);
    const onboarded = devs.filter((d) => !p.notOnboarded?.has(d));
    const delta: FleetDelta = {
      workerId: w,
      seq: seq[w]!++,
      final,
      atMs: STARTED,
      intervalMs: 1000,
      ...workers[w]!.takeDelta(),
      lifecycle: { idle: 0, 'fetching-certs': 0, registering: devs.length - onboarded.length, uuid: 0, attesting: 0, onboarded: onboarded.length, stopped: 0 },
      onboardedEver: onboarded.length,
      onboardedEverByApi: { v1: onboarded.filter((d) => d < V1_DEVICES).length, v2: onboarded.filter((d) => d >= V1_DEVICES).length },
      started: devs.length,
      shardSize: devs.length,
      queueBacklog: {},
      undelivered: {},
      loop: { p50Ms: 1, p99Ms: 2, maxMs: 3, utilisation: 0.1 },
      pendingTimers: 0,
    };
    agg.merge(delta);
  };
  let seen = 0;
  for (const [i, s] of SAMPLES.entries()) {
    if (!mine.has(s.device)) continue;
    const w = workerOf(s.device);
    const path = s.device < V1_DEVICES ? `/api/v1/edgedevice/${s.endpoint}` : `/api/v2/edgedevice/id/x/${s.endpoint}`;
    workers[w]!.onOutcome({
      endpoint: s.endpoint,
      deviceIndex: s.device,
      method: 'POST',
      path,
      status: s.status,
      ...(s.error ? { error: s.error } : {}),
      ...(s.expected ? { expected: 'before-attestation' as const } : {}),
      dueAt: 0,
      sentAt: 0,
      doneAt: s.us / 1000,
      requestHeaders: {},
    });
    if (i % 997 === 0) workers[w]!.onFinding({ deviceIndex: s.device, endpoint: s.endpoint, kind: 'undecodable-body', detail: 'x' });
    if (++seen % 10_000 === 0) for (const x of [0, 1]) flush(x, false);
  }
  for (const x of [0, 1]) flush(x, true);
  const groups = p.groups === 'own' ? groupsOf(p.devices) : WHOLE_FLEET;
  const thresholds = resolvedThresholds(p.thresholds, groups);
  const v1 = p.devices.filter((d) => d < V1_DEVICES).length;
  const measured = buildMeasuredRun({
    scenario: { name: 'merge-test', file: 'scenarios/merge-test.yaml', seed: 5, thresholds, groups },
    ...(p.shard ? { shard: p.shard } : {}),
    target: 'embedded',
    startedAtMs: p.startedAtMs ?? STARTED,
    durationMs: 60_000,
    totalDevices: p.devices.length,
    devicesByApi: { v1, v2: p.devices.length - v1 },
    aggregate: agg,
    undelivered: { info: p.devices.length, logs: 2 },
    generator: { workers: [{ worker: 0, eventLoopLagP99Ms: 3 }, { worker: 1, eventLoopLagP99Ms: 4 }], mainEventLoopLagP99Ms: p.devices.length, cpuPercent: 10, machineCpuPercent: 50 + p.devices.length, rssPeakBytes: p.devices.length * 2 ** 20 },
  });
  const results = evaluateThresholds(thresholds, measured);
  return JSON.parse(summaryToJson({ ...measured, thresholds: results, exitCode: noThresholdFailed(results) ? 0 : 1 })) as RunSummary;
}

const ALL_DEVICES = Array.from({ length: DEVICES }, (_, i) => i);

function shardPlans(n: number, base: Omit<ShardPlan, 'devices' | 'shard'>): ShardPlan[] {
  return Array.from({ length: n }, (_, i) => ({
    ...base,
    shard: { index: i, count: n },
    devices: ALL_DEVICES.filter((d) => d % n === i),
  }));
}

const asFiles = (summaries: RunSummary[]) => summaries.map((data, i) => ({ file: `shard-${i + 1}.json`, data: JSON.parse(JSON.stringify(data)) as unknown }));

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

/** Histograms of every sample, kept as one recorder would: per endpoint, all, and per API. */
function referenceHistograms(): Map<string, LatencyHistogram> {
  const hs = new Map<string, LatencyHistogram>();
  const rec = (key: string, us: number): void => {
    let h = hs.get(key);
    if (!h) hs.set(key, (h = newLatencyHistogram()));
    recordLatencyMs(h, us / 1000);
  };
  for (const s of SAMPLES) {
    const api = s.device < V1_DEVICES ? 'v1' : 'v2';
    rec(s.endpoint, s.us);
    rec('*', s.us);
    rec(`${api}:${s.endpoint}`, s.us);
    rec(`${api}:*`, s.us);
  }
  return hs;
}

const dir = mkdtempSync(join(tmpdir(), 'evesim-merge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PASSING = ['config.p99 < 1h', 'all.count == 300000', 'register.count >= 100 per device of a', 'onboarded.count >= 1 per device', 'devices.total == 42'];

describe('merge of shard summaries', () => {
  const single = processSummary({ devices: ALL_DEVICES, thresholds: PASSING });
  const reference = referenceHistograms();

  it.each([1, 2, 3, 7])('%i shard(s): every percentile and count equals that of one recorder that saw every request', (n) => {
    const shards = shardPlans(n, { thresholds: PASSING }).map(processSummary);
    const { summary } = mergeSummaries(asFiles(shards));
    const check = (stats: RunSummary['overall'], key: string): void => {
      const h = reference.get(key)!;
      expect(stats.count, key).toBe(h.totalCount);
      expect([stats.p50_ms, stats.p90_ms, stats.p99_ms, stats.max_ms], key).toEqual([50, 90, 99, 100].map((p) => round3(percentileMs(h, p))));
    };
    for (const e of new Set(ENDPOINTS)) check(summary.endpoints[e]!, e);
    check(summary.overall, '*');
    for (const api of ['v1', 'v2'] as const) {
      for (const e of new Set(ENDPOINTS)) check(summary.byApi![api]!.endpoints[e]!, `${api}:${e}`);
      check(summary.byApi![api]!.overall, `${api}:*`);
    }
    // And every figure of the summary equals the single process's, rates and counters included.
    expect(summary.endpoints).toEqual(single.endpoints);
    expect(summary.overall).toEqual(single.overall);
    expect(summary.byApi).toEqual(single.byApi);
    expect(summary.devices).toEqual(single.devices);
    expect(summary.expected).toEqual(single.expected);
    expectSameFindings(summary.findings, single.findings);
    expect(summary.thresholds).toEqual(single.thresholds);
    expect(summary.exitCode).toBe(0);
    // The merged summary is mergeable again (the whole fleet, no shard) and merges to itself.
    const again = mergeSummaries([{ file: 'merged.json', data: JSON.parse(summaryToJson(summary)) as unknown }]).summary;
    expect(again.endpoints).toEqual(summary.endpoints);
    expect(again.byApi).toEqual(summary.byApi);
    expect(again.mergeable!.identity.shard).toBeUndefined();
  });

  it('sums the counters: devices, onboarded, lifecycle, statuses, errors, expected rejections, undelivered, findings, attestation, LPS, own connections', () => {
    const shards = shardPlans(3, { thresholds: PASSING, notOnboarded: new Set([5, 6, 40]) }).map(processSummary);
    const attestation = (k: number) => ({
      byCode: { SUCCESS: 10 * k, QUOTE_FAILED: k },
      tpmDisabled: k,
      storeKeys: { SUCCESS: 2 * k },
      failureReasons: { 'template-mismatch': k },
      nonces: 11 * k,
      devices: { byLastCode: { SUCCESS: 3 * k }, tpmDisabled: 1, tpmReset: k },
    });
    const rnd = mulberry32(7);
    const allCommands: { command: string; issuedAt: number; completedAt: number | null }[] = [];
    shards.forEach((s, i) => {
      const k = i + 1;
      s.attestation = attestation(k);
      const commands = Array.from({ length: 20 + 13 * k }, (_, j) => {
        const issuedAt = 1000 * j;
        return { command: j % 3 === 0 ? 'reboot' : 'restart', issuedAt, completedAt: rnd() < 0.2 ? null : issuedAt + Math.round(rnd() * 5000) };
      });
      allCommands.push(...commands);
      s.lps = {
        sites: [{ name: 'plant', address: `127.0.0.1:${9000 + k}`, groups: ['a'] }],
        commands: commandLatency(commands),
        tokenRejected: { total: k, byEndpoint: { 'lps.radio': k } },
        agent: {
          appCommandsAccepted: k,
          appCommandsSkipped: 0,
          appCommandsCompleted: k,
          deviceCommandsAccepted: 2 * k,
          deviceCommandsRefused: 0,
          radioChangesApplied: 3,
          radioChangesFailed: 0,
          radioPostsSuppressed: 1,
          locationPostsThrottled: k,
        },
        devicesByRadioState: { online: 10 + k },
        devicesByGnssState: { fix3d: k },
      };
      s.mergeable!.lpsCommands = lpsCommandTimes(commands);
      s.drain = { gracefulStopMs: 15_000, durationMs: 1000 * k, complete: k !== 2, leftAtStop: { logs: k } };
      // The second shard's devices all used the shared pool.
      // The first shard's summary predates abandonedByPowerLoss and the network's counts: they count as 0.
      if (k !== 2) s.connections = { v1: { devices: 4 * k, connects: 9 * k, resumed: k, failed: 0, certSwitches: 4 * k, deviceRestarts: k, connectionsLost: 2 * k, ...(k === 3 ? { abandonedByPowerLoss: 2, abandonedByNetwork: 3, resetByNetwork: 1 } : {}) } };
    });
    // The third shard started a second later: the merged window reaches to its end.
    shards[2]!.mergeable!.startedAtMs += 1000;
    const { summary } = mergeSummaries(asFiles(shards));

    expect(summary.devices).toEqual({ total: 42, onboarded: 39, byLifecycle: { registering: 3, onboarded: 39 } });
    expect(summary.byApi!.v1!.devices).toEqual({ total: 12, onboarded: 10 });
    expect(summary.byApi!.v2!.devices).toEqual({ total: 30, onboarded: 29 });
    const config = SAMPLES.filter((s) => s.endpoint === 'config');
    expect(summary.endpoints.config!.byStatus['503']).toBe(config.filter((s) => s.status === 503).length);
    expect(summary.endpoints.config!.byError.timeout).toBe(config.filter((s) => s.error === 'timeout').length);
    expect(summary.endpoints.config!.errors).toBe(config.filter((s) => s.status === 503 || s.status === 0).length);
    expect(summary.endpoints.config!.expected).toBe(config.filter((s) => s.expected).length);
    expect(summary.expected!.rejections).toEqual([{ endpoint: 'config', status: '403', reason: 'before-attestation', count: config.filter((s) => s.expected).length }]);
    expect(summary.overall.errors).toBe(SAMPLES.filter((s) => s.status === 503 || s.status === 0).length);
    expect(summary.overall.byError).toEqual(single.overall.byError);
    expect(summary.undelivered).toEqual({ info: 42, logs: 6, flowlog: 0, total: 48 });
    expectSameFindings(summary.findings, single.findings);
    expect(summary.findings.total).toBeGreaterThan(0);
    expect(summary.attestation).toEqual({
      byCode: { SUCCESS: 60, QUOTE_FAILED: 6 },
      tpmDisabled: 6,
      storeKeys: { SUCCESS: 12 },
      failureReasons: { 'template-mismatch': 6 },
      nonces: 66,
      devices: { byLastCode: { SUCCESS: 18 }, tpmDisabled: 3, tpmReset: 6 },
    });
    expect(summary.lps!.commands).toEqual(commandLatency(allCommands));
    expect(summary.lps!.commands.issued).toBe(allCommands.length);
    expect(summary.lps!.sites).toEqual([{ name: 'plant', address: '127.0.0.1:9001', groups: ['a'] }]);
    expect(summary.lps!.tokenRejected).toEqual({ total: 6, byEndpoint: { 'lps.radio': 6 } });
    expect(summary.lps!.agent.deviceCommandsAccepted).toBe(12);
    expect(summary.lps!.devicesByRadioState).toEqual({ online: 36 });
    expect(summary.drain).toEqual({ gracefulStopMs: 15_000, durationMs: 3000, complete: false, leftAtStop: { logs: 6 } });
    expect(summary.connections).toEqual({ v1: { devices: 16, connects: 36, resumed: 4, failed: 0, certSwitches: 16, deviceRestarts: 4, connectionsLost: 8, abandonedByPowerLoss: 2, abandonedByNetwork: 3, resetByNetwork: 1 } });
    // Rates are over the earliest start to the latest end: 61 s.
    expect(summary.durationMs).toBe(61_000);
    expect(summary.startedAt).toBe(new Date(STARTED).toISOString());
    expect(summary.endpoints.config!.rate).toBe(config.length / 61);
    expect(summary.generator.workers.map((w) => w.worker)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(summary.generator.mainEventLoopLagP99Ms).toBe(14);
    // Shards may or may not share a machine: the busiest machine any of them saw.
    expect(summary.generator.machineCpuPercent).toBe(64);
    // Each shard a process of its own: the peaks add up (1 MiB per device in these summaries).
    expect(summary.generator.rssPeakBytes).toBe(DEVICES * 2 ** 20);
  });

  it('judges per-device thresholds on the merged fleet, with the groups of the whole fleet or of each shard', () => {
    const thresholds = ['onboarded.count >= 1 per device', 'register.count >= 1000 per device of a', 'devices.total == 42', 'config{api:v1}.count >= 1 per device'];
    for (const groups of ['whole', 'own'] as const) {
      const shards = shardPlans(3, { thresholds, groups, notOnboarded: new Set([17]) }).map(processSummary);
      const { summary } = mergeSummaries(asFiles(shards));
      const [onboarded, register, total, v1] = summary.thresholds;
      expect(onboarded, groups).toMatchObject({ status: 'failed', actual: 41, bound: 42, perDevice: { devices: 42, effective: '≥ 42 for 42 devices' } });
      const registerCount = SAMPLES.filter((s) => s.endpoint === 'register').length;
      expect(register, groups).toMatchObject({ actual: registerCount, bound: 30_000, perDevice: { devices: 30 } });
      expect(register!.passed).toBe(registerCount >= 30_000);
      expect(total, groups).toMatchObject({ status: 'passed', actual: 42 });
      expect(v1, groups).toMatchObject({ status: 'passed', bound: 12, perDevice: { devices: 12 } });
      expect(summary.exitCode).toBe(1);
      expect(summary.mergeable!.groups).toEqual(WHOLE_FLEET);
    }
  });

  it('exits 0 when no threshold failed, 1 when one did, writing the merged summary JSON and JUnit XML', () => {
    const write = (name: string, s: RunSummary): string => {
      const f = join(dir, name);
      writeFileSync(f, summaryToJson(s));
      return f;
    };
    const passing = shardPlans(2, { thresholds: PASSING }).map((p, i) => write(`pass-${i + 1}.json`, processSummary(p)));
    let out = '';
    const io = { out: (t: string) => (out += t), err: (t: string) => (out += t) };
    const all = join(dir, 'all.json');
    const junit = join(dir, 'all.xml');
    expect(runMerge({ summaries: passing, summaryJson: all, junit }, io).exitCode).toBe(0);
    expect(out).toContain(`evesim merge: 2 shards of "merge-test" (seed 5): ${passing[0]}, ${passing[1]}`);
    expect(out).toContain('onboarded.count >= 1 per device');
    const written = JSON.parse(readFileSync(all, 'utf8')) as RunSummary;
    expect(written.overall).toEqual(single.overall);
    expect(written.exitCode).toBe(0);
    expect(readFileSync(junit, 'utf8')).toContain('<testsuite name="evesim merge-test" tests="5" failures="0"');

    const failing = shardPlans(2, { thresholds: PASSING, notOnboarded: new Set([0]) }).map((p, i) => write(`fail-${i + 1}.json`, processSummary(p)));
    expect(runMerge({ summaries: failing, junit }, io).exitCode).toBe(1);
    expect(readFileSync(junit, 'utf8')).toContain('failures="1"');

    // A shard whose worker died (exit 1, no failed threshold) makes the merge 1.
    const died = processSummary(shardPlans(2, { thresholds: PASSING })[1]!);
    died.exitCode = 1;
    died.thresholds = died.thresholds.map((t) => ({ ...t, status: 'passed', passed: true }));
    out = '';
    expect(runMerge({ summaries: [passing[0]!, write('died.json', died)] }, io).exitCode).toBe(1);
    expect(out).toContain('died.json ended 1 without a failed threshold');
  });

  describe('refuses, exit 2, one line naming the file and the field', () => {
    const three = shardPlans(3, { thresholds: PASSING }).map(processSummary);
    const refusal = (files: { file: string; data: unknown }[]): string => {
      expect(() => mergeSummaries(files)).toThrow();
      try {
        mergeSummaries(files);
      } catch (e) {
        const message = (e as Error).message;
        expect(message).not.toContain('\n');
        return message;
      }
      return '';
    };
    const files = () => asFiles(three);

    it('a file that is not a summary, or has no mergeable section, or another version', () => {
      expect(refusal([{ file: 'x.json', data: [1, 2] }])).toBe('x.json: not an evesim run summary (not a JSON object)');
      expect(refusal([{ file: 'x.json', data: { scenario: 's' } }])).toBe('x.json: not an evesim run summary (no "endpoints" field)');
      expect(refusal([{ file: 'x.json', data: { scenario: 's', endpoints: {}, overall: {}, devices: {} } }])).toBe('x.json: not an evesim run summary (no "undelivered" field)');
      const f = files();
      delete (f[1]!.data as RunSummary).mergeable;
      expect(refusal(f)).toMatch(/^shard-2\.json: no "mergeable" section/);
      const g = files();
      (g[0]!.data as RunSummary).mergeable!.version = 99;
      expect(refusal(g)).toBe('shard-1.json: mergeable.version is 99; this evesim merges version 1');
      const h = files();
      (h[2]!.data as RunSummary).mergeable!.histograms.endpoints.config = 'not base64 at all';
      expect(refusal(h)).toMatch(/^shard-3\.json: mergeable\.histograms\.endpoints\["config"\] is not an HDR histogram in compressed base64 \(.+\)$/);
    });

    it('shards of different scenarios, seeds or thresholds', () => {
      const f = files();
      (f[2]!.data as RunSummary).mergeable!.identity.seed = 6;
      expect(refusal(f)).toBe('shard-3.json: mergeable.identity.seed is 6 but shard-1.json has 5: not shards of one run');
      const g = files();
      (g[1]!.data as RunSummary).mergeable!.identity.scenarioFile = 'other.yaml';
      expect(refusal(g)).toBe('shard-2.json: mergeable.identity.scenarioFile is "other.yaml" but shard-1.json has "scenarios/merge-test.yaml": not shards of one run');
      const h = files();
      (h[1]!.data as RunSummary).mergeable!.thresholds.pop();
      expect(refusal(h)).toBe('shard-2.json: mergeable.thresholds differ from those of shard-1.json: not shards of one scenario');
    });

    it('a duplicate shard, a missing one, a shard count that differs, whole-fleet summaries twice', () => {
      const f = files();
      expect(refusal([f[0]!, f[1]!, { ...f[1]!, file: 'copy.json' }])).toBe('copy.json: mergeable.identity.shard 1/3 again (also shard-2.json)');
      expect(refusal([f[0]!, f[2]!])).toBe('missing shard 1/3 (mergeable.identity.shard): got 0/3, 2/3');
      expect(refusal([f[2]!])).toBe('missing shards 0/3, 1/3 (mergeable.identity.shard): got 2/3');
      const g = files();
      (g[1]!.data as RunSummary).mergeable!.identity.shard = { index: 2, count: 4 };
      expect(refusal(g)).toBe('shard-2.json: mergeable.identity.shard is 2/4 but shard-1.json is one of 3 shards');
      const ids = files();
      ids.forEach((x, i) => ((x.data as RunSummary).mergeable!.identity.fleetId = i === 1 ? 'fleet-b' : 'fleet-a'));
      expect(refusal(ids)).toBe('shard-2.json: mergeable.identity.fleetId is "fleet-b" but shard-1.json has "fleet-a": not shards of one run');
      const whole = asFiles([single, single]);
      expect(refusal(whole)).toBe('shard-2.json: no mergeable.identity.shard, and neither has shard-1.json: both ran the whole fleet, merging would count it twice');
      expect(refusal([f[0]!, { file: 'whole.json', data: JSON.parse(JSON.stringify(single)) as unknown }])).toBe(
        'whole.json: no mergeable.identity.shard (it ran the whole fleet) but shard-1.json is a shard',
      );
    });

    it('groups that describe neither the shard nor the merged fleet, when a threshold is per device', () => {
      const f = files();
      (f[1]!.data as RunSummary).mergeable!.groups = [{ name: 'a', count: 7, api: 'v2' }];
      expect(refusal(f)).toMatch(/^shard-1\.json: mergeable\.groups hold 42 devices but devices\.total is 14, .*"register\.count >= 100 per device of a"$/);
    });

    it('through the command: unreadable or non-JSON files, exit 2 with the message', () => {
      let err = '';
      const io = { out: () => {}, err: (t: string) => (err += t) };
      expect(runMerge({ summaries: [join(dir, 'none.json')] }, io).exitCode).toBe(2);
      expect(err).toBe(`evesim merge: ${join(dir, 'none.json')}: cannot read the file (ENOENT)\n`);
      const bad = join(dir, 'bad.json');
      writeFileSync(bad, '{ "scenario": ');
      err = '';
      expect(runMerge({ summaries: [bad] }, io).exitCode).toBe(2);
      expect(err).toMatch(/^evesim merge: .*bad\.json: not an evesim run summary \(not JSON: .*\)\n$/);
      const shard1 = join(dir, 'only-1.json');
      writeFileSync(shard1, summaryToJson(three[0]!));
      err = '';
      expect(runMerge({ summaries: [shard1] }, io).exitCode).toBe(2);
      expect(err).toBe('evesim merge: missing shards 1/3, 2/3 (mergeable.identity.shard): got 0/3\n');
    });
  });
});

/**
 * The merged findings equal one process's: the same counts, and examples of the same kinds, as
 * many of each (shards keep their first ones, so which ones may differ) and each one a finding
 * the single process also kept or could have kept (same device, endpoint and detail shape).
 */
function expectSameFindings(merged: RunSummary['findings'], single: RunSummary['findings']): void {
  expect({ total: merged.total, byKind: merged.byKind }).toEqual({ total: single.total, byKind: single.byKind });
  const count = (e: RunSummary['findings']['examples']) => Object.fromEntries(Object.entries(e ?? {}).map(([k, l]) => [k, l.length]));
  expect(count(merged.examples)).toEqual(count(single.examples));
  for (const list of Object.values(merged.examples ?? {})) for (const e of list) expect(e).toMatchObject({ endpoint: expect.any(String), detail: 'x' });
}
