// Runs ajv over the plain document and words each error for a person: which field, what it must
// be, what it was. Positions come from the IssueCollector's YAML locator.

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { isDuration } from './parse-duration.js';
import { isRate } from './parse-rate.js';
import { SCENARIO_SCHEMA, TIMELINE_ACTIONS } from './scenario-schema.js';
import { showValue, type PathSegment } from './scenario-error.js';
import type { IssueCollector } from './issue-collector.js';
import { didYouMean } from './suggest.js';

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (!compiled) {
    const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, discriminator: true, verbose: true });
    ajv.addKeyword({ keyword: 'expect', schemaType: 'string' });
    ajv.addFormat('duration', { type: 'string', validate: isDuration });
    ajv.addFormat('rate', { type: 'string', validate: isRate });
    compiled = ajv.compile(SCENARIO_SCHEMA);
  }
  return compiled;
}

/** Adds one issue per schema violation; returns true when the document matches the schema. */
export function validateSchema(doc: unknown, issues: IssueCollector): boolean {
  const validate = validator();
  if (validate(doc)) return true;
  for (const e of validate.errors ?? []) reportAjvError(e, issues);
  return false;
}

function reportAjvError(e: ErrorObject, issues: IssueCollector): void {
  const path = pointerToPath(e.instancePath);
  const parent = (e.parentSchema ?? {}) as { expect?: string; properties?: Record<string, unknown> };
  const got = ` (got ${showValue(e.data)})`;
  switch (e.keyword) {
    case 'additionalProperties': {
      const field = String(e.params.additionalProperty);
      const known = Object.keys(parent.properties ?? {});
      issues.error([...path, field], `unknown field "${field}"${didYouMean(field, known)}; expected one of ${known.join(', ')}`, {
        at: 'key',
      });
      return;
    }
    case 'required': {
      const field = String(e.params.missingProperty);
      issues.error(path, `missing required field "${field}"`, { dedupe: false });
      return;
    }
    case 'discriminator': {
      const tag = (e.params as { tagValue?: unknown }).tagValue;
      const message =
        typeof tag === 'string'
          ? `unknown action "${tag}"${didYouMean(tag, TIMELINE_ACTIONS)}; expected one of ${TIMELINE_ACTIONS.join(', ')}`
          : `must be one of ${TIMELINE_ACTIONS.join(', ')}${got}`;
      issues.error(typeof tag === 'string' ? [...path, 'action'] : path, message);
      return;
    }
    case 'if':
    case 'oneOf':
      // Summaries of the errors already reported for the branch that applied.
      return;
    case 'enum': {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues.map((v) => String(v));
      const hint = typeof e.data === 'string' ? didYouMean(e.data, allowed) : '';
      issues.error(path, `must be one of ${allowed.join(', ')}${got}${hint}`);
      return;
    }
    default: {
      const what = parent.expect ? `must be ${parent.expect}` : (e.message ?? 'is not valid');
      issues.error(path, `${what}${got}`);
    }
  }
}

function pointerToPath(pointer: string): PathSegment[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}
