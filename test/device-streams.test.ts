import { describe, expect, it } from 'vitest';
import { readNewlogsFile } from '../src/protocol/newlogs.js';
import { Msg } from '../src/protocol/messages.js';
import { FLOWLOG_QUEUE_LIMIT } from '../src/device/telemetry/flowlog-sender.js';
import { T0, onboard, payloadOf, rig, type Rig } from './device-harness.js';

const APP = 'a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61';
const NI = 'c0ffee00-0000-4000-8000-000000000001';
const empty = new Uint8Array(0);
const answer = (status: number) => ({ status, headers: {}, body: empty });

const withApp = (r: Rig) => {
  r.controller.config = {
    apps: [{ uuidandversion: { uuid: APP, version: '3' }, displayname: 'nginx-gateway', activate: true, interfaces: [{ name: 'eth0', networkId: NI }] }],
    networkInstances: [{ uuidandversion: { uuid: NI, version: '1' }, displayname: 'default', activate: true, instType: 2 }],
  };
};

describe('info delivery (§6.5)', () => {
  it('keeps an info refused with 503 and retries it after the per-item backoff; drops a 404 and counts it', async () => {
    const r = rig();
    await onboard(r);
    await r.time.advance(60_000);
    const base = r.controller.of('info').length;
    let mode: 503 | 404 | 0 = 503;
    r.controller.hook = (q) => (q.endpoint === 'info' && mode !== 0 ? answer(mode) : undefined);
    r.controller.config = { device_name: 'one' }; // new config → new ZInfoDevice
    await r.time.advance(60_000);
    const tries = r.controller.of('info').slice(base);
    expect(tries.length).toBe(1);
    expect(r.device.backlog().info).toBe(1);
    mode = 0;
    // Retried after the 1-minute item backoff, on the queue's exponential re-run timer (1, 2 … min ±30 s).
    await r.time.advance(300_000);
    const delivered = r.controller.of('info').slice(base);
    expect(delivered.length).toBe(2);
    expect(delivered[1]!.at - delivered[0]!.at).toBeGreaterThanOrEqual(60_000);
    expect(r.device.backlog().info).toBe(0);
    expect(r.device.stats().undelivered.info).toBe(0);

    mode = 404;
    r.controller.config = { device_name: 'two' };
    await r.time.advance(120_000);
    expect(r.device.stats().undelivered.info).toBe(1);
    expect(r.device.backlog().info).toBe(0);
    // 404 is not a documented /info answer: also a finding.
    expect(r.findings.some((f) => f.endpoint === 'info' && f.kind === 'undocumented-status')).toBe(true);
  });

  it('counts everything still waiting as undelivered at stop', async () => {
    const r = rig();
    withApp(r);
    await onboard(r);
    r.controller.hook = (q) => (q.endpoint === 'info' || q.endpoint === 'flowlog' || q.endpoint === 'newlogs' || q.endpoint === 'appnewlogs' ? answer(503) : undefined);
    await r.time.advance(400_000);
    const backlog = r.device.backlog();
    expect(backlog.info).toBeGreaterThan(0);
    expect(backlog.logs).toBeGreaterThan(0);
    expect(backlog.flowlog).toBeGreaterThan(0);
    r.device.stop();
    expect(r.device.lifecycle).toBe('stopped');
    const s = r.device.stats();
    expect(s.undelivered.info).toBe(backlog.info);
    expect(s.undelivered.flowlog).toBe(backlog.flowlog);
    // Lines written since the last upload tick are counted at stop, as one more (open) file.
    expect(s.undelivered.logs).toBeGreaterThanOrEqual(backlog.logs);
    expect(s.undeliveredLogEntries).toBeGreaterThan(0);
    // Nothing more happens after stop.
    const n = r.controller.requests.length;
    await r.time.advance(600_000);
    expect(r.controller.requests.length).toBe(n);
  });
});

describe('metrics (§7.4)', () => {
  it('sends at once, then every [0.3, 1.0] × interval, and never retries a failure', async () => {
    const r = rig();
    r.controller.config = { configItems: [{ key: 'timer.metric.interval', value: '20' }] };
    await onboard(r);
    expect(r.controller.of('metrics')[0]!.at).toBe(T0);
    r.controller.hook = (q) => (q.endpoint === 'metrics' ? answer(500) : undefined);
    const from = r.controller.of('metrics').length;
    await r.time.advance(200_000);
    const at = r.controller.of('metrics').map((q) => q.at).slice(from);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(6_000);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(20_000);
    expect(r.device.stats().endpoints.metrics!.serverError).toBe(at.length);
    const m = Msg.ZMetricMsg.decode(payloadOf(r, r.controller.of('metrics')[0]!));
    expect(m.devID).toBe(r.controller.deviceUuid);
    expect(m.dm!.memory!.usedMem).toBeGreaterThan(0);
  });

  it('counts each URL the device sent to, named as EVE names it (/config/server + path), with the requests the controller saw', async () => {
    const r = rig({ behaviour: { appStepMs: 1_000, logLinesPerSec: 2 }, options: { server: 'ctrl.test:8443' } });
    withApp(r);
    await onboard(r);
    await r.time.advance(400_000);
    const last = r.controller.of('metrics').at(-1)!;
    const m = Msg.ZMetricMsg.decode(payloadOf(r, last));
    const urls = m.dm!.zedcloud![0]!.urlMetrics!;
    // Every path the (at once answering) fake controller saw before this metrics message, and no other.
    const before = r.controller.requests.slice(0, r.controller.requests.indexOf(last));
    const byPath = new Map<string, number>();
    for (const q of before) byPath.set(q.path, (byPath.get(q.path) ?? 0) + 1);
    expect(new Set(urls.map((u) => u.url))).toEqual(new Set([...byPath.keys()].map((p) => `ctrl.test:8443${p}`)));
    expect([...byPath.keys()]).toContain(`/api/v2/edgedevice/id/${r.controller.deviceUuid}/apps/instanceid/${APP}/newlogs`);
    for (const u of urls) expect(Number(u.sentMsgCount ?? 0) + Number(u.tryMsgCount ?? 0)).toBe(byPath.get(u.url!.slice('ctrl.test:8443'.length)));
  });
});

describe('logs (§8.2, §8.3)', () => {
  it('uploads device newlogs and app newlogs first at 90 s, as EVE writes them', async () => {
    const r = rig({ behaviour: { appStepMs: 1_000, logLinesPerSec: 2 } });
    withApp(r);
    await onboard(r);
    await r.time.advance(100_000);
    const dev = r.controller.of('newlogs');
    expect(dev[0]!.at).toBe(T0 + 90_000);
    expect(dev[0]!.path).toBe(`/api/v2/edgedevice/id/${r.controller.deviceUuid}/newlogs`);
    const file = readNewlogsFile(payloadOf(r, dev[0]!));
    expect(JSON.parse(file.header.comment!)).toEqual({ devID: r.controller.deviceUuid, image: 'IMGA', eveVersion: '14.5.2-kvm-amd64' });
    expect(file.entries.length).toBeGreaterThan(150);
    expect(file.entries.length).toBeLessThanOrEqual(180);
    const app = r.controller.of('appnewlogs');
    expect(app[0]!.path).toBe(`/api/v2/edgedevice/id/${r.controller.deviceUuid}/apps/instanceid/${APP}/newlogs`);
    const appFile = readNewlogsFile(payloadOf(r, app[0]!));
    expect(appFile.header.name).toBe('nginx-gateway');
    expect(appFile.entries.every((e) => e.source === `${APP}.3.1`)).toBe(true);
  });

  it("retries a file refused with 4xx ten times, then counts it as undelivered", async () => {
    const r = rig({ behaviour: { logLinesPerSec: 0.5 } });
    await onboard(r);
    r.controller.hook = (q) => (q.endpoint === 'newlogs' ? answer(400) : undefined);
    await r.time.advance(90_000 * 10 + 5_000);
    const sent = r.controller.of('newlogs');
    expect(sent).toHaveLength(10);
    // The same file each time (the oldest first).
    expect(new Set(sent.map((q) => Buffer.from(payloadOf(r, q)).toString('base64'))).size).toBe(1);
    expect(r.device.stats().undelivered.logs).toBe(1);
    expect(r.device.stats().undeliveredLogEntries).toBe(45);
  });

  it('keeps every log file while the controller is down (within EVE\'s quota), and catches up after', async () => {
    const r = rig({ behaviour: { logLinesPerSec: 10 } });
    await onboard(r);
    const downAt = r.time.now();
    r.controller.hook = (q) => (q.endpoint === 'newlogs' ? 'transport-error' : undefined);
    await r.time.advance(2_400_000);
    // Nothing is given up on: EVE keeps log files on disk up to its quota (2048 MB by default).
    expect(r.device.stats().undelivered.logs).toBe(0);
    expect(r.device.stats().droppedByQuota.logs).toBe(0);
    const pending = r.device.backlog().logs;
    expect(pending).toBeGreaterThan(0);
    // Without a spill store (test/log-keeping.test.ts has one) every kept byte is in memory.
    const kept = r.device.logKeeping();
    expect(kept.memoryBytes).toBe(kept.keptBytes);
    r.controller.hook = undefined;
    const upAt = r.time.now();
    const sentBefore = r.controller.of('newlogs').length;
    // Once the controller is back, the files kept in the outage go up on EVE's cadence (one per
    // tick; slow until three uploads in a row succeed, then re-evaluated from the backlog), while
    // new ones keep coming.
    await r.time.advance(7_200_000);
    expect(r.controller.of('newlogs').length - sentBefore).toBeGreaterThan(pending);
    // In order and without a gap: the lines of the files delivered before and after the outage are msgids 0, 1, 2, ...
    const delivered = r.controller.of('newlogs').filter((q) => q.at < downAt || q.at >= upAt);
    const ids = delivered.flatMap((q) => readNewlogsFile(payloadOf(r, q)).rawLines.map((l) => (JSON.parse(l) as { msgid?: number }).msgid ?? 0));
    expect(ids).toEqual(ids.map((_, i) => i));
    expect(r.device.stats().undelivered.logs).toBe(0);
  });

  it('enters back-off mode on 429: the next upload waits twice the interval', async () => {
    const r = rig({ behaviour: { logLinesPerSec: 1 } });
    await onboard(r);
    let throttle = 1;
    r.controller.hook = (q) => (q.endpoint === 'newlogs' && throttle-- > 0 ? answer(429) : undefined);
    await r.time.advance(400_000);
    const at = r.controller.of('newlogs').map((q) => q.at - T0);
    // First tick at 90 s; after the 429 the interval doubles from 90 s to 180 s.
    expect(at.slice(0, 2)).toEqual([90_000, 270_000]);
    // The refused file was not lost: the second upload carries it.
    expect(r.device.stats().undelivered.logs).toBe(0);
  });

  it("'legacy' sends LogBundle to /logs and AppInstanceLogBundle to the app logs path", async () => {
    const r = rig({ behaviour: { logFormat: 'legacy', appStepMs: 1_000 } });
    withApp(r);
    await onboard(r);
    await r.time.advance(100_000);
    const dev = r.controller.of('logs');
    expect(dev[0]!.path).toBe(`/api/v2/edgedevice/id/${r.controller.deviceUuid}/logs`);
    const bundle = Msg.LogBundle.decode(payloadOf(r, dev[0]!));
    expect(bundle).toMatchObject({ devID: r.controller.deviceUuid, eveVersion: '14.5.2-kvm-amd64', image: 'IMGA' });
    expect(bundle.log!.length).toBeGreaterThan(60);
    const app = r.controller.of('applogs');
    expect(app[0]!.path).toBe(`/api/v2/edgedevice/id/${r.controller.deviceUuid}/apps/instances/id/${APP}/logs`);
    expect(Msg.AppInstanceLogBundle.decode(payloadOf(r, app[0]!)).log!.length).toBeGreaterThan(0);
    expect(r.controller.of('newlogs')).toHaveLength(0);
  });
});

describe('flow logs (§9)', () => {
  it('sends one FlowMessage per running app interface and retries the same message 1, 2, 4 s', async () => {
    const r = rig({ behaviour: { appStepMs: 1_000, flowlogIntervalMs: 30_000 } });
    withApp(r);
    await onboard(r);
    let fail = 3;
    r.controller.hook = (q) => (q.endpoint === 'flowlog' && fail-- > 0 ? answer(503) : undefined);
    await r.time.advance(40_000);
    const sent = r.controller.of('flowlog');
    expect(sent).toHaveLength(4);
    const t = sent.map((q) => q.at - sent[0]!.at);
    expect(t).toEqual([0, 1_000, 3_000, 7_000]);
    expect(new Set(sent.map((q) => Buffer.from(payloadOf(r, q)).toString('base64'))).size).toBe(1);
    const msg = Msg.FlowMessage.decode(payloadOf(r, sent[0]!));
    expect(msg.devId).toBe(r.controller.deviceUuid);
    expect(msg.scope).toMatchObject({ uuid: APP, netInstUUID: NI, intf: 'eth0' });
    expect(r.device.stats().undelivered.flowlog).toBe(0);
  });

  it('uses the per-app rates the fleet passes in behaviour.apps', async () => {
    const apps = [{ name: 'nginx-gateway', logLinesPerSec: 5, flowsPerMessage: 7 }];
    const r = rig({ behaviour: { appStepMs: 1_000, flowlogIntervalMs: 30_000, apps } as never });
    withApp(r);
    // Config served without the token: the app starts with the first poll, whatever attestation's timing.
    r.controller.requireToken = false;
    await onboard(r);
    await r.time.advance(100_000);
    const msg = Msg.FlowMessage.decode(payloadOf(r, r.controller.of('flowlog')[0]!));
    expect(msg.flows).toHaveLength(7);
    const lines = readNewlogsFile(payloadOf(r, r.controller.of('appnewlogs')[0]!)).rawLines.length;
    // Running since ~9 s (nine 1 s steps), collected at 90 s: about 81 s × 5 lines/s.
    expect(lines).toBeGreaterThan(380);
    expect(lines).toBeLessThan(430);
  });

  it('sends no flow logs for a network instance with disable_flowlog', async () => {
    const r = rig({ behaviour: { appStepMs: 1_000, flowlogIntervalMs: 10_000 } });
    withApp(r);
    r.controller.config.networkInstances![0]!.disable_flowlog = true;
    await onboard(r);
    await r.time.advance(100_000);
    expect(r.controller.of('flowlog')).toHaveLength(0);
  });

  it('drops (and counts) new flow messages when its queue is full', async () => {
    const r = rig({ behaviour: { appStepMs: 1_000, flowlogIntervalMs: 10_000 } });
    withApp(r);
    await onboard(r);
    r.controller.hook = (q) => (q.endpoint === 'flowlog' ? 'transport-error' : undefined);
    await r.time.advance(10_000 * (FLOWLOG_QUEUE_LIMIT + 5));
    expect(r.device.backlog().flowlog).toBe(FLOWLOG_QUEUE_LIMIT);
    expect(r.device.stats().undelivered.flowlog).toBeGreaterThanOrEqual(4);
  });
});
