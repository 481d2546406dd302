// --start-at: the common start instant of a run, so the shards of one fleet, started as separate
// processes at different moments, run on one clock. An absolute ISO-8601 time with a date and a
// time of day (2026-11-24T22:00:00Z; a time without a zone is read as local time, as Date does),
// or "+" and a duration relative to the start of this process (+30s, +2m).

import { tryParseDuration } from '../scenario/parse-duration.js';

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Epoch ms of `text`; `processStartMs` anchors a relative time. Throws a one-line reason naming the flag. */
export function parseStartAt(text: string, processStartMs: number): number {
  const t = text.trim();
  if (t.startsWith('+')) {
    const ms = tryParseDuration(t.slice(1));
    if (ms === undefined) throw new Error(`--start-at: "${text}" is not "+" and a duration (examples: +30s, +2m)`);
    return processStartMs + ms;
  }
  const ms = ISO_DATE_TIME.test(t) ? Date.parse(t) : NaN;
  if (!Number.isFinite(ms)) {
    throw new Error(`--start-at: "${text}" is not an ISO-8601 time such as 2026-11-24T22:00:00Z, nor a relative time such as +30s`);
  }
  return ms;
}
