// The scenario layer's capabilities, in the order their schema fields, checks and threshold
// subjects appear. Adding one: a folder beside these and one line here (and in
// src/runner/capabilities.ts for its runner side).

import { API_V1_SCENARIO } from './api-v1/api-v1-capability.js';
import { ATTESTATION_SCENARIO } from './attestation/attestation-capability.js';
import { LPS_SCENARIO } from './lps/lps-capability.js';
import { FAULT_SCENARIO } from './faults/fault-capability.js';
import type { ScenarioCapability } from './scenario-capability.js';

export const SCENARIO_CAPABILITIES: readonly ScenarioCapability[] = [
  ATTESTATION_SCENARIO,
  LPS_SCENARIO,
  API_V1_SCENARIO,
  FAULT_SCENARIO,
];
