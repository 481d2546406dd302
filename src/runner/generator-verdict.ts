// Whether the generator itself limited the run: a worker whose event loop lagged (devices fired
// late) or was busy nearly all the time, or a process using nearly every core. Pure: the summary's
// generator figures → verdict with reasons. The report and the saturation verdict both use it.

import type { GeneratorHealth } from './summary-json.js';
import { formatMs } from './format-values.js';

/** Event-loop lag p99 above this means devices fired late because the generator was busy. */
export const LAG_LIMIT_MS = 100;
/** CPU use (percent of all cores) at or above this means the generator was saturated. */
export const CPU_LIMIT_PERCENT = 90;
/** A worker thread busy (event-loop utilisation) this share of the run or more was saturated. */
export const BUSY_LIMIT = 0.9;

export interface GeneratorVerdict {
  bottleneck: boolean;
  reasons: string[];
}

export function judgeGenerator(g: GeneratorHealth): GeneratorVerdict {
  const reasons: string[] = [];
  for (const w of g.workers) {
    if (w.eventLoopLagP99Ms > LAG_LIMIT_MS) {
      reasons.push(`worker ${w.worker} event-loop lag p99 ${formatMs(w.eventLoopLagP99Ms)} ms > ${LAG_LIMIT_MS} ms`);
    }
    if (w.busy !== undefined && w.busy >= BUSY_LIMIT) {
      reasons.push(`worker ${w.worker} busy ${(w.busy * 100).toFixed(0)}% of the run ≥ ${(BUSY_LIMIT * 100).toFixed(0)}%`);
    }
  }
  if (g.cpuPercent >= CPU_LIMIT_PERCENT) {
    reasons.push(`CPU ${g.cpuPercent.toFixed(0)}% of all cores ≥ ${CPU_LIMIT_PERCENT}%`);
  }
  return { bottleneck: reasons.length > 0, reasons };
}
