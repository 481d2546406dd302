// What a threshold's number measures. A leaf of the scenario layer: the threshold grammar
// (parse-threshold.ts) and the capabilities' subject tables both name it, and the grammar reads
// those tables through the registry, so the kind cannot live in the grammar without a cycle.

/** What a threshold's number measures, which decides how its value is written and shown. */
export type ThresholdValueKind = 'latency-ms' | 'count' | 'per-second' | 'fraction' | 'bytes';
