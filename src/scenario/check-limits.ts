// Applies the sanity limits (scenario-limits.ts) to the plain document: every duration of the
// schema (found by walking the schema beside the document, so a capability's durations are
// covered too) against Node's timer limit, the numbers of NUMBER_LIMITS, the fleet's total, the
// arrival rate and the flow log interval. Runs on the plain document even when the schema found
// errors, so every access is guarded.

import type { IssueCollector } from './issue-collector.js';
import { durationOf, formatDuration } from './parse-duration.js';
import { parseRate } from './parse-rate.js';
import { parseSpeed } from './lps/build-lps.js';
import type { PathSegment } from './scenario-error.js';
import {
  MAX_ARRIVAL_PER_SEC,
  MAX_FLEET_DEVICES,
  MAX_ROUTE_SPEED_MPS,
  MAX_TIMER_MS,
  MIN_FLOWLOG_INTERVAL_MS,
  NUMBER_LIMITS,
  valuesAt,
} from './scenario-limits.js';

type Schema = Record<string, unknown>;
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const TIMER_LIMIT = `${formatDuration(MAX_TIMER_MS)}, the longest timer Node.js can set (about 24.8 days)`;

export function checkLimits(doc: unknown, schema: Schema, issues: IssueCollector): void {
  if (!isObj(doc)) return;
  for (const { path, value } of durationsIn(schema, doc, [])) {
    const ms = durationOf(value);
    if (ms !== undefined && ms > MAX_TIMER_MS) issues.error(path, `must be at most ${TIMER_LIMIT} (got "${String(value)}")`);
  }
  for (const limit of NUMBER_LIMITS) {
    for (const { path, value } of valuesAt(doc, limit.path)) {
      if (typeof value !== 'number' || !Number.isFinite(value)) continue; // the schema words wrong types
      if (value < limit.min || value > limit.max) {
        issues.error(path, `must be from ${limit.min} to ${limit.max.toLocaleString('en-US')} ${limit.unit} (got ${value})`);
      }
    }
  }
  for (const { path, value } of valuesAt(doc, ['groups', '*', 'gnss', 'route', 'speed'])) {
    if (typeof value !== 'number' && typeof value !== 'string') continue;
    let mps: number;
    try {
      mps = parseSpeed(value);
    } catch {
      continue; // check-lps words a speed that does not parse
    }
    if (mps > MAX_ROUTE_SPEED_MPS) issues.error(path, `must be from 0 to 1000km/h (${MAX_ROUTE_SPEED_MPS.toFixed(1)}m/s) (got ${JSON.stringify(value)})`);
  }
  checkFleetTotal(doc, issues);
  checkArrivalRate(doc, issues);
  for (const { path, value } of valuesAt(doc, ['groups', '*', 'flowlog', 'interval'])) {
    const ms = durationOf(value);
    // 0 is already "must be longer than 0s".
    if (ms !== undefined && ms > 0 && ms < MIN_FLOWLOG_INTERVAL_MS) {
      issues.error(path, `must be from ${formatDuration(MIN_FLOWLOG_INTERVAL_MS)} to ${formatDuration(MAX_TIMER_MS)} (got "${String(value)}"; EVE itself collects about every 120s)`);
    }
  }
}

function checkFleetTotal(doc: Obj, issues: IssueCollector): void {
  const counts = valuesAt(doc, ['groups', '*', 'count']).map((c) => c.value);
  if (!counts.every((c) => typeof c === 'number' && Number.isInteger(c) && c >= 1 && c <= MAX_FLEET_DEVICES)) return; // each reported on its own
  const total = (counts as number[]).reduce((a, b) => a + b, 0);
  if (total > MAX_FLEET_DEVICES) {
    issues.error(['groups'], `${total.toLocaleString('en-US')} devices in all; a fleet has at most ${MAX_FLEET_DEVICES.toLocaleString('en-US')}`, { at: 'key' });
  }
}

function checkArrivalRate(doc: Obj, issues: IssueCollector): void {
  const a = doc.arrival;
  if (!isObj(a) || (typeof a.rate !== 'string' && typeof a.rate !== 'number')) return;
  let perSec: number;
  try {
    perSec = parseRate(a.rate);
  } catch {
    return; // the schema reported it
  }
  const slowest = 1000 / MAX_TIMER_MS;
  if (perSec > MAX_ARRIVAL_PER_SEC || perSec < slowest) {
    issues.error(
      ['arrival', 'rate'],
      `must be from 1 per ${formatDuration(MAX_TIMER_MS)} to ${MAX_ARRIVAL_PER_SEC.toLocaleString('en-US')}/s (got ${JSON.stringify(a.rate)}` +
        `${perSec > MAX_ARRIVAL_PER_SEC ? '; for every device at once use model: all-at-once' : ''})`,
    );
  }
}

/** Every value of the document that the schema types as a duration, with its path. */
function durationsIn(schema: unknown, value: unknown, path: PathSegment[]): { path: PathSegment[]; value: unknown }[] {
  if (!isObj(schema)) return [];
  const out: { path: PathSegment[]; value: unknown }[] = [];
  if (schema.format === 'duration' && typeof value === 'string') out.push({ path, value });
  // Branches (if/then/else, oneOf): a branch that does not fit the value finds nothing in it, and
  // two branches naming the same field report it once (the collector keeps one error per field).
  for (const key of ['then', 'else'] as const) out.push(...durationsIn(schema[key], value, path));
  if (Array.isArray(schema.oneOf)) for (const b of schema.oneOf) out.push(...durationsIn(b, value, path));
  if (isObj(value)) {
    const props = isObj(schema.properties) ? schema.properties : {};
    for (const [k, v] of Object.entries(value)) {
      if (k in props) out.push(...durationsIn(props[k], v, [...path, k]));
      else if (isObj(schema.additionalProperties)) out.push(...durationsIn(schema.additionalProperties, v, [...path, k]));
    }
  }
  if (Array.isArray(value) && isObj(schema.items)) value.forEach((v, i) => out.push(...durationsIn(schema.items, v, [...path, i])));
  return out;
}
