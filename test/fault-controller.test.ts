// A misbehaving controller is counted per device and survived: a handful of real devices
// (VirtualDevice, the real ControllerTransport over HTTPS, the real HeapScheduler driven by a clock
// running 100 times faster than real time) against a controller that answers garbage, wrong or
// DER signatures, 500s, truncated bodies or connection resets. Each device reports findings (or
// transport errors) of the right kind, nothing throws out of device code, and requests keep going
// out on EVE's retry timers rather than stopping or spinning.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceFinding, DeviceOptions } from '../src/device/device-options.js';
import { ATTEST_RETRY_MS, onboardingRetryDelayMs } from '../src/device/core/eve-timers.js';
import { SeededRng } from '../src/device/core/seeded-rng.js';
import { VirtualDevice } from '../src/device/virtual-device.js';
import { HeapScheduler } from '../src/fleet/heap-scheduler.js';
import { createDeviceIdentity, type DeviceIdentityMaterial } from '../src/identity/device-identity.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import type { EndpointKey } from '../src/protocol/endpoints.js';
import { ControllerTransport } from '../src/transport/controller-transport.js';
import type { RequestOutcome } from '../src/transport/request-observer.js';
import { TimedTransport } from '../src/transport/timed-transport.js';
import { BadController, type BadMode } from './fakes/bad-controller.js';
import { FastClock, pumpScheduler } from './fakes/fast-clock.js';
import { BEHAVIOUR } from './device-harness.js';

const DEVICES = 3;
const SPEED = 100;
/** Real milliseconds each case runs at least: 350 s of simulated time. */
const REAL_MS = 3_500;
/**
 * Real milliseconds a case may run at most: past REAL_MS it goes on only until every device has
 * done what the checks below count (shortfall), which a loaded machine may need longer for (a TLS
 * handshake that takes 100 real ms is 10 s of simulated time).
 */
const BOUND_REAL_MS = 40_000;
/** Simulated ms of tolerance on retry timing (50 real ms). */
const SLACK_MS = 5_000;

interface Case {
  name: string;
  mode: BadMode;
  on?: EndpointKey[];
  /** Findings every device must report (endpoint:kind). */
  findings: string[];
  /** Endpoint every device must have seen fail without an HTTP answer. */
  transportErrors?: EndpointKey;
  /** Where the device is held up, and so which retry timer its requests must follow. */
  retries: { endpoint: EndpointKey; timer: 'onboarding' | 'attestation' | 'config' };
}

const CASES: Case[] = [
  { name: 'garbage bodies on /uuid', mode: 'garbage', on: ['uuid'], findings: ['uuid:bad-envelope'], retries: { endpoint: 'uuid', timer: 'onboarding' } },
  {
    name: 'garbage bodies on /attest and /config',
    mode: 'garbage',
    on: ['attest', 'config'],
    findings: ['attest:bad-envelope', 'config:bad-envelope'],
    retries: { endpoint: 'attest', timer: 'attestation' },
  },
  {
    name: 'signatures by another key',
    mode: 'wrong-signature',
    on: ['attest', 'config'],
    findings: ['attest:bad-signature', 'config:bad-signature'],
    retries: { endpoint: 'attest', timer: 'attestation' },
  },
  {
    name: 'DER-encoded signatures',
    mode: 'der-signature',
    on: ['uuid', 'attest', 'config'],
    findings: ['uuid:bad-signature'],
    retries: { endpoint: 'uuid', timer: 'onboarding' },
  },
  { name: '500 on everything', mode: 'status-500', findings: ['certs:undocumented-status'], retries: { endpoint: 'certs', timer: 'onboarding' } },
  { name: 'truncated bodies', mode: 'truncated', findings: [], transportErrors: 'certs', retries: { endpoint: 'certs', timer: 'onboarding' } },
  {
    name: 'truncated bodies on /attest and /config',
    mode: 'truncated',
    on: ['attest', 'config'],
    findings: [],
    transportErrors: 'config',
    retries: { endpoint: 'config', timer: 'config' },
  },
  { name: 'connection resets', mode: 'reset', findings: [], transportErrors: 'certs', retries: { endpoint: 'certs', timer: 'onboarding' } },
];

let identities: DeviceIdentityMaterial[] = [];
const stray: unknown[] = [];
const onStray = (e: unknown) => stray.push(e);

beforeAll(() => {
  const ca = createFleetCa('fault-controller', Date.now());
  identities = Array.from({ length: DEVICES }, (_, i) => createDeviceIdentity(ca, 'fault-controller', i, Date.now()).identity);
  process.on('unhandledRejection', onStray);
});
afterAll(() => void process.off('unhandledRejection', onStray));

interface CaseRun {
  devices: VirtualDevice[];
  findings: DeviceFinding[];
  outcomes: RequestOutcome[];
  schedulerErrors: unknown[];
  clock: FastClock;
  startedAt: number;
  /** Simulated time the devices were stopped (the teardown after it is not part of the run). */
  stoppedAt: number;
  /** What was still short when the case stopped (empty unless it reached BOUND_REAL_MS). */
  shortfall: string[];
}

/** Attempts on the endpoint where the device is held up, in due order. */
function attemptsOf(c: Case, outcomes: readonly RequestOutcome[], i: number): RequestOutcome[] {
  return outcomes.filter((o) => o.deviceIndex === i && o.endpoint === c.retries.endpoint).sort((a, b) => a.dueAt - b.dueAt);
}

/** Retries of the nonce request: attempts after the previous one finished (the certificate post goes out with the first). */
function attestationRetries(attempts: readonly RequestOutcome[]): number {
  let n = 0;
  for (let k = 1; k < attempts.length; k++) if (attempts[k]!.dueAt - attempts[k - 1]!.doneAt >= 0) n++;
  return n;
}

/** What the devices have not yet done of what the checks count, `span` simulated ms into the case. */
function shortfall(c: Case, devices: readonly VirtualDevice[], findings: readonly DeviceFinding[], outcomes: readonly RequestOutcome[], startedAt: number, span: number): string[] {
  const short: string[] = [];
  devices.forEach((d, i) => {
    const kinds = new Set(findings.filter((f) => f.deviceIndex === i).map((f) => `${f.endpoint}:${f.kind}`));
    for (const k of c.findings) if (!kinds.has(k)) short.push(`device ${i}: no ${k} finding`);
    if (c.transportErrors && (d.stats().endpoints[c.transportErrors]?.transportError ?? 0) <= 2) short.push(`device ${i}: ≤ 2 ${c.transportErrors} transport errors`);
    if (!outcomes.some((o) => o.deviceIndex === i && o.dueAt > startedAt + span * 0.6)) short.push(`device ${i}: nothing sent late in the run`);
    const attempts = attemptsOf(c, outcomes, i);
    if (c.retries.timer === 'onboarding' && attempts.length < 6) short.push(`device ${i}: ${attempts.length} ${c.retries.endpoint} attempts`);
    if (c.retries.timer === 'config' && attempts.length < span / 60_000) short.push(`device ${i}: ${attempts.length} config polls`);
    if (c.retries.timer === 'attestation' && attestationRetries(attempts) < 10) short.push(`device ${i}: ${attestationRetries(attempts)} attestation retries`);
  });
  return short;
}

async function runCase(c: Case): Promise<CaseRun> {
  const clock = new FastClock(SPEED);
  const controller = await BadController.start({ mode: c.mode, ...(c.on ? { on: c.on } : {}), nowMs: clock.now() });
  const inner = new ControllerTransport({ baseUrl: controller.url, caPem: controller.rootCaPem, trustSystemRoots: false, connectJitterMs: 0 });
  const outcomes: RequestOutcome[] = [];
  const transport = new TimedTransport(inner, clock, [{ onOutcome: (o) => outcomes.push(o) }]);
  const schedulerErrors: unknown[] = [];
  const scheduler = new HeapScheduler(clock, { onError: (e) => schedulerErrors.push(e) });
  const findings: DeviceFinding[] = [];
  const devices = identities.map((identity, index) => {
    const opts: DeviceOptions = {
      index,
      identity,
      behaviour: BEHAVIOUR,
      rootCertPem: controller.rootCaPem,
      clock,
      scheduler,
      transport,
      rng: SeededRng.create(99, index, 'device'),
      onFinding: (f) => findings.push(f),
    };
    return new VirtualDevice(opts);
  });
  const stopPump = pumpScheduler(scheduler, clock);
  const startedAt = clock.now();
  devices.forEach((d) => d.start());
  await new Promise((r) => setTimeout(r, REAL_MS));
  const bound = performance.now() + BOUND_REAL_MS - REAL_MS;
  let short = shortfall(c, devices, findings, outcomes, startedAt, clock.now() - startedAt);
  while (short.length > 0 && performance.now() < bound) {
    await new Promise((r) => setTimeout(r, 50));
    short = shortfall(c, devices, findings, outcomes, startedAt, clock.now() - startedAt);
  }
  const stoppedAt = clock.now();
  devices.forEach((d) => d.stop());
  stopPump();
  scheduler.clear();
  await inner.destroy();
  await controller.close();
  return { devices, findings, outcomes, schedulerErrors, clock, startedAt, stoppedAt, shortfall: short };
}

describe('a misbehaving controller is counted per device and survived', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const run = await runCase(c);
      expect(run.shortfall, `still short after ${BOUND_REAL_MS / 1000} s`).toEqual([]);
      const span = run.stoppedAt - run.startedAt;
      for (let i = 0; i < DEVICES; i++) {
        const d = run.devices[i]!;
        const stats = d.stats();
        // Nothing thrown inside device code.
        expect(stats.internalErrors, `device ${i} internal errors`).toBe(0);
        // Findings of the right kind, counted for this device.
        const kinds = new Set(run.findings.filter((f) => f.deviceIndex === i).map((f) => `${f.endpoint}:${f.kind}`));
        for (const k of c.findings) expect([...kinds], `device ${i} findings`).toContain(k);
        expect(stats.findings).toBe(run.findings.filter((f) => f.deviceIndex === i).length);
        if (c.transportErrors) expect(stats.endpoints[c.transportErrors]?.transportError ?? 0, `device ${i} transport errors`).toBeGreaterThan(2);

        // Requests keep flowing, on EVE's timers. Each retry is due a fixed delay after the failure
        // that caused it (the previous attempt's answer), so that is what is compared: at 100×
        // speed a TLS handshake alone is seconds of simulated time. SLACK_MS allows for the test
        // process being descheduled for a few tens of real ms on a loaded machine.
        const mine = [...run.outcomes.filter((o) => o.deviceIndex === i)].sort((a, b) => a.dueAt - b.dueAt);
        expect(mine.some((o) => o.dueAt > run.startedAt + span * 0.6), `device ${i} still sending late in the run`).toBe(true);
        const attempts = mine.filter((o) => o.endpoint === c.retries.endpoint);
        /** The first request of the device due after `o` finished (the start of the next round). */
        const nextAfter = (o: RequestOutcome) => mine.find((x) => x.dueAt >= o.doneAt);
        if (c.retries.timer === 'onboarding') {
          // Rounds 1, 2, 4 … s after each failure: about 8 in 350 s.
          expect(attempts.length, `device ${i} ${c.retries.endpoint} attempts`).toBeGreaterThanOrEqual(6);
          expect(attempts.length).toBeLessThanOrEqual(10);
          for (let k = 1; k < attempts.length; k++) {
            const failed = attempts[k - 1]!;
            const wait = nextAfter(failed)!.dueAt - failed.doneAt;
            const delay = onboardingRetryDelayMs(k);
            expect(wait, `device ${i} retry ${k}`).toBeGreaterThanOrEqual(delay - 1);
            expect(wait, `device ${i} retry ${k}`).toBeLessThan(delay + SLACK_MS);
          }
        } else if (c.retries.timer === 'config') {
          // Polled every uniform [0.3, 1.0] × 60 s from when the previous poll fired (timer.config.interval never arrived).
          expect(attempts.length, `device ${i} config polls`).toBeGreaterThanOrEqual(span / 60_000);
          for (let k = 1; k < attempts.length; k++) {
            const prev = attempts[k - 1]!;
            const wait = attempts[k]!.dueAt - prev.sentAt;
            expect(wait).toBeGreaterThanOrEqual(18_000 - SLACK_MS);
            // EVE's ticker drops a tick while a fetch runs: a poll that took longer than the
            // shortest interval (a slow machine at 100× speed) may have pushed the next one a tick on.
            const took = prev.doneAt - prev.sentAt;
            expect(wait).toBeLessThan(60_000 + SLACK_MS + (took >= 18_000 - SLACK_MS ? took : 0));
          }
        } else {
          // The nonce request is retried 15 s after each failure (the certificate post goes out with the first one).
          let retries = 0;
          for (let k = 1; k < attempts.length; k++) {
            const wait = attempts[k]!.dueAt - attempts[k - 1]!.doneAt;
            if (wait < 0) continue; // sent together with the previous one (certificate post)
            retries++;
            expect(wait, `device ${i} attestation retry ${k}`).toBeGreaterThanOrEqual(ATTEST_RETRY_MS - 1);
            expect(wait).toBeLessThan(ATTEST_RETRY_MS + SLACK_MS);
          }
          expect(retries, `device ${i} attestation retries`).toBeGreaterThanOrEqual(10);
        }
      }
      expect(run.schedulerErrors).toEqual([]);
      expect(stray).toEqual([]);
    }, 90_000);
  }
});
