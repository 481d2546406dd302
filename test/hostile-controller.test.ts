// A fleet run through the real workers (the compiled runner) against a hostile controller
// (fakes/hostile-controller.ts) that gives 10,000 hostile answers: random bytes, another PKI's
// certificate chain, bad signatures, wrong content types, truncated bodies, 100 MB bodies,
// answers dribbled a byte a second and 5xx storms. No worker crashes, no device code throws,
// every hostile answer is counted under the named cause it belongs to, and memory stays bounded
// (bodies are capped per endpoint; a dribble ends at the device's send timeout). Needs `npm run build`.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateOnboardingKit } from '../src/cli/onboarding-kit.js';
import type { FleetAggregate } from '../src/runner/aggregate.js';
import { CONFIG_BODY_LIMIT, responseBodyLimit, SMALL_ANSWER_BODY_LIMIT, TELEMETRY_BODY_LIMIT } from '../src/transport/response-body-limits.js';
import { requestDeadlineMs } from '../src/transport/controller-transport.js';
import type { TransportRequest } from '../src/device/ports.js';
import { HostileController } from './fakes/hostile-controller.js';
import { loadCompiledRunner } from './fixtures/compiled-runner.js';

const BUDGET = 10_000;
const DEVICES = 400;

const dir = mkdtempSync(join(tmpdir(), 'evesim-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCENARIO = `
name: hostile-controller
seed: 12
duration: 150s
gracefulStop: 3s
arrival: {model: uniform, over: 5s}
groups:
  - name: a
    count: ${DEVICES}
`;

describe('response body caps and request deadlines (src/transport)', () => {
  it('caps each endpoint at what its real answer needs, never above the transport cap', () => {
    const cap = 16 * 1024 * 1024;
    expect(responseBodyLimit('config', cap)).toBe(CONFIG_BODY_LIMIT);
    expect(responseBodyLimit('certs', cap)).toBe(SMALL_ANSWER_BODY_LIMIT);
    expect(responseBodyLimit('attest', cap)).toBe(SMALL_ANSWER_BODY_LIMIT);
    expect(responseBodyLimit('newlogs', cap)).toBe(TELEMETRY_BODY_LIMIT);
    expect(responseBodyLimit('metrics', cap)).toBe(TELEMETRY_BODY_LIMIT);
    expect(responseBodyLimit('config', 1000)).toBe(1000);
    expect(responseBodyLimit('lps.radio', cap)).toBe(cap);
  });

  it("a request's deadline is the device's send timeout when shorter than the transport's", () => {
    const req = (timeoutMs?: number) => ({ endpoint: 'config', method: 'POST', path: '/', headers: {}, dueAt: 0, deviceIndex: 0, ...(timeoutMs !== undefined ? { timeoutMs } : {}) }) as TransportRequest;
    expect(requestDeadlineMs(req(), 120_000)).toBe(120_000);
    expect(requestDeadlineMs(req(8_000), 120_000)).toBe(8_000);
    expect(requestDeadlineMs(req(300_000), 120_000)).toBe(120_000);
    expect(requestDeadlineMs(req(0), 120_000)).toBe(120_000);
  });
});

describe('a hostile controller', () => {
  it(`${BUDGET} hostile answers: no crash, each counted under its named cause, memory bounded`, async () => {
    const { run } = await loadCompiledRunner();
    const controller = await HostileController.start({ budget: BUDGET });
    try {
      const kit = loadOrCreateOnboardingKit(join(dir, 'kit'));
      const rootCaFile = join(dir, 'root.pem');
      writeFileSync(rootCaFile, controller.rootCaPem);
      const file = join(dir, 'hostile.yaml');
      writeFileSync(file, SCENARIO);
      const summaryFile = join(dir, 'summary.json');
      const end = new AbortController();
      let budgetSpentAt: number | undefined;
      let aggregate: FleetAggregate | undefined;
      let errText = '';
      const started = Date.now();
      const result = await run.runScenario({
        scenarioFile: file,
        workers: 2,
        stateDir: join(dir, 'state'),
        controller: { url: controller.url, rootCaFile, onboardCertFile: kit.certFile, onboardKeyFile: kit.keyFile, insecure: false },
        summaryJson: summaryFile,
        quiet: true,
        out: () => {},
        err: (t) => (errText += t),
        endRunPhase: end.signal,
        // Once the budget is spent the controller is correct again: 10 s more let every dribble reach its deadline.
        onProgress: (agg) => {
          aggregate = agg;
          if (budgetSpentAt === undefined && controller.hostile >= BUDGET) budgetSpentAt = Date.now();
          if (budgetSpentAt !== undefined && Date.now() - budgetSpentAt > 10_000) end.abort();
        },
      });
      const wallS = (Date.now() - started) / 1000;
      const s = JSON.parse(readFileSync(summaryFile, 'utf8')) as NonNullable<typeof result.summary>;
      const given = controller.given;
      console.log(`hostile run: ${wallS.toFixed(0)} s wall, ${controller.requests} requests, given ${JSON.stringify(given)}, storm ${JSON.stringify(controller.storm)}`);
      console.log(`findings ${JSON.stringify(s.findings.byKind)}; errors ${JSON.stringify(s.overall.byError)}; statuses ${JSON.stringify(s.overall.byStatus)}; heap peaks ${s.generator.workers.map((w) => w.heapPeakMiB).join(', ')} MiB`);

      // The budget was spent, and no worker crashed (both report their health; none failed).
      expect(controller.hostile).toBe(BUDGET);
      expect.soft(errText).not.toMatch(/worker \d+ failed/);
      expect.soft(s.generator.workers).toHaveLength(2);
      expect.soft(aggregate!.deviceErrors).toBe(0);
      for (const k of Object.keys(given) as (keyof typeof given)[]) expect.soft(given[k], k).toBeGreaterThan(0);

      // Every hostile answer under its named cause.
      const f = s.findings.byKind;
      expect.soft(f['bad-envelope'] ?? 0).toBe(given['random-bytes'] - controller.certsRandom);
      expect.soft(f['bad-certs'] ?? 0).toBe(controller.certsRandom + given['wrong-chain']);
      expect.soft(f['bad-signature'] ?? 0).toBe(given['bad-signature']);
      expect.soft(f['unknown-signer'] ?? 0).toBe(given['unknown-signer']);
      expect.soft(f['wrong-content-type'] ?? 0).toBe(given['wrong-content-type']);
      // The run's and the drain's requests together (the summary keeps them apart).
      const e = addCounts(s.overall.byError, s.drain?.overall?.byError);
      const statuses = addCounts(s.overall.byStatus, s.drain?.overall?.byStatus);
      expect.soft(e['body-too-large'] ?? 0).toBe(given['huge-body']);
      expect.soft(Object.keys(e).filter((k) => !['body-too-large', 'timeout'].includes(k)).map((k) => [k, e[k]])).toEqual([[truncatedCode(e), given.truncated]]);
      // Each dribble ended at the device's 8 s send timeout (a slow correct answer on a loaded machine may add a few).
      expect.soft(e.timeout ?? 0).toBeGreaterThanOrEqual(given.dribble);
      expect.soft(e.timeout ?? 0).toBeLessThanOrEqual(given.dribble + 50);
      for (const [status, n] of Object.entries(controller.storm)) expect.soft(statuses[status], status).toBe(n);

      // Memory bounded: no worker's heap came near a 100 MB body.
      for (const w of s.generator.workers) expect(w.heapPeakMiB!).toBeLessThan(300);
    } finally {
      await controller.close();
    }
  }, 240_000);
});

/** The one transport error code a truncated answer shows as (besides body-too-large and timeout). */
function truncatedCode(byError: Record<string, number>): string {
  const others = Object.keys(byError).filter((k) => !['body-too-large', 'timeout'].includes(k));
  return others[0] ?? '(none)';
}

function addCounts(a: Record<string, number>, b: Record<string, number> = {}): Record<string, number> {
  const out: Record<string, number> = { ...a };
  for (const [k, n] of Object.entries(b)) out[k] = (out[k] ?? 0) + n;
  return out;
}
