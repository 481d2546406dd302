// The worker reads its devices' reliable-message totals from one ReliableBacklog that their queues
// move as they change (src/device/core/reliable-backlog.ts), instead of asking every device each
// second. These tests hold those totals to the sums of the devices' own counts through everything
// that changes them: queueing, delivery, refusals, drops, EVE's log quota, reboots and stop.

import { describe, expect, it } from 'vitest';
import type { TransportRequest } from '../src/device/ports.js';
import { ReliableBacklog } from '../src/device/core/reliable-backlog.js';
import { onboard, rig, type Rig } from './device-harness.js';

const APP = 'a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61';
const NI = 'c0ffee00-0000-4000-8000-000000000001';
const answer = (status: number) => ({ status, headers: {}, body: new Uint8Array(0) });
const RELIABLE = new Set(['info', 'flowlog', 'newlogs', 'appnewlogs']);

type Kinds = { info: number; logs: number; flowlog: number };
const zero = (): Kinds => ({ info: 0, logs: 0, flowlog: 0 });

/** The same figures summed from each device, the way the worker used to read them. */
function summed(rigs: Rig[]): { waiting: Kinds; undelivered: Kinds; droppedByQuotaLogs: number } {
  const waiting = zero();
  const undelivered = zero();
  let droppedByQuotaLogs = 0;
  for (const r of rigs) {
    const b = r.device.backlog();
    const s = r.device.stats();
    for (const k of ['info', 'logs', 'flowlog'] as const) {
      waiting[k] += b[k];
      undelivered[k] += s.undelivered[k];
    }
    droppedByQuotaLogs += s.droppedByQuota.logs;
  }
  return { waiting, undelivered, droppedByQuotaLogs };
}

function totals(b: ReliableBacklog): ReturnType<typeof summed> {
  return { waiting: { ...b.waiting }, undelivered: { ...b.undelivered }, droppedByQuotaLogs: b.droppedByQuotaLogs };
}

describe('ReliableBacklog', () => {
  it('settle moves the total by the difference and returns the new count', () => {
    const b = new ReliableBacklog();
    let a = b.settle('logs', 0, 3);
    let c = b.settle('logs', 0, 2);
    expect(b.waiting.logs).toBe(5);
    a = b.settle('logs', a, 1);
    c = b.settle('logs', c, 0);
    expect([a, c, b.waiting.logs]).toEqual([1, 0, 1]);
    expect(b.waiting.info + b.waiting.flowlog).toBe(0);
  });

  it('equals the sum of its devices\' own counts through outages, refusals, EVE\'s log quota, a reboot and stop', async () => {
    const backlog = new ReliableBacklog();
    const rigs = [1, 2, 3].map((seed) =>
      rig({ seed, behaviour: { flowlogIntervalMs: 30_000, logLinesPerSec: 10, logQuotaBytes: 100_000 }, options: { backlog } }),
    );
    for (const r of rigs) {
      r.controller.config = {
        apps: [{ uuidandversion: { uuid: APP, version: '3' }, displayname: 'nginx-gateway', activate: true, interfaces: [{ name: 'eth0', networkId: NI }] }],
        networkInstances: [{ uuidandversion: { uuid: NI, version: '1' }, displayname: 'default', activate: true, instType: 2 }],
      };
      await onboard(r);
    }
    const peak = zero();
    const check = (): void => {
      const want = summed(rigs);
      expect(totals(backlog)).toEqual(want);
      for (const k of ['info', 'logs', 'flowlog'] as const) peak[k] = Math.max(peak[k], want.waiting[k]);
    };
    const run = async (ms: number): Promise<void> => {
      for (let t = 0; t < ms; t += 10_000) {
        for (const r of rigs) await r.time.advance(10_000);
        check();
      }
    };
    check();
    await run(120_000);

    // An outage of the reliable endpoints: queues grow, flow logs overflow their queue, log files
    // go over EVE's quota; a new configuration makes a new device info to queue.
    for (const r of rigs) {
      r.controller.hook = (q: TransportRequest) => (RELIABLE.has(q.endpoint) ? answer(503) : undefined);
      r.controller.config = { ...r.controller.config, device_name: 'backlog-test' };
    }
    await run(15 * 60_000);
    // A power failure in the outage: the info and flow-log queues live in memory and are lost.
    rigs[0]!.device.rebootNow('power-fail');
    check();
    await run(120_000);

    // Refusals EVE gives up on: info is dropped at once, a log file after ten 4xx answers.
    for (const r of rigs) r.controller.hook = (q: TransportRequest) => (q.endpoint === 'info' || q.endpoint === 'newlogs' ? answer(400) : undefined);
    for (const r of rigs) r.controller.config = { ...r.controller.config, device_name: 'backlog-test-2' };
    await run(20 * 60_000);

    // The controller recovers; then the devices stop with whatever is still queued.
    for (const r of rigs) r.controller.hook = undefined;
    await run(60_000);
    for (const r of rigs) r.device.stop();
    check();

    // Every path was taken, or this test would prove nothing.
    const end = totals(backlog);
    expect(end.waiting).toEqual(zero());
    expect(peak.info).toBeGreaterThan(0);
    expect(peak.logs).toBeGreaterThan(0);
    expect(peak.flowlog).toBeGreaterThan(0);
    expect(end.undelivered.info).toBeGreaterThan(0);
    expect(end.undelivered.logs).toBeGreaterThan(0);
    expect(end.undelivered.flowlog).toBeGreaterThan(0);
    expect(end.droppedByQuotaLogs).toBeGreaterThan(0);
  }, 120_000);
});
