// The end-of-run drain (a simulator action, src/device/core/graceful-drain.ts): a draining device stops
// producing at once and, from its own start instant, delivers what it holds by EVE's sending rules
// (log files one tick at a time, info queue kicked once then EVE's backoff, flow log backoff); what
// a refusing controller keeps back is counted undelivered at stop.

import { describe, expect, it } from 'vitest';
import type { TransportRequest } from '../src/device/ports.js';
import { DRAIN_START_SPREAD_SHARE, drainLogIntervalMs, drainStartOffsetMs } from '../src/device/core/graceful-drain.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import { onboard, payloadOf, rig, type Rig } from './device-harness.js';
import { readNewlogsFile } from '../src/protocol/newlogs.js';

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
  it('delivers every queued info, log file and flow log from its start instant on EVE\'s log cadence, and produces nothing new', async () => {
    const r = await deviceWithBacklog();
    r.controller.hook = undefined; // the controller is healthy again
    const drainAt = r.time.now();
    const before = r.controller.requests.length;
    const deliverFrom = drainAt + 2_000;
    r.device.drain(deliverFrom);
    const held = r.device.backlog();
    // Nothing goes before the device's own start instant.
    await r.time.advance(1_999);
    expect(r.controller.requests.length).toBe(before);
    await r.time.advance(1);
    // Logs go one device file and one app file per tick, ticks 2-3 s apart (EVE's shortest
    // interval, ±20 %): a backlog of n files per kind takes n ticks, not one burst.
    await r.time.advance(3_000 * (held.logs + 1));
    expect(r.device.backlog()).toEqual({ info: 0, logs: 0, flowlog: 0 });
    expect(r.device.drained).toBe(true);
    const sent = r.controller.requests.slice(before);
    for (const e of ['info', 'flowlog', 'newlogs', 'appnewlogs'] as const) expect(sent.some((q) => q.endpoint === e)).toBe(true);
    for (const q of sent) expect(q.at).toBeGreaterThanOrEqual(deliverFrom);
    // Info and flow logs are kicked at the start instant, not on EVE's timers (1 min info re-run, flow log backoff).
    for (const q of sent.filter((x) => x.endpoint === 'info' || x.endpoint === 'flowlog')) expect(q.at - deliverFrom).toBeLessThan(1_000);
    for (const e of ['newlogs', 'appnewlogs'] as const) {
      const at = sent.filter((q) => q.endpoint === e).map((q) => q.at);
      expect(at.length).toBeGreaterThan(0);
      expect(at[0]! - deliverFrom).toBeLessThan(1_000);
      for (let k = 1; k < at.length; k++) expect(at[k]! - at[k - 1]!).toBeGreaterThanOrEqual(2_000);
    }
    // Nothing new is produced while draining: no config polls, metrics, periodic info, log lines or flow windows.
    const n = r.controller.requests.length;
    await r.time.advance(600_000);
    expect(r.controller.requests.slice(n).map((q) => q.endpoint)).toEqual([]);
    expect(r.device.backlog()).toEqual({ info: 0, logs: 0, flowlog: 0 });
    r.device.stop();
    expect(r.device.stats().undelivered).toEqual({ info: 0, logs: 0, flowlog: 0 });
  });

  it('closes its open log files at its own start instant, with the lines written up to the drain, or at stop if that comes first', async () => {
    // Before the first upload tick (90 s): every line since boot is in the open file.
    const timestamps = (r: Rig) =>
      r.controller.of('newlogs').flatMap((q) => readNewlogsFile(payloadOf(r, q)).entries ?? []).map((e) => (e.timestamp?.seconds ?? 0) * 1000 + (e.timestamp?.nanos ?? 0) / 1e6);
    const r = rig({ behaviour: { logLinesPerSec: 5 } });
    await onboard(r);
    await r.time.advance(40_000);
    const drainAt = r.time.now();
    r.device.drain(drainAt + 3_000);
    expect(r.device.backlog().logs).toBe(0);
    await r.time.advance(2_999);
    expect(r.controller.of('newlogs')).toEqual([]);
    expect(r.device.drained).toBe(false);
    await r.time.advance(10_000);
    const lines = timestamps(r);
    expect(lines.length).toBeGreaterThan(100);
    expect(Math.max(...lines)).toBeLessThanOrEqual(drainAt);
    expect(Math.max(...lines)).toBeGreaterThan(drainAt - 5_000);
    expect(r.device.drained).toBe(true);

    // Stopped before its start instant: the lines are closed then and counted undelivered.
    const early = rig({ behaviour: { logLinesPerSec: 5 } });
    await onboard(early);
    await early.time.advance(40_000);
    early.device.drain(early.time.now() + 5_000);
    early.device.stop();
    expect(early.device.stats().undelivered.logs).toBeGreaterThanOrEqual(1);
    expect(early.controller.of('newlogs')).toEqual([]);
  });

  it('keeps its start instant when the drain begins while an upload tick awaits its answer', async () => {
    const r = rig({ behaviour: { logLinesPerSec: 5 } });
    await onboard(r);
    const t0 = r.controller.requests[0]!.at;
    // The first upload tick goes at 90 s after boot; its answer takes 10 s.
    r.controller.latencyMs = 10_000;
    await r.time.advance(t0 + 92_000 - r.time.now());
    expect(r.controller.of('newlogs')).toHaveLength(1);
    const deliverFrom = r.time.now() + 13_000; // after the answer, before any later normal tick
    r.device.drain(deliverFrom);
    await r.time.advance(14_000);
    const sent = r.controller.of('newlogs').map((q) => q.at);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toBeGreaterThanOrEqual(deliverFrom);
    expect(sent[1]! - deliverFrom).toBeLessThan(1_000);
  });

  it('retries a controller that answers 503 by EVE\'s own rules, not a busy loop, and counts what is left at stop', async () => {
    const r = await deviceWithBacklog();
    const queued = r.device.backlog();
    const before = r.controller.requests.length;
    r.device.drain();
    // drain() itself closes nothing (a worker drains every device in one pass); the device is not
    // drained while lines written before the drain are still to be closed ...
    expect(r.device.backlog()).toEqual(queued);
    expect(r.device.drained).toBe(false);
    // ... which its first drain tick, at its start instant (here now), does: the open log files
    // (lines since the last upload tick) join the backlog.
    await r.time.advance(1);
    const backlog = r.device.backlog();
    expect(backlog.logs).toBeGreaterThan(queued.logs);
    expect({ info: backlog.info, flowlog: backlog.flowlog }).toEqual({ info: queued.info, flowlog: queued.flowlog });
    await r.time.advance(14_999);
    expect(r.device.drained).toBe(false);
    expect(r.device.backlog()).toEqual(backlog);
    const tries = r.controller.requests.slice(before);
    const count = (e: string): number => tries.filter((q) => q.endpoint === e).length;
    // Info (§6.5): one kicked pass, then the item's EVE backoff of at least 1 min: no retry within 15 s.
    expect(count('info')).toBeGreaterThanOrEqual(1);
    expect(count('info')).toBeLessThanOrEqual(backlog.info);
    // Flow logs (§9): 0, 1, 3, 7 s … (backoff 1, 2, 4, 8 s): 4 or 5 attempts in 15 s.
    expect(count('flowlog')).toBeGreaterThanOrEqual(4);
    expect(count('flowlog')).toBeLessThanOrEqual(5);
    // App logs (§8.3): one file per tick, ticks 2-3 s apart: 5 to 8 attempts in 15 s.
    expect(count('appnewlogs')).toBeGreaterThanOrEqual(5);
    expect(count('appnewlogs')).toBeLessThanOrEqual(8);
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

  it('log ticks while draining: EVE\'s 3 s interval ±20 % (whole seconds), 10 s ±20 % after a 429', () => {
    const rng = SeededRng.create(7, 0, 'drain-test');
    const plain = Array.from({ length: 200 }, () => drainLogIntervalMs(rng, false));
    expect(new Set(plain)).toEqual(new Set([2_000, 3_000]));
    const after429 = Array.from({ length: 200 }, () => drainLogIntervalMs(rng, true));
    expect(new Set(after429)).toEqual(new Set([8_000, 9_000, 10_000, 11_000]));
  });

  it('device start offsets: seeded, reproducible, spread over the first third of the window', () => {
    const window = 15_000;
    const offsets = Array.from({ length: 10_000 }, (_, i) => drainStartOffsetMs(42, i, window));
    expect(offsets).toEqual(Array.from({ length: 10_000 }, (_, i) => drainStartOffsetMs(42, i, window)));
    expect(offsets.some((o, i) => o !== drainStartOffsetMs(43, i, window))).toBe(true);
    const spread = window * DRAIN_START_SPREAD_SHARE;
    for (const o of offsets) {
      expect(Number.isInteger(o)).toBe(true);
      expect(o).toBeGreaterThanOrEqual(0);
      expect(o).toBeLessThan(spread);
    }
    // A ramp, not a spike: every tenth of the spread gets about a tenth of the devices.
    const bins = new Array<number>(10).fill(0);
    for (const o of offsets) bins[Math.floor((o / spread) * 10)]!++;
    for (const b of bins) expect(b).toBeGreaterThan(800);
    for (const b of bins) expect(b).toBeLessThan(1_200);
    // No window, no spread.
    expect(drainStartOffsetMs(42, 5, 0)).toBe(0);
  });
});
