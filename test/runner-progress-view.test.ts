import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { formatProgressLine, ProgressView } from '../src/runner/progress-view.js';
import { FleetAggregate } from '../src/runner/aggregate.js';
import { MetricRecorder } from '../src/fleet/metric-recorder.js';
import type { FleetDelta } from '../src/fleet/fleet-delta.js';

describe('progress line', () => {
  it('shows elapsed/total, onboarded/total, req/s, errors, config p99 and worst loop lag', () => {
    expect(
      formatProgressLine({
        elapsedMs: 12_400,
        durationMs: 60_000,
        onboarded: 830,
        totalDevices: 1000,
        reqPerSec: 1234.4,
        errors: 3,
        configP99Ms: 45.2,
        worstLoopLagMs: 12,
        worstLoopWorker: 1,
      }),
    ).toBe('0:12/1:00  onboarded 830/1000  1234 req/s  errors 3  config p99 45 ms  loop lag p99 12 ms (w1)');
  });

  it('handles hours, sub-10 ms, seconds and missing figures', () => {
    expect(
      formatProgressLine({
        elapsedMs: 3_725_000,
        durationMs: 7_200_000,
        onboarded: 0,
        totalDevices: 10,
        reqPerSec: 0,
        errors: 0,
        configP99Ms: 2.345,
        worstLoopLagMs: undefined,
        worstLoopWorker: undefined,
        note: 'preparing identities 3/10',
      }),
    ).toBe('1:02:05/2:00:00  onboarded 0/10  0 req/s  errors 0  config p99 2.3 ms  loop lag p99 -  preparing identities 3/10');
    expect(
      formatProgressLine({
        elapsedMs: 0,
        durationMs: 1000,
        onboarded: 0,
        totalDevices: 1,
        reqPerSec: 0,
        errors: 0,
        configP99Ms: 12_500,
        worstLoopLagMs: 0.4,
        worstLoopWorker: 0,
      }),
    ).toBe('0:00/0:01  onboarded 0/1  0 req/s  errors 0  config p99 12.5 s  loop lag p99 0.4 ms (w0)');
  });

  it('says how many onboarded devices are healthy and failing now, so a refused fleet does not read as fine', () => {
    expect(
      formatProgressLine({
        elapsedMs: 30_000,
        durationMs: 60_000,
        onboarded: 100,
        totalDevices: 100,
        healthy: 0,
        failing: 100,
        reqPerSec: 50,
        errors: 900,
        configP99Ms: 3,
        worstLoopLagMs: 1,
        worstLoopWorker: 0,
      }),
    ).toBe('0:30/1:00  onboarded 100/100 (now healthy 0, failing 100)  50 req/s  errors 900  config p99 3.0 ms  loop lag p99 1.0 ms (w0)');
  });

  it('computes figures from the aggregate and prints plain lines when not a TTY', () => {
    const agg = new FleetAggregate();
    let now = 1_000_000;
    const written: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        written.push(String(chunk));
        cb();
      },
    }) as unknown as NodeJS.WriteStream;
    const view = new ProgressView({ aggregate: agg, totalDevices: 10, durationMs: 60_000, stream, tty: false, now: () => now });
    view.start(now);
    const r = new MetricRecorder();
    for (let i = 0; i < 50; i++) {
      r.onOutcome({
        endpoint: 'config',
        deviceIndex: 0,
        method: 'POST',
        path: '/',
        status: i < 48 ? 200 : 500,
        dueAt: 0,
        sentAt: 0,
        doneAt: i < 49 ? 10 : 300,
        requestHeaders: {},
      });
    }
    const d: FleetDelta = {
      workerId: 3,
      seq: 0,
      final: false,
      atMs: now,
      intervalMs: 1000,
      ...r.takeDelta(),
      lifecycle: { idle: 2, 'fetching-certs': 0, registering: 0, uuid: 0, attesting: 1, onboarded: 7, stopped: 0 },
      onboardedEver: 7,
      started: 8,
      shardSize: 10,
      queueBacklog: {},
      undelivered: {},
      loop: { p50Ms: 1, p99Ms: 33, maxMs: 40, utilisation: 0.5 },
      pendingTimers: 0,
    };
    agg.merge(d);
    now += 10_000;
    view.render();
    view.stop();
    expect(written).toEqual(['0:10/1:00  onboarded 7/10  5 req/s  errors 2  config p99 300 ms  loop lag p99 33 ms (w3)\n']);
  });
});
