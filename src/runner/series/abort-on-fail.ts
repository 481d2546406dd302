// abortOnFail (k6's): thresholds judged at each closed interval of the run phase, once their
// delayAbortEval has passed, over the run phase so far (or their window). The first that fails
// with a measured value ends the run phase early; one that cannot be measured yet (no requests to
// its endpoint so far) does not: absence of data is not a failure until the final judgement.
// markAbortingThreshold() then reports the threshold that ended the run as failed, with when.

import { perDeviceBound } from '../../scenario/threshold-basis.js';
import type { ThresholdSpec } from '../../scenario/scenario-types.js';
import type { RunInterval } from '../run-series.js';
import type { ThresholdResult } from '../summary-json.js';
import { formatThresholdValue } from '../format-values.js';
import { thresholdValueKind } from '../../scenario/parse-threshold.js';
import { describeWindow } from '../../scenario/threshold-window.js';
import { compare } from '../thresholds.js';
import type { WindowMeasures } from './threshold-windows.js';

export interface AbortVerdict {
  /** The threshold that failed, and its place in the scenario's list. */
  spec: ThresholdSpec;
  index: number;
  /** End of the interval it failed at, ms since the start instant. */
  tMs: number;
  /** What it measured then, in the threshold's unit. */
  value: number;
}

export class AbortOnFail {
  verdict: AbortVerdict | undefined;
  private readonly watched: { spec: ThresholdSpec; index: number }[];

  constructor(
    specs: readonly ThresholdSpec[],
    private readonly measures: WindowMeasures,
    private readonly onAbort: (v: AbortVerdict) => void,
  ) {
    this.watched = specs.flatMap((spec, index) => (spec.abortOnFail ? [{ spec, index }] : []));
  }

  get empty(): boolean {
    return this.watched.length === 0;
  }

  /** Judges the watched thresholds after `interval` closed (its figures already measured). */
  check(interval: Pick<RunInterval, 'tMs' | 'durationMs' | 'phase'>): void {
    if (this.verdict || interval.phase !== 'run') return;
    const elapsedMs = interval.tMs + interval.durationMs;
    for (const { spec, index } of this.watched) {
      if (elapsedMs < (spec.delayAbortEvalMs ?? 0)) continue;
      const bound = spec.perDevice ? (spec.perDevice.devices === undefined ? undefined : perDeviceBound(spec.value, spec.perDevice.devices)) : spec.value;
      if (bound === undefined) continue;
      const m = this.measures.measure(spec);
      if (!('value' in m) || compare(m.value, spec.op, bound)) continue;
      this.verdict = { spec, index, tMs: elapsedMs, value: m.value };
      this.onAbort(this.verdict);
      return;
    }
  }
}

/** The threshold that aborted the run fails, with what it measured then and when, whatever the
 *  whole run later measured. */
export function markAbortingThreshold(results: ThresholdResult[], v: AbortVerdict | undefined): ThresholdResult[] {
  if (!v) return results;
  return results.map((r, i) => {
    if (i !== v.index) return r;
    const where = v.spec.window ? ` (${describeWindow(v.spec.window)})` : '';
    const detail = `${formatThresholdValue(thresholdValueKind(v.spec), v.value)} at ${(v.tMs / 1000).toFixed(1)} s${where}: aborted the run (abortOnFail)`;
    return { ...r, status: 'failed', passed: false, actual: v.value, detail, abortedRun: { tMs: v.tMs } };
  });
}
