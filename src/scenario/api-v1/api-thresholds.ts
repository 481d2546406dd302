// Thresholds on one controller API of a mixed fleet: the subject carries a k6-style tag,
//   config{api:v1}.p99 < 1s    all{api:v2}.p99 < 500ms    errors{api:v1}.count == 0
//   onboarded{api:v1}.ratio == 1    devices{api:v2}.total == 40
// judged against the summary's byApi section (src/runner/api-v1/api-thresholds.ts). Untagged thresholds
// keep meaning every API together.

import { ENDPOINT_KEYS } from '../../protocol/endpoints.js';

const TAG = /^(\s*[A-Za-z_][\w.-]*?)\{\s*api\s*:\s*([^}]*?)\s*\}(\..*)$/s;

/** Subjects that can be restricted to one API (their figures exist per API). */
export const API_TAGGABLE: ReadonlySet<string> = new Set([...ENDPOINT_KEYS, 'all', 'errors', 'onboarded', 'devices']);

/** The expression without its `{api:…}` tag, and the API it names. Throws on a malformed tag. */
export function splitApiTag(source: string): { text: string; api?: 'v1' | 'v2' } {
  if (!source.includes('{')) return { text: source };
  const m = TAG.exec(source);
  if (!m) throw new Error(`"${source}": a tag is written right after the subject as {api:v1} or {api:v2}, e.g. "config{api:v1}.p99 < 1s"`);
  const api = m[2];
  if (api !== 'v1' && api !== 'v2') throw new Error(`"${source}": api must be v1 or v2 (got "${api}")`);
  return { text: m[1]! + m[3]!, api };
}

/** Throws when `subject` has no per-API figures. */
export function checkApiTaggable(subject: string, source: string): void {
  if (!API_TAGGABLE.has(subject)) {
    throw new Error(`"${source}": ${subject} has no figures per API; {api:…} works on an endpoint, all, errors, onboarded and devices`);
  }
}
