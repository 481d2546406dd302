// A partition window end to end, through the compiled runner (piscina starts
// dist/workers/fleet-worker.js; needs `npm run build` first) against the embedded controller:
// during the window every request fails at once (ENETUNREACH, in the generator's transport),
// after it the devices recover and poll their configuration again; the summary and the report show
// the fault with the devices and requests it hit. Its API v1 devices lose their own connections to
// it and make them again afterwards, resuming their TLS sessions.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'evesim-faults-e2e-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DEVICES = 6;
/** Of them, on API v1 (connections of their own, which the partition breaks). */
const V1_DEVICES = 2;
// Five minutes planned: the test ends the run phase once the devices have recovered.
const SCENARIO = `
name: partition-e2e
seed: 12
duration: 5m
gracefulStop: 30s
target: embedded
arrival: { model: uniform, over: 1s }
groups:
  - name: a
    count: ${DEVICES - V1_DEVICES}
    configItems:
      timer.config.interval: 10
  - name: old
    count: ${V1_DEVICES}
    api: v1
    configItems:
      timer.config.interval: 10
timeline:
  - { at: 20s, action: partition, for: 15s }
thresholds:
  - onboarded.ratio == 1
  - undelivered.count == 0
  - fault_recovery.ratio == 1
`;

describe('partition fault against the embedded controller', () => {
  it('fails requests during the window and recovers after it', async () => {
    const { run, ctl } = await loadCompiledRunner();
    const file = join(dir, 'partition.yaml');
    writeFileSync(file, SCENARIO);
    const end = new AbortController();
    let partitioned = 0;
    let configOkAtPartition: number | undefined;
    let configOkAfter = 0;
    const report: string[] = [];
    let lastRequests = '';
    let partitionSeenAt: number | undefined;
    // A backstop: past it the run phase ends anyway and the checks below say what was missing.
    const backstop = setTimeout(() => end.abort(), 140_000);
    let metricsUrl: string | undefined;
    let scrapeInWindow: Promise<string> | undefined;
    const result = await run.runScenario({
      scenarioFile: file,
      workers: 2,
      metricsPort: 0,
      metricsLingerMs: 0,
      stateDir: join(dir, 'state'),
      quiet: true,
      startEmbeddedController: ctl.startControllerInThread,
      out: (t) => report.push(t),
      err: (t) => {
        metricsUrl ??= /metrics on (http:\S+)/.exec(t)?.[1];
      },
      endRunPhase: end.signal,
      onProgress: (aggregate) => {
        let unreachable = 0;
        for (const [key, n] of aggregate.errors) if (key.endsWith('|ENETUNREACH')) unreachable += n;
        // 200 with a new configuration, 304 when it is unchanged: both are answers.
        const configOk = (aggregate.requests.get('config|200') ?? 0) + (aggregate.requests.get('config|304') ?? 0);
        // Config answers cannot grow while every device is partitioned: the first count seen with
        // errors is the one before the window; growth past it by three polls a device is recovery.
        if (unreachable > 0 && configOkAtPartition === undefined) {
          configOkAtPartition = configOk;
          partitionSeenAt = Date.now();
          // Inside the window (it lasts 15 s): the annotation gauge counts the devices it hits.
          if (metricsUrl) scrapeInWindow = fetch(metricsUrl).then((r) => r.text());
        }
        partitioned = unreachable;
        if (configOkAtPartition !== undefined) configOkAfter = configOk - configOkAtPartition;
        // Polls are not spread evenly over the devices: also wait three poll intervals past the window's end.
        const waitedMs = partitionSeenAt === undefined ? 0 : Date.now() - partitionSeenAt;
        if (!end.signal.aborted && configOkAfter >= 3 * DEVICES && waitedMs >= 15_000 + 30_000) end.abort();
        lastRequests = [...aggregate.requests].map(([k, n]) => `${k} ${n}`).join(', ');
      },
    });
    clearTimeout(backstop);
    expect(partitioned, 'no request failed with ENETUNREACH').toBeGreaterThan(0);
    expect(configOkAfter, `the devices did not poll their configuration again after the window; requests: ${lastRequests}`).toBeGreaterThanOrEqual(3 * DEVICES);
    const s = result.summary!;
    expect(s.endpoints.config!.byError.ENETUNREACH).toBeGreaterThan(0);
    // The fault shows as its window on the time series and as the Prometheus gauge during it.
    expect(s.series!.events.filter((e) => e.kind.startsWith('fault-'))).toEqual([
      { tMs: 20_000, kind: 'fault-start', label: expect.stringContaining('partition') },
      { tMs: 35_000, kind: 'fault-end', label: expect.stringContaining('partition') },
    ]);
    expect(s.series!.events.some((e) => e.kind === 'action' && e.label.startsWith('partition'))).toBe(false);
    expect(scrapeInWindow, 'no scrape during the partition').toBeDefined();
    expect(await scrapeInWindow).toMatch(new RegExp(`^evesim_faults_active\\{fault="partition"\\} ${DEVICES}$`, 'm'));
    expect(s.faults).toHaveLength(1);
    const f = s.faults![0]!;
    expect(f).toMatchObject({ kind: 'partition', target: 'all devices', startMs: 20_000, endMs: 35_000, devices: DEVICES });
    // Devices hit: those that sent a request within the window (EVE's timers decide how many).
    expect(f.devicesHit).toBeGreaterThan(0);
    expect(f.devicesHit).toBeLessThanOrEqual(DEVICES);
    // Every request that failed with ENETUNREACH is one the fault changed.
    const unreachable = Object.values(s.endpoints).reduce((n, e) => n + (e.byError.ENETUNREACH ?? 0), 0);
    expect(f.requests).toBe(unreachable);
    // Recovery: every device the partition hit got a configuration answer after it (the test waited for that).
    expect(f.recovery!.devices).toBe(f.devicesHit);
    expect(f.recovery!.maxMs).toBeGreaterThan(0);
    expect(s.thresholds.find((t) => t.source === 'fault_recovery.ratio == 1')).toMatchObject({ passed: true });
    // Recovery: every device onboarded, and the drain delivered everything queued in the outage.
    expect(s.devices.onboarded).toBe(DEVICES);
    expect(s.undelivered.total).toBe(0);
    expect(result.exitCode).toBe(0);
    // The v1 devices' own connections: broken by the partition (both poll every 10 s, so within
    // the 15 s window), made again after it, resuming the TLS session (no reboot: EVE still has it).
    const v1 = s.connections!.v1!;
    expect(v1.devices).toBe(V1_DEVICES);
    expect(v1.connectionsLost).toBeGreaterThanOrEqual(V1_DEVICES);
    expect(v1.resumed).toBeGreaterThanOrEqual(V1_DEVICES);
    expect(v1.deviceRestarts).toBe(0);
    // The partition swallowed each lost connection's FIN: left open until the device connected again.
    expect(v1.abandonedByNetwork).toBe(v1.connectionsLost);
    expect(v1.resetByNetwork).toBe(0);
    expect(report.join('')).toMatch(/connections +API v1 \(mutual TLS\) 2 devices: .* lost to network faults \(\d+ left open until the network was back\)/);
    expect(report.join('')).toMatch(/faults +1 injected by the generator\n +partition +all devices, 20s → 35s: \d of 6 devices hit, \d+ requests affected; \d of \d current again, the last [\d.]+s after the end/);
  }, 200_000);
});
