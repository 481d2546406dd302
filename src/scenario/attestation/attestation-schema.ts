// Schema parts for attestation: the per-group TPM knobs and the scenario's `attestation` section
// (PCR templates the embedded controller holds quotes to). Cross-field rules (tampered needs a TPM,
// PCR indices and hex values, 'reference' needs exact versions) are in check-attestation.ts.

type Schema = Record<string, unknown>;

export const TAMPERED_HINT = 'a number of devices (e.g. 2) or a share of the group\'s TPM devices (e.g. 20%)';

export const ATTESTATION_GROUP_PROPERTIES: Record<string, Schema> = {
  firmwareVersion: {
    type: 'string',
    minLength: 1,
    maxLength: 256,
    expect: 'a BIOS vendor-version-date string such as "EDK II-1.16-02/02/2024"',
  },
  tpm: { type: 'boolean', expect: 'true (every device has a TPM) or false' },
  tpmShare: { type: 'number', minimum: 0, maximum: 1, expect: 'a share of the group from 0 to 1, e.g. 0.8' },
  tampered: {
    type: ['integer', 'string'],
    minimum: 0,
    pattern: '^\\s*\\d+(\\.\\d+)?\\s*%\\s*$',
    expect: TAMPERED_HINT,
  },
};

const version: Schema = { type: 'string', minLength: 1, expect: 'a version string, or "*" for any' };

const template: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['eveVersion', 'firmwareVersion', 'pcrs'],
  properties: {
    eveVersion: version,
    firmwareVersion: version,
    pcrs: {
      type: ['object', 'string'],
      expect: '"reference" or a map of PCR index (0–23) to 64 hex digits',
      if: { type: 'string' },
      then: { const: 'reference', expect: '"reference" or a map of PCR index (0–23) to 64 hex digits' },
      else: { type: 'object', additionalProperties: { type: 'string', expect: '64 hex digits (a SHA-256 PCR value)' } },
    },
  },
};

export const ATTESTATION_SCHEMA: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    templates: { type: 'array', items: template, expect: 'a list of PCR templates' },
  },
};
