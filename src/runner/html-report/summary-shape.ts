// What a summary JSON must hold for the HTML report to be rendered from it (`evesim report FILE`):
// the whole-run fields every evesim summary has, with their JSON types, and a series in the
// run-series.ts shape when there is one. Names the first field that is wrong; pure.

/** Why `data` cannot be rendered as a report (e.g. 'field "thresholds" is not an array'), or undefined. */
export function reportableSummaryProblem(data: unknown): string | undefined {
  if (!isObject(data)) return 'not a JSON object';
  const want: [string, 'string' | 'number' | 'object' | 'array'][] = [
    ['scenario', 'string'],
    ['scenarioFile', 'string'],
    ['seed', 'number'],
    ['target', 'string'],
    ['startedAt', 'string'],
    ['durationMs', 'number'],
    ['machine', 'object'],
    ['devices', 'object'],
    ['endpoints', 'object'],
    ['overall', 'object'],
    ['undelivered', 'object'],
    ['findings', 'object'],
    ['thresholds', 'array'],
    ['generator', 'object'],
    ['exitCode', 'number'],
  ];
  for (const [field, type] of want) {
    const problem = typeProblem(data[field], type);
    if (problem) return `field "${field}" ${problem}`;
  }
  const devices = data.devices as Record<string, unknown>;
  if (!isObject(devices.byLifecycle)) return 'field "devices.byLifecycle" is missing or not an object';
  if (!isObject((data.findings as Record<string, unknown>).byKind)) return 'field "findings.byKind" is missing or not an object';
  if (!Array.isArray((data.generator as Record<string, unknown>).workers)) return 'field "generator.workers" is missing or not an array';
  for (const [i, t] of (data.thresholds as unknown[]).entries()) {
    if (!isObject(t) || typeof t.source !== 'string' || typeof t.status !== 'string' || typeof t.detail !== 'string') {
      return `field "thresholds[${i}]" is not a threshold result (source, status, detail)`;
    }
  }
  if (data.series !== undefined) {
    const s = data.series;
    if (!isObject(s)) return 'field "series" is not an object';
    if (typeof s.intervalMs !== 'number') return 'field "series.intervalMs" is not a number';
    if (!Array.isArray(s.events)) return 'field "series.events" is not an array';
    if (!Array.isArray(s.intervals)) return 'field "series.intervals" is not an array';
    for (const [i, iv] of s.intervals.entries()) {
      if (!isObject(iv) || typeof iv.tMs !== 'number' || typeof iv.durationMs !== 'number' || !isObject(iv.endpoints) || !Array.isArray(iv.workers)) {
        return `field "series.intervals[${i}]" is not an interval (tMs, durationMs, endpoints, workers)`;
      }
    }
  }
  return undefined;
}

function typeProblem(v: unknown, type: 'string' | 'number' | 'object' | 'array'): string | undefined {
  if (v === undefined) return 'is missing';
  if (type === 'array') return Array.isArray(v) ? undefined : 'is not an array';
  if (type === 'object') return isObject(v) ? undefined : 'is not an object';
  return typeof v === type ? undefined : `is not a ${type}`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
