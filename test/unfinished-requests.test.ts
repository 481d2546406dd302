// A controller that accepts connections and never answers: the requests still waiting when the run
// ends are counted as unfinished (and as errors), so `errors.count == 0` fails and the report shows
// them instead of "(no requests)". Through the compiled runner (dist/); needs `npm run build` first.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateOnboardingKit } from '../src/cli/onboarding-kit.js';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';

const dir = mkdtempSync(join(tmpdir(), 'evesim-unfinished-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCENARIO = `
name: hung-controller
seed: 5
duration: 2s
gracefulStop: 1s
target: embedded
groups:
  - name: a
    count: 3
thresholds:
  - errors.count == 0
  - unfinished.count == 0
  - certs.unfinished.count >= 3
`;

describe('a controller that never answers', () => {
  it('its requests count as unfinished and as errors, with their latency up to the end', async () => {
    const { run } = await loadCompiledRunner();
    // Reads every request and never answers it.
    const held: ServerResponse[] = [];
    const seen: string[] = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      seen.push(`${req.method} ${req.url}`);
      held.push(res);
      req.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const kit = loadOrCreateOnboardingKit(join(dir, 'kit'));
    const file = join(dir, 'hung.yaml');
    writeFileSync(file, SCENARIO);
    let report = '';
    try {
      const result = await run.runScenario({
        scenarioFile: file,
        workers: 1,
        stateDir: join(dir, 'state'),
        // Plain http: the server takes the request and holds it (no TLS handshake to hang in).
        controller: { url: `http://127.0.0.1:${port}`, rootCaFile: kit.caFile, onboardCertFile: kit.certFile, onboardKeyFile: kit.keyFile, insecure: true },
        quiet: true,
        out: (t) => (report += t),
        err: () => {},
      });
      // Every device asked for the controller's certificates and never heard back.
      expect(seen.filter((s) => s.includes('/certs')).length).toBeGreaterThanOrEqual(3);
      const s = result.summary!;
      expect(result.exitCode).toBe(1);
      expect(s.endpoints.certs!.unfinished).toBeGreaterThanOrEqual(3);
      expect(s.endpoints.certs!.count).toBe(s.endpoints.certs!.unfinished);
      expect(s.endpoints.certs!.byError).toEqual({ unfinished: s.endpoints.certs!.unfinished });
      expect(s.overall.unfinished).toBe(s.endpoints.certs!.unfinished);
      expect(s.overall.errors).toBe(s.overall.count);
      // The first device is due near the start and is still unanswered at the end: 2 s of run, then
      // the drain waits its whole 1 s for the awaited answers. The latency says so.
      expect(s.drain).toMatchObject({ complete: false });
      expect(s.endpoints.certs!.max_ms).toBeGreaterThan(2600);
      const verdicts = Object.fromEntries(s.thresholds.map((t) => [t.source, t.status]));
      expect(verdicts).toEqual({
        'errors.count == 0': 'failed',
        'unfinished.count == 0': 'failed',
        'certs.unfinished.count >= 3': 'passed',
      });
      expect(report).not.toContain('(no requests)');
      expect(report).toMatch(/^endpoint\s+count\s+errors\s+unfinished\s/m);
      expect(report).toMatch(/^certs\s+(\d+)\s+\1\s+\1\s/m);
      expect(report).toContain('unfinished ×');
      // Who was saturated: the controller, which never answered, while the worker stayed free.
      expect(s.saturation).toMatchObject({ verdict: 'controller', figures: { unfinished: s.overall.unfinished } });
      expect(report).toContain(`saturated    the controller: ${s.overall.unfinished} requests still unanswered at the end`);
    } finally {
      for (const res of held) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 60_000);
});
