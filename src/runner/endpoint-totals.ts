// The merged figures of one endpoint on the main thread (the run's in FleetAggregate, the drain's in
// DrainFigures): counts and the latency histogram over all status classes.

import type { LatencyHistogram } from '../fleet/latency-histogram.js';
import type { RequestEndpointKey as EndpointKey } from '../device/ports.js';

export interface EndpointTotals {
  endpoint: EndpointKey;
  count: number;
  errors: number;
  /** Non-success answers the devices expected (not errors), e.g. config 403 before attestation. */
  expected: number;
  sumMs: number;
  /** All status classes together. */
  hist: LatencyHistogram;
}
