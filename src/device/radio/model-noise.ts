// Deterministic noise for the GNSS and cellular models (gnss-model.ts, cellular-model.ts): values
// that are pure functions of (seed, channel, time), so a model needs no random state, a replay with
// the same seed gives the same track and signal, and asking twice for the same instant agrees.

/** murmur3 fmix32 over the mixed words: a well-spread 32-bit hash. */
export function hash32(a: number, b: number, c: number, d: number): number {
  let h = 0x9e3779b9 ^ (a >>> 0);
  h = fmix(h ^ Math.imul(b >>> 0, 0x85ebca6b));
  h = fmix(h ^ Math.imul(c >>> 0, 0xc2b2ae35));
  h = fmix(h ^ Math.imul(d >>> 0, 0x27d4eb2f));
  return h >>> 0;
}

function fmix(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Uniform in [0, 1) for one integer step of a channel. */
export function unit(seed: number, channel: number, step: number): number {
  const hi = Math.floor(step / 4294967296);
  return hash32(seed, channel, step >>> 0, hi) / 4294967296;
}

/** Roughly normal (mean 0, sd ≈ 1): sum of three uniforms, rescaled. */
export function gauss(seed: number, channel: number, step: number): number {
  const s = unit(seed, channel, step * 3) + unit(seed, channel, step * 3 + 1) + unit(seed, channel, step * 3 + 2);
  return (s - 1.5) * 2;
}

/** Smooth noise in [-1, 1]: random knots every `periodMs`, cosine-interpolated between them. */
export function smooth(seed: number, channel: number, t: number, periodMs: number): number {
  const x = t / periodMs;
  const i = Math.floor(x);
  const f = x - i;
  const a = unit(seed, channel, i) * 2 - 1;
  const b = unit(seed, channel, i + 1) * 2 - 1;
  const w = (1 - Math.cos(f * Math.PI)) / 2;
  return a + (b - a) * w;
}

/** Outage windows: one per slot of `meanIntervalMs`, at a random offset, lasting about `meanDurationMs`. */
export interface OutagePlan {
  meanIntervalMs: number;
  meanDurationMs: number;
}

/** Length (ms) of slot `slot`'s outage. */
function outageDurationMs(seed: number, channel: number, slot: number, plan: OutagePlan): number {
  return Math.min(plan.meanIntervalMs * 0.9, plan.meanDurationMs * (0.5 + unit(seed, channel, slot * 2)));
}

/** Start (ms) of slot `slot`'s outage, which lasts `durMs`. */
function outageStartMs(seed: number, channel: number, slot: number, plan: OutagePlan, durMs: number): number {
  return slot * plan.meanIntervalMs + unit(seed, channel, slot * 2 + 1) * (plan.meanIntervalMs - durMs);
}

/**
 * Distance (ms) from t to the nearest outage (0 inside one), looking at this slot and its
 * neighbours; Infinity without outages. No arrays: the radio gauges ask this for every device every
 * few seconds.
 */
export function msToOutage(seed: number, channel: number, t: number, plan: OutagePlan | undefined): number {
  if (plan === undefined || !(plan.meanIntervalMs > 0) || !(plan.meanDurationMs > 0)) return Infinity;
  const mid = Math.floor(t / plan.meanIntervalMs);
  let best = Infinity;
  for (let slot = mid - 1; slot <= mid + 1; slot++) {
    const dur = outageDurationMs(seed, channel, slot, plan);
    const s = outageStartMs(seed, channel, slot, plan, dur);
    const e = s + dur;
    if (t >= s && t < e) return 0;
    best = Math.min(best, t < s ? s - t : t - e);
  }
  return best;
}

/** Luhn check digit for a string of decimal digits (IMEI, ICCID). */
export function luhnCheckDigit(digits: string): number {
  let sum = 0;
  // Double every second digit counting from the right of the payload (the check digit goes after it).
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (d < 0 || d > 9) throw new Error(`Luhn: ${JSON.stringify(digits)} is not all decimal digits`);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

/** Whether a full number (payload + check digit) passes the Luhn check. */
export function luhnValid(full: string): boolean {
  if (!/^[0-9]{2,}$/.test(full)) return false;
  return luhnCheckDigit(full.slice(0, -1)) === full.charCodeAt(full.length - 1) - 48;
}

/** n decimal digits from a seeded channel. */
export function digits(seed: number, channel: number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String(Math.floor(unit(seed, channel, i) * 10));
  return s;
}

/** Combines a scenario seed and a device index into one 32-bit model seed. */
export function modelSeed(seed: number, deviceIndex: number, salt: number): number {
  return hash32(seed >>> 0, Math.floor(seed / 4294967296), deviceIndex, salt);
}
