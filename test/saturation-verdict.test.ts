// Who was saturated: the generator (its workers lagged or were busy), the controller (latencies
// climbed, or requests timed out or went unanswered, while the workers stayed free), or neither,
// each with the figures that say so; and the report's line.

import { describe, expect, it } from 'vitest';
import { judgeSaturation } from '../src/runner/saturation-verdict.js';
import { judgeGenerator } from '../src/runner/generator-verdict.js';
import { emptyEndpointStats, type EndpointStats, type GeneratorHealth, type RunSummary } from '../src/runner/summary-json.js';
import type { RunInterval, RunSeries } from '../src/runner/run-series.js';
import { generatorSection } from '../src/runner/html-report/run-facts.js';

const FREE: GeneratorHealth = {
  workers: [
    { worker: 0, eventLoopLagP99Ms: 4.2, busy: 0.31 },
    { worker: 1, eventLoopLagP99Ms: 6, busy: 0.35 },
  ],
  mainEventLoopLagP99Ms: 1,
  cpuPercent: 40,
};

function ep(over: Partial<EndpointStats> = {}): EndpointStats {
  return { ...emptyEndpointStats(), count: 1000, rate: 10, p50_ms: 5, p90_ms: 9, p99_ms: 20, max_ms: 40, byStatus: { '200': 1000 }, ...over };
}

/** A run phase of `p99s.length` 1 s intervals whose config requests had these p99s. */
function series(p99s: number[]): RunSeries {
  const intervals: RunInterval[] = p99s.map((p99, i) => ({
    tMs: i * 1000,
    durationMs: 1000,
    phase: 'run',
    endpoints: { config: { requests: 50, errors: 0, p50Ms: p99 / 4, p99Ms: p99 }, info: { requests: 0, errors: 0 } },
    devices: {},
    queued: {},
    findings: {},
    events: [],
    workers: [],
  }));
  // A drain interval after the run phase is not part of the trend.
  intervals.push({ ...intervals[0]!, tMs: p99s.length * 1000, phase: 'drain', endpoints: { config: { requests: 5, errors: 0, p99Ms: 99_999 } } });
  return { intervalMs: 1000, intervals, events: [] };
}

function run(over: Partial<RunSummary> = {}): Pick<RunSummary, 'generator' | 'overall' | 'endpoints' | 'series'> {
  return { generator: FREE, overall: ep(), endpoints: { config: ep() }, ...over };
}

describe('judgeSaturation', () => {
  it('the controller: latency p99 climbing while the worker loops stay free', () => {
    const v = judgeSaturation(run({ series: series([10, 12, 11, 40, 90, 200, 400, 800, 900]) }));
    expect(v.verdict).toBe('controller');
    expect(v.figures).toEqual({
      workerLoopLagP99Ms: 6,
      workerBusy: 0.35,
      cpuPercent: 40,
      latencyP99Ms: 20,
      requests: 1000,
      latencyTrend: { firstP99Ms: 11, lastP99Ms: 800 },
      unfinished: 0,
      timeouts: 0,
    });
    expect(v.evidence).toEqual([
      "the median second's latency p99 climbed from 11.0 ms (first third of the run) to 800 ms (last third)",
      'while the worker loops stayed free (worker event-loop lag p99 ≤ 6.00 ms, busy ≤ 35%, CPU 40%)',
    ]);
  });

  it('the controller: requests unanswered at the end or timed out, even without a time series', () => {
    const v = judgeSaturation(run({ endpoints: { config: ep({ unfinished: 12, errors: 12, byError: { unfinished: 12 } }), info: ep({ byError: { timeout: 3, ECONNRESET: 1 } }) } }));
    expect(v.verdict).toBe('controller');
    expect(v.figures).toMatchObject({ unfinished: 12, timeouts: 3 });
    expect(v.figures.latencyTrend).toBeUndefined();
    expect(v.evidence.slice(0, 2)).toEqual(['12 requests still unanswered at the end', '3 requests timed out']);
  });

  it('the generator: a worker loop lagging or busy, whatever the controller did', () => {
    const lagging = judgeSaturation(
      run({
        generator: { ...FREE, workers: [{ worker: 0, eventLoopLagP99Ms: 250, busy: 0.5 }] },
        series: series([10, 12, 11, 40, 90, 200, 400, 800, 900]),
      }),
    );
    expect(lagging.verdict).toBe('generator');
    expect(lagging.evidence).toEqual(['worker 0 event-loop lag p99 250 ms > 100 ms', 'latencies and rates understate the target']);
    const busy = judgeSaturation(run({ generator: { ...FREE, workers: [{ worker: 3, eventLoopLagP99Ms: 20, busy: 0.93 }] } }));
    expect(busy.verdict).toBe('generator');
    expect(busy.evidence[0]).toBe('worker 3 busy 93% of the run ≥ 90%');
    expect(busy.figures.workerBusy).toBe(0.93);
    // The same rule as the report's generator line.
    expect(judgeGenerator({ ...FREE, workers: [{ worker: 3, eventLoopLagP99Ms: 20, busy: 0.93 }] }).bottleneck).toBe(true);
    expect(judgeGenerator({ ...FREE, workers: [{ worker: 3, eventLoopLagP99Ms: 20, busy: 0.89 }] }).bottleneck).toBe(false);
  });

  it("the machine: the controller's signs while every core of the machine was nearly all busy", () => {
    // fleet-100k.yaml on two cores: the generator 70 % of them, the sink controller beside it the rest.
    const shared = { ...FREE, cpuPercent: 70, machineCpuPercent: 95.5 };
    const v = judgeSaturation(run({ generator: shared, series: series([10, 12, 11, 40, 90, 200, 400, 800, 900]), endpoints: { config: ep({ unfinished: 7, byError: { timeout: 2 } }) } }));
    expect(v.verdict).toBe('machine');
    expect(v.figures.machineCpuPercent).toBe(95.5);
    expect(v.evidence).toEqual([
      "the machine's CPUs were 96% busy, every process counted (this generator 70%, everything else 26%)",
      "the median second's latency p99 climbed from 11.0 ms (first third of the run) to 800 ms (last third)",
      '7 requests still unanswered at the end',
      '2 requests timed out',
      'the worker loops: worker event-loop lag p99 ≤ 6.00 ms, busy ≤ 35%, CPU 70%',
      'the generator and the rest of the machine (a controller on it?) competed for the cores, so these latencies measure the machine as much as the controller',
    ]);
    // Just under the limit, or not measured (older summaries): the controller, as before.
    expect(judgeSaturation(run({ generator: { ...shared, machineCpuPercent: 89.9 }, series: series([10, 12, 11, 40, 90, 200, 400, 800, 900]) })).verdict).toBe('controller');
    expect(judgeSaturation(run({ generator: { ...FREE, cpuPercent: 70 }, series: series([10, 12, 11, 40, 90, 200, 400, 800, 900]) })).verdict).toBe('controller');
    // A busy machine without the controller's signs is nobody's saturation.
    expect(judgeSaturation(run({ generator: shared, series: series([10, 14, 11, 12, 15, 13, 12, 16, 14]) })).verdict).toBe('neither');
    // The generator's own figures still come first.
    expect(judgeSaturation(run({ generator: { ...shared, workers: [{ worker: 0, eventLoopLagP99Ms: 250 }] }, series: series([10, 12, 11, 40, 90, 200, 400, 800, 900]) })).verdict).toBe('generator');
  });

  it("the generator: a worker's loop lagging through a good part of the run, though the whole run's p99 stayed under the limit", () => {
    // fleet-100k.yaml on two cores: the whole run's p99 95.6 ms, but the second half lagged.
    const lagged = (n: number, lagging: number[], over: Partial<RunInterval> = {}): RunSeries => ({
      intervalMs: 1000,
      events: [],
      intervals: Array.from({ length: n }, (_, i) => ({
        tMs: i * 1000,
        durationMs: 1000,
        phase: 'run' as const,
        endpoints: {},
        devices: {},
        queued: {},
        findings: {},
        events: [],
        workers: [
          { worker: 0, loopP99Ms: 20, loopMaxMs: 40, busy: 0.8 },
          { worker: 1, loopP99Ms: lagging.includes(i) ? 101 : 100, loopMaxMs: 300, busy: 0.8 },
        ],
        ...over,
      })),
    });
    const five = [3, 10, 20, 30, 49];
    const v = judgeSaturation(run({ generator: { ...FREE, machineCpuPercent: 97, cpuPercent: 73 }, series: lagged(50, five) }));
    expect(v.verdict).toBe('generator');
    expect(v.evidence).toEqual([
      "a worker's event-loop lag p99 > 100 ms in 5 of the run's 50 seconds (10%)",
      "the machine's CPUs were 97% busy, every process counted (this generator 73%, everything else 24%)",
      'latencies and rates understate the target',
    ]);
    // Under a tenth of the run's intervals, or fewer than five of them: a GC pause now and then.
    expect(judgeGenerator(FREE, lagged(60, five)).bottleneck).toBe(false);
    expect(judgeGenerator(FREE, lagged(40, [1, 2, 3, 4])).bottleneck).toBe(false);
    expect(judgeGenerator(FREE, lagged(50, five)).bottleneck).toBe(true);
    // Only the run phase's intervals with worker figures count (the drain's are not the run's).
    const drained = lagged(50, five);
    for (const i of five) drained.intervals[i] = { ...drained.intervals[i]!, phase: 'drain' };
    expect(judgeGenerator(FREE, drained).bottleneck).toBe(false);
    const silent = lagged(50, five);
    for (let i = 0; i < 50; i++) if (!five.includes(i)) silent.intervals[i] = { ...silent.intervals[i]!, workers: [] };
    expect(judgeGenerator(FREE, silent).reasons).toEqual(["a worker's event-loop lag p99 > 100 ms in 5 of the run's 5 seconds (100%)"]);
    // Merged intervals say so.
    expect(judgeGenerator(FREE, { ...lagged(50, five), intervalMs: 5000 }).reasons[0]).toBe("a worker's event-loop lag p99 > 100 ms in 5 of the run's 50 5 s intervals (10%)");
  });

  it("the generator's in-flight caps: requests waited far longer for a slot than the controller took to answer", () => {
    const gate = { maxInFlight: 2, maxPerDevice: 8, peak: 2, peakPerDevice: 1, queuePeak: 5000, waited: 9000, worstWaitMs: 43_000, timedOutWaiting: 0 };
    const capped = (waitMsTotal: number, handedOnMsTotal: number): GeneratorHealth => ({
      ...FREE,
      workers: FREE.workers.map((w) => ({ ...w, inFlight: { ...gate, requests: 10_000, waitMsTotal, handedOn: 10_000, handedOnMsTotal } })),
    });
    // 2 s of wait a request against 1.5 ms on the wire, while latency climbed: the caps, not the controller.
    const v = judgeSaturation(run({ generator: capped(20_000_000, 15_000), series: series([10, 12, 11, 40, 90, 200, 400, 800, 900]) }));
    expect(v.verdict).toBe('generator');
    expect(v.evidence).toEqual([
      'requests waited 2000 ms on average for an in-flight slot (--max-in-flight 2 per worker), 1.50 ms from hand-on to answer: the caps set the pace, not the controller',
      "latencies include the generator's own queue and rates are the caps', not the fleet's: raise --max-in-flight or add workers",
    ]);
    expect(judgeGenerator(capped(20_000_000, 15_000)).inFlightCapped).toBe(true);
    // A slow controller fills the caps too, but then its answers take of the wait's order: not the caps.
    expect(judgeSaturation(run({ generator: capped(20_000_000, 15_000_000), series: series([10, 12, 11, 40, 90, 200, 400, 800, 900]) })).verdict).toBe('controller');
    // Short waits are no finding (49 ms a request on average), and nor are summaries without the totals.
    expect(judgeGenerator(capped(490_000, 100)).bottleneck).toBe(false);
    expect(judgeGenerator({ ...FREE, workers: FREE.workers.map((w) => ({ ...w, inFlight: gate })) }).bottleneck).toBe(false);
  });

  it("the controller: a spell of slow seconds the thirds' medians do not show (an onboarding storm)", () => {
    // 90 seconds: settled at 20 ms, slow (1 s) from 8 s to 19 s with one quick second inside, and
    // one slow second later on its own. The first third's median stays 20 ms: no climb.
    const p99s = Array.from({ length: 90 }, () => 20);
    for (let i = 8; i <= 19; i++) p99s[i] = i === 12 ? 30 : 1000;
    p99s[45] = 900;
    const v = judgeSaturation(run({ series: series(p99s) }));
    expect(v.verdict).toBe('controller');
    expect(v.figures.latencyTrend).toEqual({ firstP99Ms: 20, lastP99Ms: 20 });
    expect(v.figures.slowSpell).toEqual({ slowSeconds: 12, runSeconds: 90, limitMs: 70, fromS: 8, toS: 20, spellSeconds: 11, worstP99Ms: 1000 });
    expect(v.evidence).toEqual([
      "latency p99 70.0 ms or more (the last third's median second: 20.0 ms) in 12 of the run's 90 seconds (13%), 11 of them from 8 s to 20 s, at worst 1000 ms",
      'while the worker loops stayed free (worker event-loop lag p99 ≤ 6.00 ms, busy ≤ 35%, CPU 40%)',
    ]);
    // A long run's series coarsened to 2 s intervals: the spell is counted in seconds, not intervals.
    const coarse = series(Array.from({ length: 45 }, (_, i) => (i >= 4 && i <= 9 ? 1000 : 20)));
    coarse.intervals.forEach((iv, i) => Object.assign(iv, { tMs: i * 2000, durationMs: 2000 }));
    expect(judgeSaturation(run({ series: coarse })).figures.slowSpell).toEqual({ slowSeconds: 12, runSeconds: 90, limitMs: 70, fromS: 8, toS: 20, spellSeconds: 12, worstP99Ms: 1000 });
    // The same spell while every core of the machine was busy: the machine.
    expect(judgeSaturation(run({ generator: { ...FREE, machineCpuPercent: 95 }, series: series(p99s) })).verdict).toBe('machine');
  });

  it('neither: a stall of a few seconds, or slow seconds under the share, is no spell', () => {
    // 4 slow seconds: under SPELL_MIN_SECONDS.
    const stall = Array.from({ length: 60 }, (_, i) => (i >= 20 && i < 24 ? 2000 : 20));
    expect(judgeSaturation(run({ series: series(stall) })).verdict).toBe('neither');
    // 9 slow seconds of 200: five or more, but under 5 % of the run's seconds.
    const long = Array.from({ length: 200 }, (_, i) => (i >= 100 && i < 109 ? 2000 : 20));
    const v = judgeSaturation(run({ series: series(long) }));
    expect(v.verdict).toBe('neither');
    expect(v.figures.slowSpell).toBeUndefined();
    // 10 of 200 (5 %): a spell.
    const ten = Array.from({ length: 200 }, (_, i) => (i >= 100 && i < 110 ? 2000 : 20));
    expect(judgeSaturation(run({ series: series(ten) })).figures.slowSpell).toMatchObject({ slowSeconds: 10, fromS: 100, toS: 110, spellSeconds: 10 });
    // Seconds under 50 ms above the settled level are not slow, however many times it they are.
    const small = Array.from({ length: 60 }, (_, i) => (i < 20 ? 60 : 12));
    expect(judgeSaturation(run({ series: series(small) })).verdict).toBe('neither');
  });

  it('neither: latency steady, nothing unanswered, loops free', () => {
    const v = judgeSaturation(run({ series: series([10, 14, 11, 12, 15, 13, 12, 16, 14]) }));
    expect(v.verdict).toBe('neither');
    expect(v.evidence).toEqual([
      "the median second's latency p99 steady (11.0 ms in the first third, 14.0 ms in the last)",
      'no request unanswered or timed out',
      'worker loops free (worker event-loop lag p99 ≤ 6.00 ms, busy ≤ 35%, CPU 40%)',
    ]);
    // A small rise is noise, not saturation: 5 ms → 30 ms is 6× but under 50 ms more.
    expect(judgeSaturation(run({ series: series([5, 5, 5, 5, 30, 30, 30, 30, 30]) })).verdict).toBe('neither');
    // Without a time series (or too short a one) the overall figures speak.
    const plain = judgeSaturation(run({ series: series([10, 900]) }));
    expect(plain.verdict).toBe('neither');
    expect(plain.evidence[0]).toBe('latency p99 20.0 ms over 1000 requests');
  });

  it("is on the HTML page too, the summary's own verdict first", () => {
    const climbing = { ...run({ series: series([10, 12, 11, 40, 90, 200, 400, 800, 900]) }), target: 'embedded', machine: { cpus: 2, cpuModel: 'cpu', node: 'v20' } } as RunSummary;
    const html = generatorSection(climbing);
    expect(html).toContain('<p class="bad-text"><strong>Saturated: the controller.</strong> the median second');
    expect(html).toContain('latency p99 climbed from 11.0 ms (first third of the run) to 800 ms (last third); while the worker loops stayed free');
    const stored = { ...climbing, saturation: { verdict: 'neither' as const, evidence: ['as the run judged it'], figures: judgeSaturation(climbing).figures } };
    expect(generatorSection(stored)).toContain('<p class="ok-text"><strong>Saturated: neither the controller nor the generator.</strong> as the run judged it.</p>');
  });
});
