// Faults in the scenario layer: one timeline action per fault kind (partition, latency, ...), its
// schema, and the checks the schema cannot make, worded by the same parser the --fault flag uses
// (src/faults/fault-spec.ts).

import { DURATION_HINT } from '../parse-duration.js';
import type { DocumentPart, ScenarioCapability, SchemaFragment } from '../scenario-capability.js';
import { FAULT_THRESHOLD_SUBJECTS } from './fault-thresholds.js';
import { FAULT_KINDS, KIND_FIELDS, isFaultKind, parseFault, type FaultKind } from '../../faults/fault-spec.js';

const duration: SchemaFragment = { type: 'string', format: 'duration', expect: DURATION_HINT };
const shareField: SchemaFragment = { type: ['string', 'number'], expect: 'a share such as 30% or 0.3' };

const FIELD_SCHEMAS: Record<string, SchemaFragment> = {
  group: { type: 'string', expect: 'the name of a group' },
  share: shareField,
  devices: { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0 }, expect: 'a list of device indices such as [0, 5, 17]' },
  for: duration,
  until: duration,
  delay: duration,
  jitter: duration,
  loss: shareField,
  offset: { type: 'string', expect: 'a signed duration such as +2h or -10m' },
};

function actionSchema(kind: FaultKind): SchemaFragment {
  const common = ['group', 'share', 'devices', ...(kind === 'tpm-reset' ? [] : ['for', 'until'])];
  const props = Object.fromEntries([...common, ...KIND_FIELDS[kind]].map((f) => [f, FIELD_SCHEMAS[f]!]));
  return {
    type: 'object',
    additionalProperties: false,
    required: ['at', 'action'],
    properties: { at: duration, action: { const: kind }, ...props },
  };
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function isObj(v: unknown): v is DocumentPart {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export const FAULT_SCENARIO: ScenarioCapability = {
  name: 'faults',
  schema: {
    timelineActionNames: FAULT_KINDS,
    timelineActionSchemas: FAULT_KINDS.map(actionSchema),
  },
  check(doc, issues) {
    const fleet = list(doc.groups).reduce<number>((n, g) => n + (isObj(g) && typeof g.count === 'number' ? g.count : 0), 0);
    list(doc.timeline).forEach((t, i) => {
      if (!isObj(t) || !isFaultKind(t.action)) return;
      const parsed = parseFault(t.action, t);
      if (!parsed.ok) {
        for (const p of parsed.problems) issues.error(['timeline', i, ...(p.field in t ? [p.field] : [])], p.field in t ? p.message : `${p.field} ${p.message}`);
        return;
      }
      const outside = (parsed.fault.devices ?? []).filter((d) => d >= fleet);
      if (outside.length > 0) issues.error(['timeline', i, 'devices'], `device ${outside.join(', ')} is not in the fleet of ${fleet} devices (indices 0 to ${fleet - 1})`);
    });
  },
  buildTimelineAction(atMs, t) {
    if (!isFaultKind(t.action)) return undefined;
    const parsed = parseFault(t.action, t);
    if (!parsed.ok) throw new Error(`fault at ${atMs} ms: ${parsed.problems.map((p) => `${p.field} ${p.message}`).join('; ')}`);
    return parsed.fault;
  },
  thresholdSubjects: FAULT_THRESHOLD_SUBJECTS,
};
