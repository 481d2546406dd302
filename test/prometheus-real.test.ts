// A real Prometheus (Debian's /usr/bin/prometheus; .ci/run installs it) scrapes a short run every
// second, as a user's would: promtool finds nothing to say about the exposition, the histogram's p99
// agrees with the summary's within a bucket for every endpoint once the drain is in (the run's
// /metrics lingers after the summary for that), the counters equal the summary's totals, counters
// that never moved are there at 0, and every query of the Grafana dashboard
// (deploy/grafana/evesim-dashboard.json) reads only metrics evesim exports and returns data.
// Every wait is for a condition (Prometheus ready, target up, sample there), not a fixed time.
// Mandatory when CI is set; elsewhere skipped with the reason when Prometheus is not installed.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';
import { dashboardExpressions, metricNamesOf } from './fixtures/promql-names.js';
import { DURATION_BUCKETS_S } from '../src/runner/prometheus/request-duration-histogram.js';
import type { RunScenarioResult } from '../src/runner/run-options.js';
import type { RunSummary } from '../src/runner/summary-json.js';

const PROMETHEUS = process.env['EVESIM_PROMETHEUS'] ?? '/usr/bin/prometheus';
const PROMTOOL = process.env['EVESIM_PROMTOOL'] ?? '/usr/bin/promtool';
const INSTALL_HINT = `${PROMETHEUS} or ${PROMTOOL} not found: install Debian's prometheus package (apt-get install -y prometheus) to run the real-Prometheus test`;
const installed = existsSync(PROMETHEUS) && existsSync(PROMTOOL);
const mandatory = Boolean(process.env['CI']);
if (!installed && !mandatory) console.warn(`SKIPPED: the real-Prometheus test. ${INSTALL_HINT}`);

const BOUNDS = DURATION_BUCKETS_S;
/** What the dashboard's $__rate_interval becomes here: many 1 s scrapes of the whole run. */
const RATE_INTERVAL = '2m';

const SCENARIO = `
name: prometheus-real
seed: 23
duration: 6s
target: embedded
arrival:
  model: uniform
  over: 1s
groups:
  - name: a
    count: 6
    configItems:
      timer.config.interval: 5
      timer.metric.interval: 5
`;

describe('promql-names (the dashboard check itself)', () => {
  it('finds the metric names of an expression and nothing else', () => {
    expect(
      metricNamesOf(
        'histogram_quantile(0.99, sum by (endpoint, le) (rate(evesim_request_duration_seconds_bucket{endpoint=~"con.*", code!="x y"}[$__rate_interval]))) / on (endpoint) group_left sum(evesim_requests_total) > bool 1e3 and max(up offset 5m)',
      ),
    ).toEqual(['evesim_request_duration_seconds_bucket', 'evesim_requests_total', 'up']);
    expect(metricNamesOf('count by (scenario) (evesim_run_info)')).toEqual(['evesim_run_info']);
  });

  it('reads every target of every panel, rows included', () => {
    const d = { panels: [{ title: 'a', targets: [{ expr: 'x' }] }, { title: 'r', type: 'row', panels: [{ title: 'b', targets: [{ expr: 'y' }, {}] }] }] };
    expect(dashboardExpressions(d)).toEqual([
      { panel: 'a', expr: 'x' },
      { panel: 'b', expr: 'y' },
    ]);
  });
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Polls `probe` until it returns a value (not undefined); fails naming `what` after `timeoutMs`. */
async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

describe.skipIf(!installed && !mandatory)('a real Prometheus scraping a run', () => {
  let dir = '';
  let prometheus: ChildProcess | undefined;
  let prometheusLog = '';
  let api = '';
  let metricsUrl = '';
  const endLinger = new AbortController();
  let running: Promise<RunScenarioResult> | undefined;
  let summary: RunSummary;
  let finalScrape = '';
  let runErr = '';

  async function query(expr: string): Promise<VectorSample[]> {
    const res = await request(`${api}/api/v1/query?${new URLSearchParams({ query: expr })}`);
    const body = (await res.body.json()) as { status: string; error?: string; data?: { resultType: string; result: VectorSample[] } };
    if (body.status !== 'success') throw new Error(`Prometheus refused ${expr}: ${body.error}`);
    expect(body.data!.resultType).toBe('vector');
    return body.data!.result;
  }
  async function scalar(expr: string): Promise<number> {
    const r = await query(expr);
    expect(r, `${expr} returned ${JSON.stringify(r)}`).toHaveLength(1);
    return Number(r[0]!.value[1]);
  }

  beforeAll(async () => {
    if (!installed) throw new Error(`${INSTALL_HINT} (CI is set, so this test is mandatory)`);
    dir = mkdtempSync(join(tmpdir(), 'evesim-prom-'));
    const { run, ctl } = await loadCompiledRunner();
    const evesimPort = await freePort();
    const webPort = await freePort();
    metricsUrl = `http://127.0.0.1:${evesimPort}/metrics`;
    api = `http://127.0.0.1:${webPort}`;
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  scrape_timeout: 1s',
        'scrape_configs:',
        '  - job_name: evesim',
        '    static_configs:',
        `      - targets: ['127.0.0.1:${evesimPort}']`,
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      PROMETHEUS,
      [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${webPort}`, '--log.level=warn'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout!.on('data', (b: Buffer) => (prometheusLog += b.toString()));
    prometheus.stderr!.on('data', (b: Buffer) => (prometheusLog += b.toString()));
    const exited = new Promise<never>((_, reject) =>
      prometheus!.once('exit', (code) => reject(new Error(`prometheus exited (${code}): ${prometheusLog}`))),
    );
    exited.catch(() => {});
    await Promise.race([
      exited,
      waitFor('Prometheus to be ready', 60_000, async () => {
        const res = await request(`${api}/-/ready`);
        await res.body.dump();
        return res.statusCode === 200 ? true : undefined;
      }),
    ]);

    const file = join(dir, 'scenario.yaml');
    writeFileSync(file, SCENARIO);
    const summaryFile = join(dir, 'summary.json');
    running = run.runScenario({
      scenarioFile: file,
      workers: 2,
      metricsPort: evesimPort,
      // Long enough for any machine; the test ends it once Prometheus has what it needs.
      metricsLingerMs: 600_000,
      endMetricsLinger: endLinger.signal,
      summaryJson: summaryFile,
      stateDir: join(dir, 'state'),
      quiet: true,
      startEmbeddedController: ctl.startControllerInThread,
      out: () => {},
      err: (t) => (runErr += t),
    });
    running.catch(() => {});
    await waitFor('the evesim target to be up', 60_000, async () => {
      const res = await request(`${api}/api/v1/targets`);
      const body = (await res.body.json()) as { data: { activeTargets: { health: string }[] } };
      return body.data.activeTargets.some((t) => t.health === 'up') ? true : undefined;
    });
    // The summary JSON is written before the linger: the run is over, its figures final.
    summary = await waitFor('the run summary', 120_000, async () =>
      existsSync(summaryFile) ? (JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary) : undefined,
    );
    finalScrape = await (await request(metricsUrl)).body.text();
    // Prometheus has scraped the final figures once its request count is the summary's.
    await waitFor('a scrape with the final figures', 60_000, async () => {
      const r = await query('sum(evesim_requests_total)');
      // Prometheus counts every request, the drain's too (the summary has those apart).
      return r.length === 1 && Number(r[0]!.value[1]) === summary.overall.count + (summary.drain?.overall?.count ?? 0) ? true : undefined;
    });
  }, 300_000);

  afterAll(async () => {
    endLinger.abort();
    const result = await running;
    prometheus?.kill('SIGTERM');
    if (prometheus && prometheus.exitCode === null) await new Promise((r) => prometheus!.once('exit', r));
    if (dir) rmSync(dir, { recursive: true, force: true });
    // No threshold in the scenario: the run passes, and lingering did not change its exit code.
    expect(result?.exitCode).toBe(0);
  }, 120_000);

  it('serves an exposition promtool finds nothing to say about', () => {
    const r = spawnSync(PROMTOOL, ['check', 'metrics'], { input: finalScrape, encoding: 'utf8' });
    expect(r.error).toBeUndefined();
    expect(`${r.stdout}${r.stderr}`).toBe('');
    expect(r.status).toBe(0);
  });

  it('agrees with the summary: p99 within its bucket for every endpoint the drain left alone, counters equal to its run and drain totals together', async () => {
    // The run drained (its figures arrive after the run phase, the last ones after the summary).
    expect(summary.drain?.gracefulStopMs).toBeGreaterThan(0);
    expect(runErr).toMatch(/metrics stay up on http:\/\/127\.0\.0\.1:\d+\/metrics for 600 s .*Ctrl-C ends this now/);
    const endpoints = Object.entries(summary.endpoints).filter(([, e]) => e.count > 0);
    expect(endpoints.length).toBeGreaterThanOrEqual(4);
    // Prometheus counts every request; the summary has the drain's apart (drain.endpoints).
    const drained = summary.drain?.endpoints ?? {};
    for (const [endpoint, d] of Object.entries(drained)) {
      if (summary.endpoints[endpoint]) continue;
      const sel = `{endpoint="${endpoint}"}`;
      expect(await scalar(`sum(evesim_requests_total${sel})`), endpoint).toBe(d.count);
      expect(await scalar(`sum(evesim_request_errors_total${sel})`), endpoint).toBe(d.errors);
    }
    let p99Compared = 0;
    for (const [endpoint, e] of endpoints) {
      const sel = `{endpoint="${endpoint}"}`;
      const inDrain = drained[endpoint];
      expect(await scalar(`sum(evesim_requests_total${sel})`), endpoint).toBe(e.count + (inDrain?.count ?? 0));
      expect(await scalar(`sum(evesim_request_duration_seconds_count${sel})`), endpoint).toBe(e.count + (inDrain?.count ?? 0));
      expect(await scalar(`sum(evesim_request_errors_total${sel})`), endpoint).toBe(e.errors + (inDrain?.errors ?? 0));
      // The summary's p99 is the run's alone: comparable where the drain made no such request.
      if ((inDrain?.count ?? 0) > 0) continue;
      p99Compared++;
      const p99 = await scalar(`histogram_quantile(0.99, sum by (le) (evesim_request_duration_seconds_bucket${sel}))`);
      // The bucket that holds the summary's p99 (an HDR value, in µs exactly); beyond the last
      // bound Prometheus answers the last bound.
      const v = e.p99_ms / 1000;
      const i = BOUNDS.findIndex((b) => v <= b);
      const allowed: number[][] = [i === -1 ? [BOUNDS.at(-1)!, BOUNDS.at(-1)!] : [i === 0 ? 0 : BOUNDS[i - 1]!, BOUNDS[i]!]];
      // HDR's p99 is the request of rank round(0.99 n); Prometheus takes the first bucket whose
      // count reaches 0.99 n, i.e. rank ceil(0.99 n). When n mod 100 is above 50 the two ranks
      // differ by one, and that one more request may sit in the next bucket.
      const hdrRank = Math.max(1, Math.floor(0.99 * e.count + 0.5));
      if (Math.ceil(0.99 * e.count) > hdrRank && i !== -1) allowed.push([BOUNDS[i]!, BOUNDS[i + 1] ?? BOUNDS[i]!]);
      const ok = allowed.some(([lo, hi]) => p99 >= lo! && p99 <= hi!);
      expect(ok, `${endpoint}: Prometheus p99 ${p99} s, summary p99 ${e.p99_ms} ms (n=${e.count}); allowed ${JSON.stringify(allowed)}`).toBe(true);
    }
    expect(p99Compared).toBeGreaterThanOrEqual(3);
    expect(await scalar('sum(evesim_requests_total)')).toBe(summary.overall.count + (summary.drain?.overall?.count ?? 0));
    expect(await scalar('sum(evesim_request_errors_total)')).toBe(summary.overall.errors + (summary.drain?.overall?.errors ?? 0));
    expect(await scalar('sum(evesim_findings_total)')).toBe(summary.findings.total);
    expect(await scalar('sum(evesim_undelivered_total)')).toBe(summary.undelivered.total);
    expect(await scalar('sum(evesim_devices)')).toBe(summary.devices.total);
    expect(await scalar('count(evesim_run_info{scenario="prometheus-real", seed="23", shard="0/1"})')).toBe(1);
  });

  it('has the counters that never moved, at 0', async () => {
    // The scenario's devices use config; nothing timed out and no signature was bad.
    expect(summary.endpoints['config']!.byError['timeout'] ?? 0).toBe(0);
    expect(await scalar('evesim_request_errors_total{api="v2", endpoint="config", code="timeout", class="transport"}')).toBe(0);
    expect(summary.findings.byKind['bad-signature'] ?? 0).toBe(0);
    expect(await scalar('evesim_findings_total{kind="bad-signature"}')).toBe(0);
    expect(await scalar('evesim_faults_active{fault="partition"}')).toBe(0);
    // A rate over a clean run is 0, not "no data".
    expect(await scalar('sum(rate(evesim_request_errors_total[1m]))')).toBe(0);
  });

  it('answers every query of the Grafana dashboard, which reads only metrics evesim exports', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../deploy/grafana/evesim-dashboard.json', import.meta.url), 'utf8')) as unknown;
    const exported = new Set(finalScrape.split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(l)![0]));
    const exprs = dashboardExpressions(dashboard);
    expect(exprs.length).toBeGreaterThanOrEqual(15);
    for (const { panel, expr } of exprs) {
      const names = metricNamesOf(expr);
      expect(names.length, `${panel}: ${expr} reads no metric`).toBeGreaterThan(0);
      for (const n of names) expect(exported.has(n), `${panel}: ${n} is not an evesim metric`).toBe(true);
      const promql = expr.replaceAll('$__rate_interval', RATE_INTERVAL);
      expect(promql, `${panel}: a variable the test does not know`).not.toContain('$');
      const result = await query(promql);
      expect(result.length, `${panel}: ${promql} returned no data`).toBeGreaterThan(0);
    }
  });
});
