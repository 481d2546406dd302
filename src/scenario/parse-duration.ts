// Durations in scenario files and thresholds: one or more <number><unit> parts, largest unit first,
// e.g. `500ms`, `90s`, `2m`, `1h30m`, `1.5s`. A bare number is refused: `60` could mean seconds or
// milliseconds, and guessing wrong silently makes a run 1000 times too long or short.

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
const UNIT_ORDER = ['h', 'm', 's', 'ms'];
const PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/y;

export const DURATION_HINT = 'a duration such as 500ms, 90s, 2m or 1h30m';

/** Milliseconds of a duration string, or an Error saying what is wrong with it. */
export function parseDuration(text: string): number {
  const s = text.trim();
  if (s === '') throw new Error(`empty duration; expected ${DURATION_HINT}`);
  if (/^\d+(\.\d+)?$/.test(s)) throw new Error(`"${s}" has no unit; expected ${DURATION_HINT}`);
  let ms = 0;
  let pos = 0;
  let lastUnit = -1;
  while (pos < s.length) {
    PART.lastIndex = pos;
    const m = PART.exec(s);
    if (!m) throw new Error(`"${s}" is not ${DURATION_HINT}`);
    const unit = UNIT_ORDER.indexOf(m[2]);
    if (unit <= lastUnit) throw new Error(`"${s}": units must go from largest to smallest, each once`);
    lastUnit = unit;
    ms += Number(m[1]) * UNIT_MS[m[2]];
    pos = PART.lastIndex;
  }
  return ms;
}

/** Milliseconds, or undefined when the text is not a duration (for callers that word their own error). */
/** ms of a duration string; undefined if absent, not a string or malformed (the schema reports those). */
export function durationOf(v: unknown): number | undefined {
  return typeof v === 'string' ? tryParseDuration(v) : undefined;
}

export function tryParseDuration(text: string): number | undefined {
  try {
    return parseDuration(text);
  } catch {
    return undefined;
  }
}

/** True when parseDuration accepts the text (for the schema's `duration` format). */
export function isDuration(text: string): boolean {
  return tryParseDuration(text) !== undefined;
}

/** Short human form of a millisecond count: 1500 → "1.5s", 5400000 → "1h30m", 250 → "250ms". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${round(ms)}ms`;
  if (ms < 60_000) return `${round(ms / 1000)}s`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = round((ms % 60_000) / 1000);
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}` || '0s';
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
