// Attestation in the scenario layer: the per-group TPM knobs, the scenario's PCR templates and the
// attestation outcome threshold subjects.

import type { ScenarioCapability } from '../scenario-capability.js';
import { ATTESTATION_GROUP_PROPERTIES, ATTESTATION_SCHEMA } from './attestation-schema.js';
import { ATTESTATION_THRESHOLD_SUBJECTS } from './attestation-thresholds.js';
import { attestationGroupFields, buildAttestation, type AttestationDocument, type AttestationGroupDocument } from './build-attestation.js';
import { checkAttestation } from './check-attestation.js';

export const ATTESTATION_SCENARIO: ScenarioCapability = {
  name: 'attestation',
  schema: {
    groupProperties: ATTESTATION_GROUP_PROPERTIES,
    scenarioProperties: { attestation: ATTESTATION_SCHEMA },
  },
  check: checkAttestation,
  buildGroup: (g) => attestationGroupFields(g as AttestationGroupDocument),
  buildScenario(doc, scenario) {
    const attestation = buildAttestation(doc.attestation as AttestationDocument | undefined);
    if (attestation) scenario.attestation = attestation;
  },
  thresholdSubjects: ATTESTATION_THRESHOLD_SUBJECTS,
};
