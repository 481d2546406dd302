// A device's endpoint loops (config poll, metrics, info passes, flow logs) survive a send that
// fails inside the device: one that throws before its request leaves (say, a signing error), or one
// whose promise rejects. The failure is the device's internal error (guard counts it) and the loop
// runs again on its own timer, never left believing a request is still out. The loops chain then()
// handlers instead of awaiting (a waiting request holds less), so each keeps this by hand.

import { describe, expect, it } from 'vitest';
import { FakeTime } from './device-harness.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import type { DeviceOptions } from '../src/device/device-options.js';
import type { Answer, DeviceSender } from '../src/device/sender/device-sender.js';
import { DeviceStats } from '../src/device/sender/device-stats.js';
import { DeviceCounters } from '../src/device/telemetry/metrics-builder.js';
import { ConfigFetcher } from '../src/device/config/config-fetcher.js';
import { MetricsReporter } from '../src/device/telemetry/metrics-reporter.js';
import { InfoPublisher } from '../src/device/telemetry/info-publisher.js';
import { FlowlogSender } from '../src/device/telemetry/flowlog-sender.js';

const UUID = '5d0767ee-0547-4569-b530-387e526f8cb9';

/** How each send goes, in order: 'throw' (before the request leaves), 'reject', or an HTTP status. */
type Outcome = 'throw' | 'reject' | number;

interface Loop {
  time: FakeTime;
  /** Endpoints posted to, in order (failed ones included). */
  posts: string[];
  internalErrors: () => number;
  host: Record<string, unknown>;
}

/** A device's parts that the loops read, with a sender that fails as `outcomes` says, then answers `then`. */
function loopHost(outcomes: Outcome[], then = 201): Loop {
  const time = new FakeTime();
  const rng = SeededRng.create(3, 0);
  const behaviour = { flowlogIntervalMs: 120_000 };
  const opts = { rng, clock: time, scheduler: time, index: 0, behaviour } as unknown as DeviceOptions;
  const posts: string[] = [];
  let errors = 0;
  const sender = {
    post(endpoint: string): Promise<Answer> {
      posts.push(endpoint);
      const how = outcomes.shift() ?? then;
      if (how === 'throw') throw new Error(`${endpoint}: signing failed`);
      if (how === 'reject') return Promise.reject(new Error(`${endpoint}: the sender broke`));
      return Promise.resolve({ status: how, headers: {}, body: new Uint8Array(0) });
    },
  } as unknown as DeviceSender;
  const host = {
    opts,
    sender,
    tally: new DeviceStats(),
    counters: new DeviceCounters(rng, { storageMB: 1000 }, 0),
    uuid: UUID,
    generation: 0,
    finding: () => {},
    guard: (fn: () => Promise<void> | void) => {
      try {
        const r = fn();
        if (r) r.catch(() => errors++);
      } catch {
        errors++;
      }
    },
  };
  return { time, posts, internalErrors: () => errors, host };
}

describe("a device's loops after a send that fails inside the device", () => {
  it('the config poll polls again at its next tick, after a throw and after a rejection', async () => {
    const l = loopHost(['throw', 'reject'], 304);
    const fetcher = new ConfigFetcher({
      ...(l.host as never),
      configIntervalS: 60,
      integrityToken: undefined,
      onConfigReceived: () => {},
      applyConfig: () => {},
      onForbidden: () => {},
      relookupUuid: async () => {},
    });
    fetcher.start(l.time.now());
    await l.time.advance(0);
    expect(l.posts).toEqual(['config']);
    await l.time.advance(60_000); // a poll every [0.3, 1.0] × 60 s
    await l.time.advance(60_000);
    expect(l.internalErrors()).toBe(2);
    expect(l.posts.length).toBeGreaterThanOrEqual(3); // the third poll went out: no fetch was left "in flight"
    fetcher.stop();
  });

  it('metrics are posted again at the next tick, after a throw and after a rejection', async () => {
    const l = loopHost(['throw', 'reject']);
    // The counters' own build is not what this is about: an empty metrics message.
    const reporter = new MetricsReporter({
      ...(l.host as never),
      counters: { build: () => ({}) } as never,
      metricsInput: () => ({}) as never,
    });
    reporter.start(l.time.now());
    await l.time.advance(0);
    await l.time.advance(60_000);
    await l.time.advance(60_000);
    expect(l.internalErrors()).toBe(2);
    expect(l.posts.filter((e) => e === 'metrics').length).toBeGreaterThanOrEqual(3);
    reporter.stop();
  });

  it('an info pass cut short keeps its items and a later pass delivers them', async () => {
    for (const first of ['throw', 'reject'] as const) {
      const l = loopHost([first]);
      const tally = l.host.tally as DeviceStats;
      const publisher = new InfoPublisher({ ...(l.host as never), onAttestCertsOutcome: () => {} });
      publisher.enqueue('device-info', 'device', new Uint8Array([1, 2, 3]), l.time.now(), false);
      publisher.enqueue(UUID, 'app', new Uint8Array([4, 5]), l.time.now(), false);
      await l.time.advance(0);
      expect(l.internalErrors(), first).toBe(1);
      // EVE's pass timer runs the queue again within a few minutes; nothing is lost.
      for (let i = 0; i < 30 && publisher.pendingInfo > 0; i++) await l.time.advance(10_000);
      expect(publisher.pendingInfo, first).toBe(0);
      expect(l.posts.length, first).toBe(3); // the failed one, then both items
      expect(tally.snapshot().undelivered.info, first).toBe(0);
    }
  });

  it('the flow-log queue is sent again on its resend timer after a throw and after a rejection', async () => {
    const l = loopHost(['throw', 'reject']);
    const scope = { devId: UUID, appUuid: 'a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61', intf: 'eth0', localIntf: 'nbu1x1.1', netInstUuid: 'c0ffee00-0000-4000-8000-000000000001', appIp: '10.1.0.2' };
    const sender = new FlowlogSender({ ...(l.host as never), flowSources: () => [{ scope, flowsPerMessage: 3 }] });
    sender.start(l.time.now());
    // Each window's collect starts a send when none is under way: a send left "under way" would stop them all.
    for (let i = 0; i < 4; i++) await l.time.advance(120_000);
    expect(l.internalErrors()).toBe(2);
    expect(l.posts.length).toBeGreaterThanOrEqual(3);
    expect(sender.queued).toBe(0);
  });
});
