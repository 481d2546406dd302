// Attestation rules a schema cannot say: `tpm` and `tpmShare` exclude each other, tampered devices
// need TPM devices (and no more of them than there are), PCR template indices and values, and
// 'reference' templates need exact versions. Warns when a group's TPM devices match no template
// (every quote of theirs would fail), and when tampered devices have no template to fail against. Runs on the plain document, so every access is guarded.

import type { IssueCollector } from '../issue-collector.js';
import { DEFAULT_EVE_VERSION, DEFAULT_FIRMWARE_VERSION } from '../scenario-defaults.js';
import { TAMPERED_HINT } from './attestation-schema.js';
import { groupTpmPlan, parsePercent } from './tpm-plan.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const HEX64 = /^[0-9a-fA-F]{64}$/;
const PCR_INDEX = /^(?:[0-9]|1[0-9]|2[0-3])$/;

export function checkAttestation(doc: Obj, issues: IssueCollector): void {
  const tpmBuilds: { group: string; path: (string | number)[]; eve: string; fw: string }[] = [];
  const tamperedAt: (string | number)[][] = [];
  list(doc.groups).forEach((g, i) => {
    if (!isObj(g)) return;
    const path = ['groups', i];
    if (g.tpm !== undefined && g.tpmShare !== undefined) {
      issues.error([...path, 'tpmShare'], 'give either tpm or tpmShare, not both', { at: 'key' });
      return;
    }
    const share = g.tpm === true ? 1 : typeof g.tpmShare === 'number' ? g.tpmShare : 0;
    const count = typeof g.count === 'number' ? g.count : undefined;
    if (share > 0 && typeof g.name === 'string') {
      tpmBuilds.push({
        group: g.name,
        path,
        eve: typeof g.eveVersion === 'string' ? g.eveVersion : DEFAULT_EVE_VERSION,
        fw: typeof g.firmwareVersion === 'string' ? g.firmwareVersion : DEFAULT_FIRMWARE_VERSION,
      });
    }
    if (g.tampered === undefined) return;
    const tampered = tamperedOf(g.tampered);
    if (tampered === undefined) return; // the schema reported the type
    if ('share' in tampered && tampered.share > 1) {
      issues.error([...path, 'tampered'], `must be ${TAMPERED_HINT}; a share above 100% makes no sense`);
      return;
    }
    const some = 'count' in tampered ? tampered.count > 0 : tampered.share > 0;
    if (some) tamperedAt.push([...path, 'tampered']);
    if (some && share === 0) {
      issues.error([...path, 'tampered'], 'tampered boots need devices with a TPM: set tpm: true or tpmShare in this group');
      return;
    }
    if ('count' in tampered && count !== undefined) {
      const { tpmDevices } = groupTpmPlan({ count, tpmShare: share });
      if (tampered.count > tpmDevices) {
        issues.error([...path, 'tampered'], `${tampered.count} tampered devices, but the group has only ${tpmDevices} with a TPM`);
      }
    }
  });

  const att = doc.attestation;
  const hasTemplates = isObj(att) && list(att.templates).length > 0;
  if (!hasTemplates) {
    for (const p of tamperedAt) {
      issues.warn(p, 'without attestation.templates nothing tells a tampered boot from a clean one: its log replays to its PCRs, so its quotes verify (SUCCESS)');
    }
  }
  if (!isObj(att)) return;
  const templates: { eve: string; fw: string }[] = [];
  list(att.templates).forEach((t, j) => {
    if (!isObj(t)) return;
    const path = ['attestation', 'templates', j];
    const eve = typeof t.eveVersion === 'string' ? t.eveVersion : undefined;
    const fw = typeof t.firmwareVersion === 'string' ? t.firmwareVersion : undefined;
    if (eve !== undefined && fw !== undefined) templates.push({ eve, fw });
    if (t.pcrs === 'reference') {
      if (eve === '*' || fw === '*') {
        issues.error([...path, 'pcrs'], '"reference" needs an exact eveVersion and firmwareVersion (no "*"): it is the boot of that one build');
      }
      return;
    }
    if (!isObj(t.pcrs)) return;
    const entries = Object.entries(t.pcrs);
    if (entries.length === 0) issues.error([...path, 'pcrs'], 'lists no PCR; give at least one index: value, or "reference"');
    for (const [k, v] of entries) {
      if (!PCR_INDEX.test(k)) issues.error([...path, 'pcrs', k], `"${k}" is not a PCR index; expected 0 to 23`, { at: 'key' });
      else if (typeof v === 'string' && !HEX64.test(v)) {
        issues.error([...path, 'pcrs', k], `PCR ${k}: must be 64 hex digits (a SHA-256 value), got ${v.length} characters`);
      }
    }
  });
  if (templates.length === 0) return;
  for (const b of tpmBuilds) {
    const match = templates.some((t) => (t.eve === '*' || t.eve === b.eve) && (t.fw === '*' || t.fw === b.fw));
    if (!match) {
      issues.warn(b.path, `group "${b.group}": no PCR template matches its build (EVE ${b.eve}, firmware ${b.fw}), so every TPM quote of its devices fails (QUOTE_FAILED)`);
    }
  }
}

/** The file's `tampered` in normal form, or undefined when it has the wrong type. */
export function tamperedOf(v: unknown): { count: number } | { share: number } | undefined {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return { count: v };
  if (typeof v === 'string') {
    const share = parsePercent(v);
    if (share !== undefined) return { share };
  }
  return undefined;
}
