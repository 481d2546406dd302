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
/**
 * A slow spell: seconds whose p99 stood CLIMB_FACTOR times the last third's median second and
 * CLIMB_MIN_MS above it, in at least this many of the run's seconds and this share of them. An
 * onboarding storm that swamps the controller for a minute at the start shows so, where the
 * first-third against last-third trend (a median) does not; a stall of a second or two does not.
 */
const SPELL_MIN_SECONDS = 5;
const SPELL_MIN_SHARE = 0.05;
/** Slow seconds this far apart or closer belong to one spell. */
const SPELL_GAP_S = 10;
/** Latency "climbed": the last third's p99 at least this many times the first third's ... */
const CLIMB_FACTOR = 2;
/** ... and at least this much higher, ms (a 2 ms → 5 ms change is noise, not saturation). */
const CLIMB_MIN_MS = 50;

/** The machine's CPUs this busy (percent, every process counted) leave the generator no room of its own. */
export const MACHINE_BUSY_LIMIT_PERCENT = 90;

/** Transport error codes that mean the controller did not answer in time. */
const TIMEOUT_CODES = ['timeout', 'connect-timeout'];

/** The verdict a summary carries (as its run judged it), else judged now from its figures (older summaries). */
export function saturationOf(s: Pick<RunSummary, 'saturation' | 'generator' | 'overall' | 'endpoints' | 'series'>): SaturationVerdict {
  return s.saturation ?? judgeSaturation(s);
}

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
  if (t && climbed(t)) controller.push(`the median second's latency p99 climbed from ${formatMs(t.firstP99Ms)} ms (first third of the run) to ${formatMs(t.lastP99Ms)} ms (last third)`);
  else if (figures.slowSpell) controller.push(spellText(figures.slowSpell, t!.lastP99Ms));
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
    ? `the median second's latency p99 steady (${formatMs(t.firstP99Ms)} ms in the first third, ${formatMs(t.lastP99Ms)} ms in the last)`
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
  // Each interval's worst p99 once, for both the trend and the spell.
  const p99s = intervalP99s(s.series?.intervals ?? []);
  const trend = latencyTrend(p99s);
  const spell = trend ? slowSpell(p99s, trend.lastP99Ms) : undefined;
  return {
    workerLoopLagP99Ms: Math.max(0, ...workers.map((w) => w.eventLoopLagP99Ms)),
    ...(busy.length > 0 ? { workerBusy: Math.max(...busy) } : {}),
    cpuPercent: s.generator.cpuPercent,
    ...(s.generator.machineCpuPercent !== undefined ? { machineCpuPercent: s.generator.machineCpuPercent } : {}),
    latencyP99Ms: s.overall.p99_ms,
    requests: s.overall.count,
    ...(trend ? { latencyTrend: trend } : {}),
    ...(spell ? { slowSpell: spell } : {}),
    unfinished,
    timeouts,
  };
}

interface IntervalP99 {
  tMs: number;
  durationMs: number;
  p99Ms: number;
}

/** The run phase's intervals with requests, each with its worst endpoint's p99, ms (1 s each, longer
 *  once a long run's series was coarsened: their durations count, not their number). */
function intervalP99s(intervals: readonly RunInterval[]): IntervalP99[] {
  const out: IntervalP99[] = [];
  for (const iv of intervals) {
    if (iv.phase !== 'run') continue;
    const worst = Math.max(-1, ...Object.values(iv.endpoints).map((e) => (e.requests > 0 ? (e.p99Ms ?? -1) : -1)));
    if (worst >= 0) out.push({ tMs: iv.tMs, durationMs: iv.durationMs, p99Ms: worst });
  }
  return out;
}

const seconds = (ivs: readonly { durationMs: number }[]): number => Math.round(ivs.reduce((sum, i) => sum + i.durationMs, 0) / 1000);

/** Median interval p99 (worst endpoint of each interval) in the first and last third of the run phase. */
function latencyTrend(intervals: readonly IntervalP99[]): { firstP99Ms: number; lastP99Ms: number } | undefined {
  const p99s = intervals.map((i) => i.p99Ms);
  if (p99s.length < MIN_TREND_INTERVALS) return undefined;
  const third = Math.floor(p99s.length / 3);
  return { firstP99Ms: median(p99s.slice(0, third)), lastP99Ms: median(p99s.slice(p99s.length - third)) };
}

/**
 * The run's slow seconds against the settled level (the last third's median second), when there
 * are enough of them to be a finding, and the longest spell they form (slow seconds at most
 * SPELL_GAP_S apart): where it starts and ends, s from the run's start, and its worst p99.
 */
function slowSpell(all: readonly IntervalP99[], settledMs: number): NonNullable<SaturationFigures['slowSpell']> | undefined {
  const limit = Math.max(CLIMB_FACTOR * settledMs, settledMs + CLIMB_MIN_MS);
  const slow = all.filter((i) => i.p99Ms >= limit);
  const slowSeconds = seconds(slow);
  const runSeconds = seconds(all);
  if (slow.length === 0 || slowSeconds < Math.max(SPELL_MIN_SECONDS, SPELL_MIN_SHARE * runSeconds)) return undefined;
  // The longest spell, by its slow seconds: slow intervals joined across gaps of SPELL_GAP_S or less.
  let best = { from: 0, to: 0, ms: slow[0]!.durationMs };
  let cur = { ...best };
  for (let i = 1; i < slow.length; i++) {
    const prev = slow[i - 1]!;
    const gapMs = slow[i]!.tMs - (prev.tMs + prev.durationMs);
    cur = gapMs <= SPELL_GAP_S * 1000 ? { from: cur.from, to: i, ms: cur.ms + slow[i]!.durationMs } : { from: i, to: i, ms: slow[i]!.durationMs };
    if (cur.ms > best.ms) best = cur;
  }
  const spell = slow.slice(best.from, best.to + 1);
  return {
    slowSeconds,
    runSeconds,
    limitMs: limit,
    fromS: spell[0]!.tMs / 1000,
    toS: (spell[spell.length - 1]!.tMs + spell[spell.length - 1]!.durationMs) / 1000,
    spellSeconds: seconds(spell),
    worstP99Ms: Math.max(...spell.map((i) => i.p99Ms)),
  };
}

function spellText(sp: NonNullable<SaturationFigures['slowSpell']>, settledMs: number): string {
  const share = Math.round((100 * sp.slowSeconds) / sp.runSeconds);
  const where = `${sp.spellSeconds === sp.slowSeconds ? 'all' : sp.spellSeconds} of them from ${sp.fromS.toFixed(0)} s to ${sp.toS.toFixed(0)} s`;
  return (
    `latency p99 ${formatMs(sp.limitMs)} ms or more (the last third's median second: ${formatMs(settledMs)} ms) in ${sp.slowSeconds} of the run's ` +
    `${sp.runSeconds} seconds (${share}%), ${where}, at worst ${formatMs(sp.worstP99Ms)} ms`
  );
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
