// A slow controller (a loopback server that holds every request 1.5 s before answering 503) and a
// worker capped at 8 requests in flight: the server never has more than 8 requests open at once
// (counted by the server, not read from the config), the rest wait in the worker in order, their
// wait shows in their latency, and the worker's heap stays bounded. Through the compiled runner
// (dist/); needs `npm run build` first.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateOnboardingKit } from '../src/cli/onboarding-kit.js';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'evesim-slow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DEVICES = 120;
const CAP = 8;
const HOLD_MS = 1500;

const SCENARIO = `
name: slow-controller
seed: 11
duration: 5s
gracefulStop: 1s
target: embedded
groups:
  - name: a
    count: ${DEVICES}
`;

describe('a slow controller and --max-in-flight', () => {
  it('holds the worker to its cap, queues the rest in order and counts their wait as latency', async () => {
    const { run } = await loadCompiledRunner();
    let open = 0;
    let maxOpen = 0;
    let answered = 0;
    const timers = new Set<NodeJS.Timeout>();
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      open++;
      maxOpen = Math.max(maxOpen, open);
      req.resume();
      const t = setTimeout(() => {
        timers.delete(t);
        open--;
        answered++;
        res.statusCode = 503;
        res.end();
      }, HOLD_MS);
      timers.add(t);
      res.on('close', () => {
        if (timers.delete(t)) {
          clearTimeout(t);
          open--;
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const kit = loadOrCreateOnboardingKit(join(dir, 'kit'));
    const file = join(dir, 'slow.yaml');
    writeFileSync(file, SCENARIO);
    let report = '';
    try {
      const result = await run.runScenario({
        scenarioFile: file,
        workers: 1,
        maxInFlight: CAP,
        stateDir: join(dir, 'state'),
        controller: { url: `http://127.0.0.1:${port}`, rootCaFile: kit.caFile, onboardCertFile: kit.certFile, onboardKeyFile: kit.keyFile, insecure: true },
        quiet: true,
        out: (t) => (report += t),
        err: () => {},
      });
      const s = result.summary!;
      // What the server saw: never more than the cap open at once, and it was kept busy.
      expect(maxOpen).toBe(CAP);
      expect(answered).toBeGreaterThanOrEqual(CAP * 3);
      // What the worker measured agrees, and most devices waited for a slot.
      const gate = s.generator.workers[0]!.inFlight!;
      expect(gate).toMatchObject({ maxInFlight: CAP, peak: CAP });
      expect(gate.peakPerDevice).toBe(1);
      expect(gate.waited).toBeGreaterThan(DEVICES / 2);
      // The queue is bounded by the devices (each awaits its own request).
      expect(gate.queuePeak).toBeLessThanOrEqual(DEVICES);
      expect(gate.queuePeak).toBeGreaterThan(DEVICES / 2);
      // 120 requests at 8 per 1.5 s take 22 s: the last ones waited the whole run.
      expect(gate.worstWaitMs).toBeGreaterThan(4000);
      // Their wait is in their latency: the run's longest certs latency is at least the worst
      // wait (it counts from the due time, which is before the wait began).
      expect(s.endpoints.certs!.max_ms).toBeGreaterThanOrEqual(gate.worstWaitMs);
      expect(s.endpoints.certs!.unfinished).toBeGreaterThan(DEVICES / 2);
      // The wait and the time on the wire apart: every request the server held took its 1.5 s
      // there (those still held at the end count up to then), so the verdict does not blame the
      // caps for a slow controller.
      expect(gate.requests).toBeGreaterThanOrEqual(Math.max(gate.handedOn!, gate.waited));
      expect(gate.handedOnMsTotal! / gate.handedOn!).toBeGreaterThan(1000);
      expect(gate.waitMsTotal! / gate.requests!).toBeGreaterThan(500);
      expect(s.saturation?.verdict).not.toBe('generator');
      // Bounded memory while the controller is slow: the worker's heap peak stays small.
      expect(s.generator.workers[0]!.heapPeakMiB).toBeLessThan(128);
      // The memory sample (taken when the run phase ended) carries the process figures.
      const mem = s.generator.workers[0]!.atSampleMiB!;
      expect(mem.rss).toBeGreaterThan(mem.heapTotal);
      expect(mem.heapTotal).toBeGreaterThanOrEqual(mem.heapUsed);
      expect(mem.newSpace).toBeGreaterThan(0);
      expect(mem.heapTotal).toBeGreaterThan(mem.newSpace);
      expect(report).toMatch(new RegExp(`^in flight    peak ${CAP} of ${CAP} per worker, 1 of 8 per device; \\d+ requests waited for a slot \\(at most \\d+ at once\\), worst \\d+\\.\\d\\d s, counted in their latency`, 'm'));
    } finally {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 90_000);
});
