// Measures the thresholds on the generator itself (src/scenario/generator-thresholds.ts) from the
// summary: the worst worker's event-loop lag p99 over the run, and the process's peak RSS sampled
// during the run and the drain (rss-peak.ts), whole or per device of the run.

import type { MeasuredRun } from './summary-json.js';
import type { ThresholdMeasure } from './threshold-measure.js';

/** The measure of `subject.stat`, or undefined when it is not a generator threshold. */
export function measureGeneratorThreshold(subject: string, stat: string, run: Pick<MeasuredRun, 'generator' | 'devices'>): ThresholdMeasure | undefined {
  switch (`${subject}.${stat}`) {
    case 'loop_lag.p99': {
      const workers = run.generator.workers;
      if (workers.length === 0) return { cannot: 'no worker reported its event-loop lag' };
      return { value: Math.max(...workers.map((w) => w.eventLoopLagP99Ms)) };
    }
    case 'memory.rss': {
      const peak = run.generator.rssPeakBytes;
      return peak === undefined ? { cannot: 'the run recorded no RSS of the generator process' } : { value: peak };
    }
    case 'memory.rss_per_device': {
      const peak = run.generator.rssPeakBytes;
      if (peak === undefined) return { cannot: 'the run recorded no RSS of the generator process' };
      if (run.devices.total === 0) return { cannot: 'the run had no devices' };
      return { value: peak / run.devices.total };
    }
    default:
      return undefined;
  }
}
