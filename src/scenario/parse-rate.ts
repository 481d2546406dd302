// Rates in scenario files: `50/s`, `3000/m`, `10000/h`, or a bare number meaning per second
// (a rate's field name always says "per second" when it is written as a plain number).

const PER_UNIT_S: Record<string, number> = { s: 1, m: 60, min: 60, h: 3600 };
const RATE = /^(\d+(?:\.\d+)?)\s*\/\s*(s|m|min|h)$/;

export const RATE_HINT = 'a rate such as 50/s, 3000/m or a number per second';

/** Events per second of a rate string or number, or an Error saying what is wrong with it. */
export function parseRate(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0) throw new Error(`rate must be > 0 (got ${value})`);
    return value;
  }
  const m = RATE.exec(value.trim());
  if (!m) throw new Error(`"${value}" is not ${RATE_HINT}`);
  const perSec = Number(m[1]) / PER_UNIT_S[m[2]];
  if (perSec <= 0) throw new Error(`rate must be > 0 (got "${value}")`);
  return perSec;
}

export function isRate(value: string): boolean {
  try {
    parseRate(value);
    return true;
  } catch {
    return false;
  }
}
