// abortOnFail (k6's): thresholds judged at each closed interval of the run phase, once their
// delayAbortEval has passed, over the run phase so far (or their window). The first that fails
// with a measured value ends the run phase early; one that cannot be measured yet (no requests to
// its endpoint so far) does not: absence of data is not a failure until the final judgement.

import { perDeviceBound } from '../../scenario/threshold-basis.js';
import type { ThresholdSpec } from '../../scenario/scenario-types.js';
import type { RunInterval } from '../run-series.js';
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
