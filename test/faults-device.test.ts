// Faults that act on the device itself, on a real VirtualDevice against the fake controller on a
// fake clock: clock-skew (timestamps and certificate validity on the skewed clock, wake-ups and
// latencies in real time) and power-loss (down for the window, back with boot reason power-fail,
// keeping what EVE keeps on disk).

import { describe, expect, it } from 'vitest';
import { info } from '../src/gen/eve-types.js';
import type { DeviceOptions } from '../src/device/device-options.js';
import type { Transport } from '../src/device/ports.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import { VirtualDevice } from '../src/device/virtual-device.js';
import { DeviceClockSkew } from '../src/faults/clock-skew.js';
import { FaultPlan } from '../src/faults/fault-plan.js';
import type { FaultAction } from '../src/faults/fault-spec.js';
import { ShardFaults } from '../src/faults/shard-faults.js';
import type { GroupSpec } from '../src/scenario/scenario-types.js';
import { BEHAVIOUR, FakeController, FakeTime, fixtures, onboard, type Rig } from './device-harness.js';

const HOUR = 3_600_000;

function planOf(timeline: FaultAction[]): FaultPlan {
  return FaultPlan.of({ seed: 1, groups: [{ name: 'g', count: 1 }] as GroupSpec[], timeline });
}

/** A rig whose device runs on a clock skewed by `faults` from the rig's start. */
function skewedRig(faults: FaultAction[]): Rig & { skew: DeviceClockSkew } {
  const { pki, identity } = fixtures();
  const time = new FakeTime();
  const controller = new FakeController(time, pki, identity);
  const skew = new DeviceClockSkew(time, planOf(faults).forDevice(0, ['clock-skew']), time.now());
  const findings: Rig['findings'] = [];
  const lifecycle: Rig['lifecycle'] = [];
  const opts: DeviceOptions = {
    index: 0,
    identity,
    behaviour: BEHAVIOUR,
    rootCertPem: pki.root.certPem,
    clock: skew.clock,
    scheduler: skew.scheduler(time),
    transport: skew.transport(controller),
    rng: SeededRng.create(7, 0, 'device'),
    onFinding: (f) => findings.push(f),
    onStateChange: (_from, to) => lifecycle.push(to),
  };
  return { time, controller, device: new VirtualDevice(opts), findings, lifecycle, skew };
}

const stampMs = (m: info.ZInfoMsg): number => Number(m.atTimeStamp!.seconds) * 1000 + Math.floor((m.atTimeStamp!.nanos ?? 0) / 1e6);

describe('clock-skew', () => {
  it("the device's timestamps run 2 h ahead in the window; its wake-ups and latencies stay in real time", async () => {
    const r = skewedRig([{ atMs: 0, action: 'clock-skew', devices: [0], offsetMs: 2 * HOUR, forMs: 600_000 }]);
    await onboard(r);
    const infos = r.controller.infos();
    expect(infos.length).toBeGreaterThan(0);
    const sentAt = r.controller.of('info').map((q) => q.at);
    infos.forEach((m, i) => {
      const ahead = stampMs(m) - sentAt[i]!;
      expect(ahead).toBeGreaterThan(2 * HOUR - 5_000);
      expect(ahead).toBeLessThanOrEqual(2 * HOUR);
    });
    // Requests carry their due time in real time: the fake controller sees them due just before they came.
    for (const q of r.controller.requests) {
      expect(q.at - q.dueAt).toBeGreaterThanOrEqual(0);
      expect(q.at - q.dueAt).toBeLessThan(60_000);
    }
    // And the device went on polling in real time: several config polls within the first minutes.
    expect(r.controller.of('config').length).toBeGreaterThanOrEqual(2);
    await r.time.advanceTo(r.time.now() + 600_000);
    expect(r.skew.offsetMs()).toBe(0);
    expect(r.device.opts.clock.now()).toBe(r.time.now());
  });

  it('a clock 25 years ahead finds the controller certificates expired and never onboards', async () => {
    const r = skewedRig([{ atMs: 0, action: 'clock-skew', devices: [0], offsetMs: 25 * 365 * 24 * HOUR }]);
    r.device.start();
    await r.time.advance(120_000);
    expect(r.device.uuid).toBe('');
    expect(r.findings.length).toBeGreaterThan(0);
    expect(r.findings[0]).toMatchObject({ endpoint: 'certs', kind: 'bad-certs' });
    expect(r.findings[0]!.detail).toMatch(/valid|expired/i);
  });

  it('a device without skew faults keeps the worker clock', () => {
    const time = new FakeTime();
    const skew = new DeviceClockSkew(time, [], time.now());
    expect(skew.clock.now()).toBe(time.now());
  });
});

describe('power-loss', () => {
  it('goes down at its instant, stays off for its window, boots with reason power-fail and keeps its UUID', async () => {
    const { pki, identity } = fixtures();
    const time = new FakeTime();
    const controller = new FakeController(time, pki, identity);
    // The worker's transport, wrapped by the faults once the run's start is known (as a shard does).
    let transport: Transport = controller;
    const device = new VirtualDevice({
      index: 0,
      identity,
      behaviour: BEHAVIOUR,
      rootCertPem: pki.root.certPem,
      clock: time,
      scheduler: time,
      transport: { request: (req) => transport.request(req) },
      rng: SeededRng.create(7, 0, 'device'),
    });
    const r = { time, controller, device, findings: [], lifecycle: [] } as Rig;
    await onboard(r);
    const uuid = device.uuid;
    const registers = controller.of('register').length;
    const uuids = controller.of('uuid').length;

    const start = time.now();
    // A second loss while the device is still down does nothing to it and does not count it again.
    const faults = new ShardFaults(
      {
        seed: 1,
        groups: [{ name: 'g', count: 1 }] as GroupSpec[],
        timeline: [
          { atMs: 10_000, action: 'power-loss', devices: [0], forMs: 45_000 },
          { atMs: 20_000, action: 'power-loss', devices: [0], forMs: 5_000 },
        ],
      },
      time,
      0,
    );
    transport = faults.wrapTransport(controller, start, 1);
    faults.schedule(time, start, { count: 1, indexOf: (l) => l, device: () => device }, (_i, _w, err) => {
      throw err;
    });
    await time.advanceTo(start + 10_001);
    expect(device.lifecycle).toBe('idle');
    const requestsWhileDown = controller.requests.length;
    await time.advanceTo(start + 54_000);
    expect(controller.requests.length).toBe(requestsWhileDown); // off: it sends nothing
    expect(device.lifecycle).toBe('idle');
    await time.advanceTo(start + 200_000);
    expect(device.lifecycle).toBe('onboarded');
    expect(device.uuid).toBe(uuid); // on disk: /persist/status/uuid
    expect(controller.of('register')).toHaveLength(registers); // no new registration
    expect(controller.of('uuid')).toHaveLength(uuids);
    const dinfo = controller.infos().filter((m) => m.dinfo).pop()!.dinfo!;
    expect(dinfo.last_boot_reason).toBe(info.BootReason.BOOT_REASON_POWER_FAIL);
    expect(dinfo.restartCounter).toBe(1);
    // Current again at its first configuration answer after the power came back (at 55 s).
    const firstConfigAfter = controller.requests.find((q) => q.endpoint === 'config' && q.at >= start + 55_000)!;
    const [loss, second] = faults.tallies([0])!;
    expect(loss).toMatchObject({ id: 0, devices: 1, devicesHit: 1, requests: 0, recovered: 1 });
    expect(loss!.recoveryMs).toBeGreaterThanOrEqual(firstConfigAfter.at - start - 55_000);
    expect(loss!.recoveryMs).toBeLessThan(60_000);
    expect(second).toEqual({ id: 1, devices: 1, devicesHit: 0, requests: 0, recovered: 0, recoveryMs: 0 });
  });
});
