// The abort fields of a `{ threshold: …, abortOnFail: true, delayAbortEval: 30s }` entry, checked
// with their own path (file, line, field): a delay that is not a duration, a delay without
// abortOnFail (it would do nothing), abortOnFail on a figure known only at the end of the run.

import type { IssueCollector } from './issue-collector.js';
import { DURATION_HINT, tryParseDuration } from './parse-duration.js';

export function checkAbortEntry(entry: Record<string, unknown>, index: number, issues: IssueCollector, checkAbortable: () => void): void {
  const delay = entry.delayAbortEval;
  if (delay !== undefined) {
    if (typeof delay === 'string' && tryParseDuration(delay) === undefined) {
      issues.error(['thresholds', index, 'delayAbortEval'], `"${delay}" is not ${DURATION_HINT}`);
    }
    if (entry.abortOnFail !== true) {
      issues.error(['thresholds', index, 'delayAbortEval'], 'delays the abort judgement of abortOnFail: set abortOnFail: true as well, or remove it');
    }
  }
  if (entry.abortOnFail === true) {
    try {
      checkAbortable();
    } catch (e) {
      issues.error(['thresholds', index, 'abortOnFail'], (e as Error).message);
    }
  }
}
