// Threshold subjects for faults: did the devices a network fault hit, or a power loss took down, get
// current again after it?
//   fault_recovery.ratio == 1     every device hit got a configuration answer (200/304) after the window
//   fault_recovery.max < 2m       the last of them within two minutes of the window's end
// Evaluation: src/runner/faults/fault-thresholds.ts.

import type { ThresholdValueKind } from '../threshold-kinds.js';

export const FAULT_THRESHOLD_SUBJECTS: Readonly<Record<string, Readonly<Record<string, ThresholdValueKind>>>> = {
  fault_recovery: { ratio: 'fraction', max: 'latency-ms' },
};
