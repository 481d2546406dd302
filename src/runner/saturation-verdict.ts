// Who was saturated in a run, with the figures that say so: the generator (its workers' event loops
// lagged or were busy nearly all the time: the figures understate the target), the controller
// (latencies climbed, or requests timed out or never got an answer, while the workers' loops stayed
// free), the machine (the controller's signs, but every core of the machine was nearly all busy:
// the generator shared them with something, often the controller itself), or neither. Pure: summary → verdict. The report prints it; the summary JSON carries it as
// `saturation`.

import type { RunSummary } from './summary-json.js';
import type { RunInterval } from './run-series.js';
import { judgeGenerator } from './generator-verdict.js';
import { formatMs } from './format-values.js';
import type { SaturationFigures, SaturationVerdict } from './saturation-types.js';

export type { SaturatedParty, SaturationFigures, SaturationVerdict } from './saturation-types.js';

/** A latency trend needs at least this many run-phase intervals with requests. */
const MIN_TREND_INTERVALS = 6;
/** Latency "climbed": the last third's p99 at least this many times the first third's ... */
const CLIMB_FACTOR = 2;
/** ... and at least this much higher, ms (a 2 ms → 5 ms change is noise, not saturation). */
const CLIMB_MIN_MS = 50;

/** The machine's CPUs this busy (percent, every process counted) leave the generator no room of its own. */
export const MACHINE_BUSY_LIMIT_PERCENT = 90;

/** Transport error codes that mean the controller did not answer in time. */
const TIMEOUT_CODES = ['timeout', 'connect-timeout'];

export function judgeSaturation(s: Pick<RunSummary, 'generator' | 'overall' | 'endpoints' | 'series'>): SaturationVerdict {
  const figures = saturationFigures(s);
  const loops = loopsText(figures);
  const generator = judgeGenerator(s.generator, s.series);
  const machine = figures.machineCpuPercent;
  const machineFull = machine !== undefined && machine >= MACHINE_BUSY_LIMIT_PERCENT;
  const machineText = machineFull
    ? `the machine's CPUs were ${machine.toFixed(0)}% busy, every process counted (this generator ${figures.cpuPercent.toFixed(0)}%, everything else ${Math.max(0, machine - figures.cpuPercent).toFixed(0)}%)`
    : '';
  if (generator.bottleneck) {
    // Capped: the latencies hold the generator's own queue, so they overstate the controller's.
    const closing = generator.inFlightCapped
      ? "latencies include the generator's own queue and rates are the caps', not the fleet's: raise --max-in-flight or add workers"
      : 'latencies and rates understate the target';
    return { verdict: 'generator', evidence: [...generator.reasons, ...(machineFull ? [machineText] : []), closing], figures };
  }
  const controller: string[] = [];
  const t = figures.latencyTrend;
  if (t && climbed(t)) controller.push(`latency p99 climbed from ${formatMs(t.firstP99Ms)} ms (first third of the run) to ${formatMs(t.lastP99Ms)} ms (last third)`);
  if (figures.unfinished > 0) controller.push(`${figures.unfinished} requests still unanswered at the end`);
  if (figures.timeouts > 0) controller.push(`${figures.timeouts} requests timed out`);
  if (controller.length > 0 && machineFull) {
    return {
      verdict: 'machine',
      evidence: [
        machineText,
        ...controller,
        `the worker loops: ${loops}`,
        'the generator and the rest of the machine (a controller on it?) competed for the cores, so these latencies measure the machine as much as the controller',
      ],
      figures,
    };
  }
  if (controller.length > 0) return { verdict: 'controller', evidence: [...controller, `while the worker loops stayed free (${loops})`], figures };
  const steady = t
    ? `latency p99 steady (${formatMs(t.firstP99Ms)} ms in the first third, ${formatMs(t.lastP99Ms)} ms in the last)`
    : `latency p99 ${formatMs(figures.latencyP99Ms)} ms over ${figures.requests} requests`;
  return { verdict: 'neither', evidence: [steady, 'no request unanswered or timed out', `worker loops free (${loops})`], figures };
}

function climbed(t: { firstP99Ms: number; lastP99Ms: number }): boolean {
  return t.lastP99Ms >= CLIMB_FACTOR * t.firstP99Ms && t.lastP99Ms - t.firstP99Ms >= CLIMB_MIN_MS;
}

function saturationFigures(s: Pick<RunSummary, 'generator' | 'overall' | 'endpoints' | 'series'>): SaturationFigures {
  const workers = s.generator.workers;
  const busy = workers.map((w) => w.busy).filter((b): b is number => b !== undefined);
  let unfinished = 0;
  let timeouts = 0;
  for (const e of Object.values(s.endpoints)) {
    unfinished += e.unfinished ?? 0;
    for (const code of TIMEOUT_CODES) timeouts += e.byError[code] ?? 0;
  }
  const trend = latencyTrend(s.series?.intervals ?? []);
  return {
    workerLoopLagP99Ms: Math.max(0, ...workers.map((w) => w.eventLoopLagP99Ms)),
    ...(busy.length > 0 ? { workerBusy: Math.max(...busy) } : {}),
    cpuPercent: s.generator.cpuPercent,
    ...(s.generator.machineCpuPercent !== undefined ? { machineCpuPercent: s.generator.machineCpuPercent } : {}),
    latencyP99Ms: s.overall.p99_ms,
    requests: s.overall.count,
    ...(trend ? { latencyTrend: trend } : {}),
    unfinished,
    timeouts,
  };
}

/** Median interval p99 (worst endpoint of each interval) in the first and last third of the run phase. */
function latencyTrend(intervals: readonly RunInterval[]): { firstP99Ms: number; lastP99Ms: number } | undefined {
  const p99s: number[] = [];
  for (const iv of intervals) {
    if (iv.phase !== 'run') continue;
    const worst = Math.max(-1, ...Object.values(iv.endpoints).map((e) => (e.requests > 0 ? (e.p99Ms ?? -1) : -1)));
    if (worst >= 0) p99s.push(worst);
  }
  if (p99s.length < MIN_TREND_INTERVALS) return undefined;
  const third = Math.floor(p99s.length / 3);
  return { firstP99Ms: median(p99s.slice(0, third)), lastP99Ms: median(p99s.slice(p99s.length - third)) };
}

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function loopsText(f: SaturationFigures): string {
  const busy = f.workerBusy !== undefined ? `, busy ≤ ${(f.workerBusy * 100).toFixed(0)}%` : '';
  return `worker event-loop lag p99 ≤ ${formatMs(f.workerLoopLagP99Ms)} ms${busy}, CPU ${f.cpuPercent.toFixed(0)}%`;
}
