// The end-of-run drain (a simulator action, src/device/core/graceful-drain.ts): a draining device stops
// producing and delivers what it has queued at once; what a refusing controller keeps back is
// counted undelivered at stop.

import { describe, expect, it } from 'vitest';
import type { TransportRequest } from '../src/device/ports.js';
import { drainRetryDelayMs } from '../src/device/core/graceful-drain.js';
import { onboard, rig, type Rig } from './device-harness.js';

const APP = 'a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61';
const NI = 'c0ffee00-0000-4000-8000-000000000001';
const answer = (status: number) => ({ status, headers: {}, body: new Uint8Array(0) });
const RELIABLE = new Set(['info', 'flowlog', 'newlogs', 'appnewlogs']);

/** A device with one running app (app logs and flow logs), whose reliable uploads were refused with 503 for a while. */
async function deviceWithBacklog(): Promise<Rig> {
  const r = rig({ behaviour: { flowlogIntervalMs: 30_000, logLinesPerSec: 1 } });
  r.controller.config = {
    apps: [{ uuidandversion: { uuid: APP, version: '3' }, displayname: 'nginx-gateway', activate: true, interfaces: [{ name: 'eth0', networkId: NI }] }],
    networkInstances: [{ uuidandversion: { uuid: NI, version: '1' }, displayname: 'default', activate: true, instType: 2 }],
  };
  await onboard(r);
  r.controller.hook = (q: TransportRequest) => (RELIABLE.has(q.endpoint) ? answer(503) : undefined);
  // A new configuration makes a new ZInfoDevice; the 503s put it into EVE's 1-minute item backoff.
  r.controller.config = { ...r.controller.config, device_name: 'drain-test' };
  await r.time.advance(200_000);
  const b = r.device.backlog();
  expect(b.info).toBeGreaterThan(0);
  expect(b.logs).toBeGreaterThan(0);
  expect(b.flowlog).toBeGreaterThan(0);
  return r;
}

describe('graceful drain', () => {
  it('delivers every queued info, log file and flow log within seconds, and produces nothing new', async () => {
    const r = await deviceWithBacklog();
    r.controller.hook = undefined; // the controller is healthy again
    const drainAt = r.time.now();
    const before = r.controller.requests.length;
    r.device.drain();
    await r.time.advance(3_000);
    expect(r.device.backlog()).toEqual({ info: 0, logs: 0, flowlog: 0 });
    expect(r.device.drained).toBe(true);
    const sent = r.controller.requests.slice(before);
    for (const e of ['info', 'flowlog', 'newlogs', 'appnewlogs'] as const) expect(sent.some((q) => q.endpoint === e)).toBe(true);
    // Kicked at once, not on EVE's timers (1 min info re-run, 90 s log ticks, flow log backoff).
    for (const q of sent) expect(q.at - drainAt).toBeLessThan(1_000);
    // Nothing new is produced while draining: no config polls, metrics, periodic info, log lines or flow windows.
    const n = r.controller.requests.length;
    await r.time.advance(600_000);
    expect(r.controller.requests.slice(n).map((q) => q.endpoint)).toEqual([]);
    expect(r.device.backlog()).toEqual({ info: 0, logs: 0, flowlog: 0 });
    r.device.stop();
    expect(r.device.stats().undelivered).toEqual({ info: 0, logs: 0, flowlog: 0 });
  });

  it('keeps retrying a controller that answers 503, quickly but bounded, and counts what is left at stop', async () => {
    const r = await deviceWithBacklog();
    const queued = r.device.backlog();
    const before = r.controller.requests.length;
    r.device.drain();
    // Draining closes the open log files (lines since the last upload tick) into the backlog.
    const backlog = r.device.backlog();
    expect(backlog.logs).toBeGreaterThan(queued.logs);
    expect({ info: backlog.info, flowlog: backlog.flowlog }).toEqual({ info: queued.info, flowlog: queued.flowlog });
    await r.time.advance(15_000);
    expect(r.device.drained).toBe(false);
    expect(r.device.backlog()).toEqual(backlog);
    const tries = r.controller.requests.slice(before);
    // 0, 0.5, 1, 2, 4, 4, 4 s …: a handful of attempts per queue in 15 s, not a busy loop.
    for (const e of ['info', 'flowlog', 'appnewlogs'] as const) {
      const n = tries.filter((q) => q.endpoint === e).length;
      expect(n).toBeGreaterThanOrEqual(3);
      expect(n).toBeLessThanOrEqual(10 * Math.max(1, backlog.info + backlog.flowlog + backlog.logs));
    }
    r.device.stop();
    const s = r.device.stats().undelivered;
    expect(s.info).toBe(backlog.info);
    expect(s.flowlog).toBe(backlog.flowlog);
    expect(s.logs).toBe(backlog.logs); // no new file was closed at stop: draining generates no lines
  });

  it('a device not yet onboarded, or down, has nothing to deliver', async () => {
    const r = rig();
    r.controller.hook = (q) => (q.endpoint === 'certs' ? 'transport-error' : undefined);
    r.device.start();
    await r.time.advance(5_000);
    r.device.drain();
    expect(r.device.drained).toBe(true);
    const n = r.controller.requests.length;
    await r.time.advance(60_000);
    expect(r.controller.requests.length).toBe(n); // no more onboarding rounds
  });

  it('retry delays while draining: 0, then 0.5 s doubling to 4 s', () => {
    expect([0, 1, 2, 3, 4, 5, 50].map(drainRetryDelayMs)).toEqual([0, 500, 1000, 2000, 4000, 4000, 4000]);
  });
});
