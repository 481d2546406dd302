// What measuring one threshold yields: the value, or why there is none. `cannot` fails the
// threshold (the figure exists for this run but holds nothing to judge, e.g. a latency of an
// endpoint that got no requests). `notChecked` says the figure comes from an embedded server this
// run may lack (attestation outcomes, LPS figures): thresholds.ts then reports the threshold as
// "not checked" against a real controller, and fails it with the embedded one or when required.

export type ThresholdMeasure = { value: number } | { cannot: string } | { notChecked: string };
