// Judges a scenario's thresholds against the measured run. A threshold that cannot be measured
// (a latency bound on an endpoint that got no requests, a ratio of zero devices) FAILS with the
// reason: a check that was never made must not turn a CI run green. The one exception: figures only
// the embedded servers provide (attestation outcomes, LPS figures) against a real controller are
// "not checked" — reported apart, not failing the run — unless the threshold is required.
// Parsing lives with the scenario loader (src/scenario/parse-threshold.ts) so typos fail at load time.

import { measureOnboardingThreshold } from './onboarding-threshold-measure.js';
import { ENDPOINT_KEYS } from '../protocol/endpoints.js';
import { runOfApi } from './api-v1/api-thresholds.js';
import { parseThreshold, thresholdValueKind, type ThresholdValueKind } from '../scenario/parse-threshold.js';
import type { ThresholdSpec } from '../scenario/scenario-types.js';
import { describeBasis, perDeviceBound } from '../scenario/threshold-basis.js';
import { RUN_CAPABILITIES } from './capabilities.js';
import { emptyEndpointStats, endpointStats, type EndpointStats, type MeasuredRun, type ThresholdResult } from './summary-json.js';
import { DRAIN_PREFIX } from '../scenario/drain-thresholds.js';
import type { ThresholdMeasure } from './threshold-measure.js';
import { formatThresholdValue } from './format-values.js';
import type { WindowMeasures } from './series/threshold-windows.js';
import { UNFINISHED_SUFFIX } from '../scenario/unfinished-thresholds.js';
import { measureGeneratorThreshold } from './generator-threshold-measure.js';

export { parseThreshold, thresholdValueKind, type ThresholdValueKind };

/** Controller endpoints and the capabilities' (lps.radio, ...). */
const ENDPOINT_SUBJECTS: ReadonlySet<string> = new Set([...ENDPOINT_KEYS, ...RUN_CAPABILITIES.flatMap((c) => c.endpointKeys ?? [])]);

/** `windows` measures the thresholds with a window (`… after 2m`) from the run's intervals; without
 *  it (a summary without them) those cannot be checked and fail. */
export function evaluateThresholds(specs: readonly ThresholdSpec[], run: MeasuredRun, windows?: WindowMeasures): ThresholdResult[] {
  return specs.map((s) => evaluateThreshold(s, run, windows));
}

export function evaluateThreshold(spec: ThresholdSpec, run: MeasuredRun, windows?: WindowMeasures): ThresholdResult {
  // `{api:v1}`: the same measure on that API's part of the run.
  const view = spec.api ? runOfApi(run, spec.api) : run;
  const b: Bound = 'cannot' in view ? { bound: null } : boundOf(spec, view);
  const result = (status: ThresholdResult['status'], actual: number | null, detail: string): ThresholdResult => ({
    source: spec.source,
    status,
    passed: status === 'passed',
    actual,
    bound: b.bound,
    ...(b.perDevice ? { perDevice: b.perDevice } : {}),
    ...(spec.required ? { required: true as const } : {}),
    detail,
  });
  const m: ThresholdMeasure = 'cannot' in view ? view : b.cannot !== undefined ? { cannot: b.cannot } : spec.window ? measureWindow(spec, windows) : measure(spec, view);
  if ('notChecked' in m) {
    // Only a real controller lacks these figures by nature; with the embedded one they must exist.
    if (!againstRealController(run)) return result('failed', null, `cannot check: ${m.notChecked}`);
    if (spec.required) return result('failed', null, `not checked, but required: ${m.notChecked}`);
    return result('not-checked', null, `not checked: ${m.notChecked}`);
  }
  if ('cannot' in m) return result('failed', null, `cannot check: ${m.cannot}`);
  const passed = compare(m.value, spec.op, b.bound!);
  return result(passed ? 'passed' : 'failed', m.value, formatThresholdValue(thresholdValueKind(spec), m.value));
}

/** True when no threshold failed: passed or not checked (not-checked ones are not required). */
export function noThresholdFailed(results: readonly ThresholdResult[]): boolean {
  return results.every((r) => r.status !== 'failed');
}

/** The run's target is a real controller (a URL), not the embedded one. */
function againstRealController(run: Pick<MeasuredRun, 'target'>): boolean {
  return run.target !== undefined && run.target !== 'embedded';
}

interface Bound {
  bound: number | null;
  perDevice?: { devices: number; effective: string };
  /** Why the bound cannot be known. */
  cannot?: string;
}

/** The bound the measure is compared with: the value as written, or value × the basis's devices. */
function boundOf(spec: ThresholdSpec, view: MeasuredRun): Bound {
  const basis = spec.perDevice;
  if (!basis) return { bound: spec.value };
  // The loader counts the basis from the scaled groups; a spec parsed on its own (no scenario) can
  // only count every device of the run.
  let devices = basis.devices;
  if (devices === undefined) {
    if (basis.kind !== 'device' || basis.group !== undefined) {
      return { bound: null, cannot: `"${spec.source}" was not resolved against a scenario's groups` };
    }
    devices = view.devices.total;
  }
  const bound = perDeviceBound(spec.value, devices);
  const effective = `${OP_SIGNS[spec.op]} ${formatThresholdValue('count', bound)} for ${describeBasis(spec, basis, devices)}`;
  return { bound, perDevice: { devices, effective } };
}

function measureWindow(spec: ThresholdSpec, windows: WindowMeasures | undefined): ThresholdMeasure {
  return windows ? windows.measure(spec) : { cannot: 'judged over a window of the run phase, but the run\'s intervals are not at hand' };
}

const OP_SIGNS: Record<ThresholdSpec['op'], string> = { '<': '<', '<=': '≤', '>': '>', '>=': '≥', '==': '=' };

function measure(spec: ThresholdSpec, run: MeasuredRun): ThresholdMeasure {
  const { subject, stat } = spec;
  // Capabilities first: an lps.* endpoint of a run without LPS is not checked, not "0 requests".
  for (const c of RUN_CAPABILITIES) {
    const m = c.measureThreshold?.(subject, stat, run);
    if (m !== undefined) return m;
  }
  if (subject === 'all' || ENDPOINT_SUBJECTS.has(subject)) return measureRequests(subject, stat, run);
  if (subject.startsWith(DRAIN_PREFIX)) return measureDrainRequests(subject.slice(DRAIN_PREFIX.length), stat, run);
  const generator = measureGeneratorThreshold(subject, stat, run);
  if (generator) return generator;
  const onboarding = measureOnboardingThreshold(subject, stat, run);
  if (onboarding) return onboarding;
  if (stat === 'count' && subject.endsWith(UNFINISHED_SUFFIX)) {
    const endpoint = subject.slice(0, -UNFINISHED_SUFFIX.length);
    if (ENDPOINT_SUBJECTS.has(endpoint)) return { value: endpointStats(run, endpoint).unfinished ?? 0 };
  }
  switch (`${subject}.${stat}`) {
    case 'errors.count':
      return { value: requestTotals(run).errors };
    case 'errors.rate': {
      const t = requestTotals(run);
      return t.count === 0 ? { cannot: 'no requests were made during the run' } : { value: t.errors / t.count };
    }
    case 'onboarded.count':
      return { value: run.devices.onboarded };
    case 'onboarded.ratio':
      return run.devices.total === 0
        ? { cannot: 'the run had no devices' }
        : { value: run.devices.onboarded / run.devices.total };
    case 'devices.total':
      return { value: run.devices.total };
    case 'undelivered.count':
      return { value: run.undelivered.total };
    case 'findings.count':
      return { value: run.findings.total };
    case 'expected.count':
      return { value: run.expected?.total ?? requestTotals(run).expected };
    case 'unfinished.count':
      return { value: requestTotals(run).unfinished };
    default:
      return { cannot: `"${subject}.${stat}" is not a measure evesim records` };
  }
}

function measureRequests(subject: string, stat: string, run: MeasuredRun): ThresholdMeasure {
  // Counts and rates add up exactly over endpoints; percentiles of all requests come from the merged
  // histogram in `overall`, which the summary must carry.
  const stats: EndpointStats = subject === 'all' ? { ...run.overall, ...requestTotals(run) } : endpointStats(run, subject);
  switch (stat) {
    case 'count':
      return { value: stats.count };
    case 'rate':
      return { value: stats.rate };
    case 'p50':
    case 'p90':
    case 'p99':
    case 'max': {
      const what = subject === 'all' ? 'any endpoint' : subject;
      if (stats.count === 0) return { cannot: `no requests to ${what} during the run, so no latency to check` };
      if (subject === 'all' && run.overall.count === 0) {
        return { cannot: `the merged latency histogram is empty although ${stats.count} requests were counted` };
      }
      const key = `${stat}_ms` as 'p50_ms' | 'p90_ms' | 'p99_ms' | 'max_ms';
      return { value: (subject === 'all' ? run.overall : stats)[key] };
    }
    default:
      return { cannot: `"${subject}.${stat}" is not a measure evesim records` };
  }
}

/** The same request measures over the drain's own requests (summary `drain.endpoints`). */
function measureDrainRequests(subject: string, stat: string, run: MeasuredRun): ThresholdMeasure {
  const d = run.drain;
  if (!d) return { cannot: 'the run had no graceful stop, so no drain figures' };
  const count = (subject === 'all' ? d.overall : d.endpoints?.[subject])?.count ?? 0;
  if (count === 0 && stat !== 'count' && stat !== 'rate') return { cannot: `the drain made no requests${subject === 'all' ? '' : ` to ${subject}`}, so no latency to check` };
  return measureRequests(subject, stat, { ...run, endpoints: d.endpoints ?? {}, overall: d.overall ?? emptyEndpointStats() });
}

function requestTotals(run: MeasuredRun): { count: number; errors: number; expected: number; unfinished: number; rate: number } {
  let count = 0;
  let errors = 0;
  let expected = 0;
  let unfinished = 0;
  let rate = 0;
  for (const s of Object.values(run.endpoints)) {
    count += s.count;
    errors += s.errors;
    expected += s.expected ?? 0;
    // Absent from summaries written before unfinished requests were counted.
    unfinished += s.unfinished ?? 0;
    rate += s.rate;
  }
  return { count, errors, expected, unfinished, rate };
}

export function compare(actual: number, op: ThresholdSpec['op'], bound: number): boolean {
  switch (op) {
    case '<':
      return actual < bound;
    case '<=':
      return actual <= bound;
    case '>':
      return actual > bound;
    case '>=':
      return actual >= bound;
    case '==':
      // Ratios are quotients of integers; allow for floating-point noise, nothing more.
      return Math.abs(actual - bound) <= 1e-9 * Math.max(1, Math.abs(bound));
  }
}
