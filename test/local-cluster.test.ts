// A "local cluster": the Indexed Job of deploy/kubernetes run as three processes on this machine.
// Each process gets the environment Kubernetes would give its pod (JOB_COMPLETION_INDEX, the Job's
// env, the evesim-run ConfigMap) and runs the container's own args, with the pod's paths mapped to
// local ones, against ONE standalone `evesim controller`; then `evesim merge` puts the three shard
// summaries together. Every device must onboard exactly once, the counts must add up, and the
// scenario's thresholds are judged on the merged fleet.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../src/runner/summary-json.js';
import { ControllerAdminClient } from '../src/servers/controller/controller-admin-client.js';
import { expandArgs, readYamlDocuments, shardEnvironment, shardJobOf } from './fixtures/indexed-job.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'bin', 'evesim.js');
const SHARDS = 3;
const FLEET_DEVICES = 12;

// Short and fast, every figure the thresholds name is produced within the run.
const SCENARIO = `name: local-cluster
seed: 31
duration: 20s
gracefulStop: 30s
target: embedded
arrival: {model: uniform, over: 3s}
groups:
  - name: edge
    count: 12
    apps: [{name: web, logLinesPerSec: 1}]
    configItems:
      timer.config.interval: 5
      timer.metric.interval: 5
thresholds:
  - onboarded.ratio == 1
  - errors.count == 0
  - findings.count == 0
  - register.count >= 1 per device
  - config.count >= 1 per device
  - metrics.count >= 1 per device
`;

/** Lines a process printed, and a promise for the first line that matches. */
function watchLines(child: ChildProcess): { lines: string[]; first: (re: RegExp, ms: number) => Promise<RegExpExecArray> } {
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString('utf8');
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      lines.push(line);
      for (const w of [...waiters]) {
        const m = w.re.exec(line);
        if (m) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    }
  });
  const first = (re: RegExp, ms: number) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      for (const l of lines) {
        const m = re.exec(l);
        if (m) return resolve(m);
      }
      const timer = setTimeout(() => reject(new Error(`no line matching ${re} within ${ms} ms; printed:\n${lines.join('\n')}`)), ms);
      waiters.push({ re, resolve: (m) => (clearTimeout(timer), resolve(m)) });
    });
  return { lines, first };
}

/** Runs a process to its end: exit code and what it printed. */
function runToEnd(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('local cluster: three shards of the Indexed Job against one evesim controller, then evesim merge', () => {
  const work = mkdtempSync(join(tmpdir(), 'evesim-local-cluster-'));
  let controller: ChildProcess | undefined;
  let admin: ControllerAdminClient;
  const shardRuns: { code: number | null; out: string; err: string }[] = [];
  let merged: { code: number | null; out: string; err: string };

  beforeAll(async () => {
    // The controller: `evesim controller` in the foreground, on loopback ports it picks.
    controller = spawn(process.execPath, [CLI, 'controller', '--port', '0', '--admin-port', '0', '--v1-port', '0', '--state-dir', join(work, 'controller')], { cwd: work });
    const printed = watchLines(controller);
    const [kit, url, adminUrl, rootCa] = await Promise.all([
      printed.first(/--onboard-cert (\S+) --onboard-key (\S+)/, 60_000),
      printed.first(/listening on (https:\/\/127\.0\.0\.1:\d+)/, 60_000),
      printed.first(/admin API on (http:\/\/127\.0\.0\.1:\d+)/, 60_000),
      printed.first(/root CA for devices: (\S+)/, 60_000),
    ]);
    admin = new ControllerAdminClient(adminUrl[1]!);

    // The pod's files, here: the scenario (ConfigMap), the onboarding Secret, the results volume.
    const scenarioFile = join(work, 'scenario.yaml');
    writeFileSync(scenarioFile, SCENARIO);
    const results = join(work, 'results');
    mkdirSync(results);
    const places: Record<string, string> = {
      '/etc/evesim/scenario/scenario.yaml': scenarioFile,
      '/etc/evesim/onboarding/root-ca.pem': rootCa[1]!,
      '/etc/evesim/onboarding/onboard.cert.pem': kit[1]!,
      '/etc/evesim/onboarding/onboard.key.pem': kit[2]!,
    };
    const job = shardJobOf(readYamlDocuments(join(ROOT, 'deploy', 'kubernetes', 'base', 'job.yaml')));
    const container = job.spec.template.spec.containers[0]!;
    // The evesim-run ConfigMap of this run: all shards start together once every one is ready.
    const runConfig = { controller: url[1]!, 'start-at': new Date(Date.now() + 25_000).toISOString(), 'fleet-id': 'local-cluster' };
    const podArgs = (index: number): string[] => {
      const env = shardEnvironment(container, index, runConfig);
      env.set('SHARD_COUNT', String(SHARDS)); // what an overlay for 3 shards sets
      env.set('FLEET_DEVICES', String(FLEET_DEVICES));
      const args = expandArgs(container.args, env).map((a) => places[a] ?? a.replace(/^\/results\//, `${results}/`));
      // One machine, three pods: each its own state directory (the pod's emptyDir) and metrics port,
      // loopback only; and the fleet pushed to the shared controller, as a run in one process does.
      const set = (flag: string, value: string) => (args[args.indexOf(flag) + 1] = value);
      set('--state-dir', join(work, `state-${index}`));
      set('--metrics-port', '0');
      set('--metrics-host', '127.0.0.1');
      set('--workers', '1');
      return [...args, '--controller-admin', adminUrl[1]!];
    };
    const env = (index: number): NodeJS.ProcessEnv => ({ ...process.env, JOB_COMPLETION_INDEX: String(index) });
    shardRuns.push(...(await Promise.all(Array.from({ length: SHARDS }, (_, i) => runToEnd(podArgs(i), env(i), work)))));
    // The merge step of deploy/kubernetes/merge, on the results volume.
    const files = Array.from({ length: SHARDS }, (_, i) => join(results, `shard-${i}.json`));
    merged = await runToEnd(['merge', ...files, '--summary-json', join(results, 'all.json'), '--junit', join(results, 'junit.xml')], process.env, work);
  }, 240_000);

  afterAll(async () => {
    await admin?.close();
    if (controller && controller.exitCode === null) {
      const exited = new Promise((r) => controller!.once('exit', r));
      controller.kill('SIGINT');
      await exited;
    }
    rmSync(work, { recursive: true, force: true });
  });

  const shardSummary = (i: number): RunSummary & { shard: { index: number; count: number; devices: number; fleetDevices: number; fleetId: string } } =>
    JSON.parse(readFileSync(join(work, 'results', `shard-${i}.json`), 'utf8'));

  it('every shard ran its part of the fleet and passed its own thresholds', () => {
    for (const [i, r] of shardRuns.entries()) expect(r.code, `shard ${i}:\n${r.err}\n${r.out}`).toBe(0);
    const parts = Array.from({ length: SHARDS }, (_, i) => shardSummary(i).shard);
    expect(parts.map((p) => p.devices)).toEqual([4, 4, 4]);
    for (const [i, p] of parts.entries()) expect(p).toMatchObject({ index: i, count: SHARDS, fleetDevices: FLEET_DEVICES, fleetId: 'local-cluster' });
  });

  it('every device of the fleet onboarded once at the shared controller', async () => {
    const list = await admin.devices({ limit: 1000 });
    expect(list.total).toBe(FLEET_DEVICES);
    const serials = list.devices.map((d) => d['serial']);
    expect(new Set(serials).size).toBe(FLEET_DEVICES);
    const stats = (await admin.stats()) as { endpoints: Record<string, { byStatus: Record<string, number> }> };
    // Registered once each: 201, no repeat (200) and no conflict (409) from shards stepping on each other.
    expect(stats.endpoints['register']!.byStatus).toEqual({ '201': FLEET_DEVICES });
  });

  it('evesim merge adds the shards up and judges the thresholds on the whole fleet', () => {
    expect(merged.code, `${merged.err}\n${merged.out}`).toBe(0);
    const all = JSON.parse(readFileSync(join(work, 'results', 'all.json'), 'utf8')) as RunSummary;
    const shards = Array.from({ length: SHARDS }, (_, i) => shardSummary(i));
    expect(all.devices.total).toBe(FLEET_DEVICES);
    expect(all.devices.onboarded).toBe(FLEET_DEVICES);
    for (const [endpoint, stats] of Object.entries(all.endpoints)) {
      expect(stats.count, endpoint).toBe(shards.reduce((n, s) => n + (s.endpoints[endpoint]?.count ?? 0), 0));
    }
    expect(all.endpoints['register']!.count).toBe(FLEET_DEVICES);
    const register = all.thresholds.find((t) => t.source === 'register.count >= 1 per device')!;
    expect(register).toMatchObject({ status: 'passed', bound: FLEET_DEVICES, actual: FLEET_DEVICES });
    expect(all.thresholds.every((t) => t.status === 'passed')).toBe(true);
    expect(readFileSync(join(work, 'results', 'junit.xml'), 'utf8')).toContain(`tests="${all.thresholds.length}" failures="0"`);
  });
});
