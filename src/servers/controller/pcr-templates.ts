// PCR templates the controller holds TPM quotes to (the fleet's `attestation.templates`, as Adam's
// enforceTemplateAttestation): each names an EVE and a firmware version ("*" = any) and expected
// SHA-256 PCR values. 'reference' stands for PCR 0–15 of an untampered boot of exactly that build,
// as evesim's software TPM measures it (src/tpm/measured-boot.ts): the "golden values" an operator
// would register for a release.
//
// Rule (applied only when at least one template is set): a quote carrying PCR values is accepted
// when some template matching its reported versions has every one of its PCRs equal to the
// reported value; no matching template, or only mismatching ones → QUOTE_FAILED.

import { measuredBoot } from '../../tpm/measured-boot.js';
import type { AttestationSpec, PcrTemplateSpec } from '../../scenario/scenario-types.js';
import { AdminInputError } from './config-overlay.js';

export interface PcrTemplate {
  eveVersion: string;
  firmwareVersion: string;
  /** Expected values by PCR index, ascending. */
  pcrs: { index: number; value: Buffer }[];
}

const REFERENCE_PCRS = 16;
const HEX64 = /^[0-9a-fA-F]{64}$/;

/** Checks the admin JSON for `attestation` (errors name the field, e.g. attestation.templates[1].pcrs.9). */
export function parseAttestationSpec(raw: unknown, f = 'attestation'): AttestationSpec {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new AdminInputError(f, 'must be a JSON object');
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== 'templates') throw new AdminInputError(`${f}.${k}`, 'unknown field');
  const list = o.templates ?? [];
  if (!Array.isArray(list)) throw new AdminInputError(`${f}.templates`, 'must be a JSON array');
  return {
    templates: list.map((t, i): PcrTemplateSpec => {
      const tf = `${f}.templates[${i}]`;
      if (typeof t !== 'object' || t === null || Array.isArray(t)) throw new AdminInputError(tf, 'must be a JSON object');
      const to = t as Record<string, unknown>;
      for (const k of Object.keys(to)) {
        if (k !== 'eveVersion' && k !== 'firmwareVersion' && k !== 'pcrs') throw new AdminInputError(`${tf}.${k}`, 'unknown field');
      }
      for (const k of ['eveVersion', 'firmwareVersion'] as const) {
        if (typeof to[k] !== 'string' || to[k] === '' || (to[k] as string).length > 256) {
          throw new AdminInputError(`${tf}.${k}`, 'must be a non-empty string of at most 256 characters ("*" for any)');
        }
      }
      const eveVersion = to.eveVersion as string;
      const firmwareVersion = to.firmwareVersion as string;
      if (to.pcrs === 'reference') {
        if (eveVersion === '*' || firmwareVersion === '*') throw new AdminInputError(`${tf}.pcrs`, '"reference" needs exact versions, not "*"');
        return { eveVersion, firmwareVersion, pcrs: 'reference' };
      }
      if (typeof to.pcrs !== 'object' || to.pcrs === null || Array.isArray(to.pcrs)) {
        throw new AdminInputError(`${tf}.pcrs`, 'must be "reference" or an object of PCR index to 64 hex digits');
      }
      const pcrs: Record<string, string> = {};
      for (const [k, v] of Object.entries(to.pcrs)) {
        const n = Number(k);
        if (!/^\d+$/.test(k) || n > 23) throw new AdminInputError(`${tf}.pcrs.${k}`, 'is not a PCR index 0..23');
        if (typeof v !== 'string' || !HEX64.test(v)) throw new AdminInputError(`${tf}.pcrs.${k}`, 'must be 64 hex digits');
        pcrs[String(n)] = v.toLowerCase();
      }
      if (Object.keys(pcrs).length === 0) throw new AdminInputError(`${tf}.pcrs`, 'lists no PCR');
      return { eveVersion, firmwareVersion, pcrs };
    }),
  };
}

/** Templates with 'reference' replaced by the PCRs of the build's measured boot. */
export function resolvePcrTemplates(spec: AttestationSpec | undefined): PcrTemplate[] {
  return (spec?.templates ?? []).map((t) => {
    if (t.pcrs === 'reference') {
      const bank = measuredBoot({ eveVersion: t.eveVersion, firmwareVersion: t.firmwareVersion }).pcrs;
      const pcrs = Array.from({ length: REFERENCE_PCRS }, (_, index) => ({ index, value: Buffer.from(bank.subarray(index * 32, index * 32 + 32)) }));
      return { eveVersion: t.eveVersion, firmwareVersion: t.firmwareVersion, pcrs };
    }
    const pcrs = Object.entries(t.pcrs)
      .map(([k, v]) => ({ index: Number(k), value: Buffer.from(v, 'hex') }))
      .sort((a, b) => a.index - b.index);
    return { eveVersion: t.eveVersion, firmwareVersion: t.firmwareVersion, pcrs };
  });
}

export type TemplateVerdict = { ok: true } | { ok: false; key: 'no-template' | 'template-mismatch'; reason: string };

/** Applies the rule above; `pcrValues` are the reported SHA-256 values by index. */
export function checkPcrTemplates(
  templates: readonly PcrTemplate[],
  versions: { eve: string; firmware: string },
  pcrValues: ReadonlyMap<number, Uint8Array>,
): TemplateVerdict {
  if (templates.length === 0) return { ok: true };
  const matching = templates.filter(
    (t) => (t.eveVersion === '*' || t.eveVersion === versions.eve) && (t.firmwareVersion === '*' || t.firmwareVersion === versions.firmware),
  );
  if (matching.length === 0) {
    return { ok: false, key: 'no-template', reason: `no PCR template for EVE "${versions.eve}" with firmware "${versions.firmware}"` };
  }
  let firstMismatch = '';
  for (const t of matching) {
    const bad = t.pcrs.find((p) => {
      const v = pcrValues.get(p.index);
      return !v || !p.value.equals(v);
    });
    if (!bad) return { ok: true };
    if (!firstMismatch) {
      const v = pcrValues.get(bad.index);
      firstMismatch = `PCR ${bad.index} is ${v ? Buffer.from(v).toString('hex') : 'not reported'}, template for EVE "${t.eveVersion}" firmware "${t.firmwareVersion}" expects ${bad.value.toString('hex')}`;
    }
  }
  return { ok: false, key: 'template-mismatch', reason: firstMismatch };
}
