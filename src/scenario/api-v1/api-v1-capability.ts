// Controller API v1 in the scenario layer: a group's `api`, `connection` and `v1Config`, placed
// right after name and count. (The `{api:v1}` threshold tag is part of the threshold grammar:
// api-thresholds.ts, called by parse-threshold.ts.)

import type { ScenarioCapability } from '../scenario-capability.js';
import { API_GROUP_PROPERTIES, apiGroupFields, checkApiChoices, type ApiGroupDocument } from './api-scenario.js';

export const API_V1_SCENARIO: ScenarioCapability = {
  name: 'api-v1',
  schema: { groupProperties: API_GROUP_PROPERTIES },
  groupFieldsAfter: 'count',
  check: checkApiChoices,
  buildGroup: (g) => apiGroupFields(g as ApiGroupDocument),
};
