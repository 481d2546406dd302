// Threshold subjects about the generator itself rather than the controller:
//   loop_lag.p99 < 100ms               the worst worker's event-loop lag p99 over the run phase
//   loop_lag.p99 < 100ms after 2m      ... over a window: the worst worker's worst 1 s interval
//   memory.rss < 2GiB                  the generator process's peak RSS during the run and drain
//   memory.rss_per_device < 24KiB      that peak ÷ the run's devices (fixed costs included)
// Evaluation: src/runner/generator-threshold-measure.ts.

import type { ThresholdValueKind } from './threshold-kinds.js';

export const GENERATOR_THRESHOLD_SUBJECTS: Readonly<Record<string, Readonly<Record<string, ThresholdValueKind>>>> = {
  loop_lag: { p99: 'latency-ms' },
  memory: { rss: 'bytes', rss_per_device: 'bytes' },
};
