// Normal form of the attestation knobs (called by build-scenario.ts on a checked document):
// per group the firmware version, the TPM share and the tampered devices; for the scenario the
// PCR templates (hex values lower-cased, indices as decimal strings).

import { tamperedOf } from './check-attestation.js';
import { DEFAULT_FIRMWARE_VERSION } from '../scenario-defaults.js';
import type { AttestationSpec, GroupSpec, PcrTemplateSpec } from '../scenario-types.js';

export interface AttestationGroupDocument {
  firmwareVersion?: string;
  tpm?: boolean;
  tpmShare?: number;
  tampered?: number | string;
}

export interface AttestationDocument {
  templates?: { eveVersion: string; firmwareVersion: string; pcrs: Record<string, string> | 'reference' }[];
}

export function attestationGroupFields(g: AttestationGroupDocument): Pick<GroupSpec, 'firmwareVersion' | 'tpmShare' | 'tampered'> {
  const out: Pick<GroupSpec, 'firmwareVersion' | 'tpmShare' | 'tampered'> = { firmwareVersion: g.firmwareVersion ?? DEFAULT_FIRMWARE_VERSION };
  const share = g.tpm === true ? 1 : g.tpmShare;
  if (share !== undefined && share > 0) out.tpmShare = share;
  const tampered = g.tampered === undefined ? undefined : tamperedOf(g.tampered);
  if (tampered && ('count' in tampered ? tampered.count > 0 : tampered.share > 0)) out.tampered = tampered;
  return out;
}

export function buildAttestation(a: AttestationDocument | undefined): AttestationSpec | undefined {
  if (!a || !a.templates || a.templates.length === 0) return undefined;
  return {
    templates: a.templates.map(
      (t): PcrTemplateSpec => ({
        eveVersion: t.eveVersion,
        firmwareVersion: t.firmwareVersion,
        pcrs: t.pcrs === 'reference' ? 'reference' : Object.fromEntries(Object.entries(t.pcrs).map(([k, v]) => [String(Number(k)), v.toLowerCase()])),
      }),
    ),
  };
}
