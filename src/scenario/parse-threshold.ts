// k6-style threshold expressions, parsed when the scenario loads so a typo fails before the run,
// not after ten minutes of load. Grammar: `<subject>.<stat> <op> <value>`, e.g.
//   config.p99 < 200ms    all.max <= 2s    register.rate >= 50/s    errors.rate < 0.1%
//   errors.count == 0     onboarded.ratio == 1    undelivered.count == 0    findings.count == 0
//   expected.count <= 60  (expected rejections, e.g. config 403 before attestation)
//   unfinished.count == 0    config.unfinished.count == 0  (no answer by the end of the run)
//   config{api:v1}.p99 < 1s  (one controller API of a mixed fleet, api-thresholds.ts)
//   register.count >= 1 per device    onboarded.count >= 90% of devices  (scale with --devices,
//                                     threshold-basis.ts)
//   config.p99 < 200ms after 2m    errors.count == 0 during 1m..3m  (a window, threshold-window.ts)
//   loop_lag.p99 < 100ms    memory.rss < 2GiB    memory.rss_per_device < 24KiB  (the generator itself,
//                                     generator-thresholds.ts)
//   onboarding.p99 < 10s    onboarding.trail < 5s  (arrival to onboarded, onboarding-thresholds.ts)
// In a scenario file an entry is the expression, or `{ threshold: <expression>, required: true }`
// for one that must fail rather than be "not checked" when the target cannot provide its figures,
// or `{ threshold: …, abortOnFail: true, delayAbortEval: 30s }` for one that ends the run early.
// Evaluation against a run summary lives in src/runner/thresholds.ts.

import { ENDPOINT_KEYS } from '../protocol/endpoints.js';
import type { ThresholdSpec } from './scenario-types.js';
import { parseDuration } from './parse-duration.js';
import { didYouMean } from './suggest.js';
import { SCENARIO_CAPABILITIES } from './capabilities.js';
import { checkApiTaggable, splitApiTag } from './api-v1/api-thresholds.js';
import { REQUEST_STATS } from './request-threshold-stats.js';
import { UNFINISHED_THRESHOLD_SUBJECTS } from './unfinished-thresholds.js';
import { DRAIN_THRESHOLD_SUBJECTS } from './drain-thresholds.js';
import { GENERATOR_THRESHOLD_SUBJECTS } from './generator-thresholds.js';
import { ONBOARDING_THRESHOLD_SUBJECTS } from './onboarding-thresholds.js';
import { parseBytes } from './parse-bytes.js';
import { splitPerDevice } from './threshold-basis.js';
import { isSeriesSubject, splitWindow } from './threshold-window.js';
import type { ThresholdValueKind } from './threshold-kinds.js';

export type { ThresholdValueKind } from './threshold-kinds.js';

/** Every subject and the stats it has. Endpoint keys and `all` share the request stats. */
export const THRESHOLD_SUBJECTS: Readonly<Record<string, Readonly<Record<string, ThresholdValueKind>>>> = {
  ...Object.fromEntries([...ENDPOINT_KEYS, 'all'].map((k) => [k, REQUEST_STATS])),
  errors: { rate: 'fraction', count: 'count' },
  onboarded: { ratio: 'fraction', count: 'count' },
  /** Time from arrival to onboarded: onboarding.p99, onboarding.trail (onboarding-thresholds.ts). */
  ...ONBOARDING_THRESHOLD_SUBJECTS,
  devices: { total: 'count' },
  undelivered: { count: 'count' },
  findings: { count: 'count' },
  /** Non-success answers the devices expected (config 403 before attestation): not errors. */
  expected: { count: 'count' },
  /** Requests still waiting for their answer when the run ended: unfinished.count, config.unfinished.count. */
  ...UNFINISHED_THRESHOLD_SUBJECTS,
  /** The graceful stop's requests, apart from the run's: drain.newlogs.p99, drain.all.count. */
  ...DRAIN_THRESHOLD_SUBJECTS,
  /** The generator's own health: loop_lag.p99, memory.rss, memory.rss_per_device (generator-thresholds.ts). */
  ...GENERATOR_THRESHOLD_SUBJECTS,
  /** The capabilities' subjects: attestation.QUOTE_FAILED, lps.radio.p99, lps_command.p99, ... (capabilities.ts). */
  ...Object.assign({}, ...SCENARIO_CAPABILITIES.map((c) => c.thresholdSubjects ?? {})),
};

const SECONDS_PER: Record<string, number> = { s: 1, m: 60, min: 60, h: 3600 };
const OPS = ['<=', '>=', '==', '<', '>'] as const;
// The subject may itself contain dots (lps.radio): the stat is what follows the last one.
const EXPR = /^\s*([A-Za-z_][\w.-]*)\.([A-Za-z_][\w()]*)\s*(<=|>=|==|<|>|=|!=)\s*(.*?)\s*$/;

export function thresholdValueKind(spec: Pick<ThresholdSpec, 'subject' | 'stat'>): ThresholdValueKind {
  const kind = THRESHOLD_SUBJECTS[spec.subject]?.[spec.stat];
  if (!kind) throw new Error(`threshold ${spec.subject}.${spec.stat} is not a known measure`);
  return kind;
}

/** Parses one expression; throws an Error whose message says what is wrong and what would be right. */
export function parseThreshold(source: string): ThresholdSpec {
  const { text: tagged, api } = splitApiTag(source);
  const { text, window } = splitWindow(tagged);
  const m = EXPR.exec(text);
  if (!m) {
    throw new Error(`"${source}" is not a threshold; expected <subject>.<stat> <op> <value>, e.g. "config.p99 < 200ms"`);
  }
  const [, subject, stat, rawOp, rawValue] = m;
  const stats = THRESHOLD_SUBJECTS[subject];
  if (!stats) {
    throw new Error(
      `unknown threshold subject "${subject}"${didYouMean(subject, Object.keys(THRESHOLD_SUBJECTS))}; ` +
        `expected an endpoint (${ENDPOINT_KEYS.join(', ')}), an LPS endpoint (lps.radio, ...), all, errors, expected, unfinished, onboarded, onboarding, devices, undelivered, findings, loop_lag, memory, attestation, attestation_devices, lps_command or lps_token`,
    );
  }
  const kind = stats[stat];
  if (!kind) {
    const k6 = /^p\((\d+)\)$/.exec(stat);
    const hint = k6 ? ` (write p${k6[1]})` : didYouMean(stat, Object.keys(stats));
    throw new Error(`"${subject}" has no stat "${stat}"${hint}; it has ${Object.keys(stats).join(', ')}`);
  }
  if (rawOp === '=' || rawOp === '!=') {
    throw new Error(`operator "${rawOp}" is not supported; use one of ${OPS.join(' ')}`);
  }
  const op = rawOp as ThresholdSpec['op'];
  if (rawValue === '') throw new Error(`"${source}" has no value after "${op}"`);
  const perDevice = splitPerDevice(rawValue, source.trim());
  if (perDevice && kind !== 'count') {
    throw new Error(`"${source.trim()}": only counts scale with devices; ${subject}.${stat} is ${KIND_WORDS[kind]}`);
  }
  const value = perDevice
    ? parseThresholdValue(perDevice.number, perDevice.percent ? 'fraction' : 'count', `${subject}.${stat} per device`)
    : parseThresholdValue(rawValue, kind, `${subject}.${stat}`);
  if (api) checkApiTaggable(subject, source.trim());
  if (window) checkWindowable(subject, api, source.trim());
  return {
    source: source.trim(),
    subject,
    stat,
    op,
    value,
    ...(api ? { api } : {}),
    ...(perDevice ? { perDevice: perDevice.basis } : {}),
    ...(window ? { window } : {}),
  };
}

/** Only what the series records interval by interval can be judged over a window or while the run goes. */
function checkWindowable(subject: string, api: string | undefined, source: string): void {
  if (!isSeriesSubject(subject)) {
    throw new Error(`"${source}": only request figures (an endpoint, all), errors, findings and loop_lag can be judged over a window; "${subject}" is known only for the whole run`);
  }
  if (api) throw new Error(`"${source}": a threshold with a window cannot also name an API ({api:…}): the series is not split by API`);
}

/** A scenario's `thresholds` entry: the expression, or `{ threshold, required, abortOnFail, delayAbortEval }`. */
export type ThresholdEntry = string | { threshold: string; required?: boolean; abortOnFail?: boolean; delayAbortEval?: string };

export function parseThresholdEntry(entry: ThresholdEntry): ThresholdSpec {
  if (typeof entry === 'string') return parseThreshold(entry);
  const spec = parseThreshold(entry.threshold);
  if (entry.abortOnFail) checkAbortable(spec);
  return {
    ...spec,
    ...(entry.required ? { required: true } : {}),
    ...(entry.abortOnFail ? { abortOnFail: true } : {}),
    ...(entry.abortOnFail && entry.delayAbortEval !== undefined ? { delayAbortEvalMs: parseDuration(entry.delayAbortEval) } : {}),
  };
}

/** abortOnFail is judged from the series while the run goes: the same subjects as a window. */
export function checkAbortable(spec: Pick<ThresholdSpec, 'subject' | 'api' | 'source'>): void {
  if (!isSeriesSubject(spec.subject)) {
    throw new Error(`"${spec.source}": abortOnFail needs a figure measured while the run goes: an endpoint, all, errors, findings or loop_lag ("${spec.subject}" is known only at the end)`);
  }
  if (spec.api) throw new Error(`"${spec.source}": abortOnFail cannot be combined with an API tag ({api:…}): the series is not split by API`);
}

const KIND_WORDS: Record<ThresholdValueKind, string> = {
  'latency-ms': 'a latency',
  count: 'a count',
  'per-second': 'a rate',
  fraction: 'a fraction',
  bytes: 'a size',
};

function parseThresholdValue(text: string, kind: ThresholdValueKind, what: string): number {
  switch (kind) {
    case 'latency-ms':
      try {
        return parseDuration(text);
      } catch (e) {
        throw new Error(`${what} is a latency: ${(e as Error).message}`);
      }
    case 'count': {
      const n = plainNumber(text);
      if (n === undefined || n < 0) throw new Error(`${what} is a count: expected a number ≥ 0 (got "${text}")`);
      return n;
    }
    case 'per-second': {
      const perUnit = /^(\d+(?:\.\d+)?)\s*\/\s*(s|m|min|h)$/.exec(text);
      if (perUnit) return Number(perUnit[1]) / SECONDS_PER[perUnit[2]];
      const n = plainNumber(text);
      if (n === undefined || n < 0) {
        throw new Error(`${what} is requests per second: expected e.g. 50/s, 3000/m or 50 (got "${text}")`);
      }
      return n;
    }
    case 'bytes':
      try {
        return parseBytes(text);
      } catch (e) {
        throw new Error(`${what} is a size: ${(e as Error).message}`);
      }
    case 'fraction': {
      const pct = /^(\d+(?:\.\d+)?)\s*%$/.exec(text);
      const n = pct ? Number(pct[1]) / 100 : plainNumber(text);
      if (n === undefined || n < 0 || n > 1) {
        throw new Error(`${what} is a fraction: expected 0 to 1 or a percentage such as 0.1% (got "${text}")`);
      }
      return n;
    }
  }
}

function plainNumber(text: string): number | undefined {
  return /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text) ? Number(text) : undefined;
}
