// The runner's capabilities, in the order their summary sections, report lines and threshold
// subjects come. Adding one: a folder beside these and one line here (and in
// src/scenario/capabilities.ts for its scenario side).

import { API_V1_RUN } from './api-v1/api-v1-capability.js';
import { ATTESTATION_RUN } from './attestation/attestation-capability.js';
import { LPS_RUN } from './lps/lps-capability.js';
import { FAULT_RUN } from './faults/fault-capability.js';
import type { RunCapability } from './run-capability.js';

export const RUN_CAPABILITIES: readonly RunCapability[] = [
  ATTESTATION_RUN,
  LPS_RUN,
  API_V1_RUN,
  FAULT_RUN,
];
