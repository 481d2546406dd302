// At stop a device counts the log lines it wrote since its last close as undelivered, without
// making them: no generation, no deflate (log-uploader.ts, stop). An overloaded 100,000-device run
// spent 19 s of each worker's loop at its end making those files only to count them.

import { describe, expect, it, vi } from 'vitest';
import { readNewlogsFile } from '../src/protocol/newlogs.js';
import { onboard, payloadOf, rig, type Rig } from './device-harness.js';

const APP = 'a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61';
const NI = 'c0ffee00-0000-4000-8000-000000000001';
const empty = new Uint8Array(0);
const refuseLogs = (r: Rig) => {
  r.controller.hook = (q) => (q.endpoint === 'newlogs' || q.endpoint === 'appnewlogs' ? { status: 503, headers: {}, body: empty } : undefined);
};
const withApp = (r: Rig) => {
  r.controller.config = {
    apps: [{ uuidandversion: { uuid: APP, version: '3' }, displayname: 'gateway', activate: true, interfaces: [{ name: 'eth0', networkId: NI }] }],
    networkInstances: [{ uuidandversion: { uuid: NI, version: '1' }, displayname: 'default', activate: true, instType: 2 }],
  };
};
const deviceLinesSent = (r: Rig, upTo = Infinity) => r.controller.of('newlogs').slice(0, upTo).reduce((n, q) => n + (readNewlogsFile(payloadOf(r, q)).entries?.length ?? 0), 0);

describe('log lines at stop', () => {
  it('counts every line the device wrote: the delivered ones, the waiting files and the open file make up its msgids', async () => {
    const r = rig({ behaviour: { logLinesPerSec: 5 } });
    await onboard(r);
    await r.time.advance(200_000);
    const accepted = r.controller.of('newlogs').length;
    expect(deviceLinesSent(r)).toBeGreaterThan(0);
    refuseLogs(r);
    await r.time.advance(200_000);
    const waiting = r.device.backlog().logs;
    expect(waiting).toBeGreaterThan(0);
    await r.time.advance(7_000); // lines since the last close, in the open file
    r.device.stop();
    const s = r.device.stats();
    expect(s.undelivered.logs).toBe(waiting + 1);
    expect(deviceLinesSent(r, accepted) + s.undeliveredLogEntries).toBe(r.device.generator.deviceMsgidNext);
    expect(s.undeliveredLogEntries).toBeGreaterThan(0);
  });

  it('makes no line and deflates nothing at stop', async () => {
    const r = rig({ behaviour: { logLinesPerSec: 5, apps: [{ name: 'gateway', logLinesPerSec: 2, flowsPerMessage: 0 }] } });
    withApp(r);
    await onboard(r);
    refuseLogs(r);
    await r.time.advance(200_000);
    const waiting = r.device.backlog().logs;
    await r.time.advance(7_000);
    const deviceLines = vi.spyOn(r.device.generator, 'visitDeviceEntries');
    const appLines = vi.spyOn(r.device.generator, 'visitAppEntries');
    const before = r.device.generator.deviceMsgidNext;
    r.device.stop();
    expect(deviceLines).not.toHaveBeenCalled();
    expect(appLines).not.toHaveBeenCalled();
    // The device's open file and the app's: one undelivered file each, their lines counted.
    const s = r.device.stats();
    expect(s.undelivered.logs).toBe(waiting + 2);
    expect(r.device.generator.deviceMsgidNext).toBeGreaterThan(before);
  });

  it('counts only the lines written before the drain began, however late the stop comes', async () => {
    const stoppedAfter = async (ms: number) => {
      const r = rig({ behaviour: { logLinesPerSec: 5 } });
      await onboard(r);
      await r.time.advance(40_000);
      r.device.drain(r.time.now() + 30_000); // its drain tick would come 30 s later
      await r.time.advance(ms);
      r.device.stop();
      return r.device.stats();
    };
    const soon = await stoppedAfter(1_000);
    const late = await stoppedAfter(20_000);
    expect(soon.undeliveredLogEntries).toBeGreaterThan(100);
    expect(late.undeliveredLogEntries).toBe(soon.undeliveredLogEntries);
    expect(late.undelivered.logs).toBe(soon.undelivered.logs);
  });
});
