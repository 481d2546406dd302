// Rules a JSON schema cannot say: names that must be unique or must exist, durations that must fit
// inside the run, threshold syntax, EVE config item ranges, target files; then each capability's
// own rules (capabilities.ts). Runs on the plain document even when the schema found errors, so one
// pass reports everything; hence every access is guarded.

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkConfigItem } from './config-items.js';
import { durationOf, formatDuration } from './parse-duration.js';
import { parseRate } from './parse-rate.js';
import { checkAbortable, parseThreshold } from './parse-threshold.js';
import { checkAbortEntry } from './threshold-abort-check.js';
import type { IssueCollector } from './issue-collector.js';
import { didYouMean } from './suggest.js';
import { SCENARIO_CAPABILITIES } from './capabilities.js';
import { httpUrlProblem } from './http-url.js';

export interface CheckOptions {
  /** Directory that relative certificate paths in `target` are resolved against. */
  baseDir: string;
  /** Check that target files exist (off when the command line replaces the target). */
  checkTargetFiles: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export function checkScenario(doc: unknown, issues: IssueCollector, opts: CheckOptions): void {
  if (!isObj(doc)) return;
  const durationMs = durationOf(doc.duration);
  if (durationMs === 0) issues.error(['duration'], 'must be longer than 0s');

  const appsByGroup = checkGroups(doc.groups, issues);
  checkArrival(doc, durationMs, issues);
  checkTimeline(doc.timeline, durationMs, appsByGroup, issues);
  checkThresholds(doc.thresholds, doc.groups, issues);
  checkTarget(doc.target, issues, opts);
  for (const c of SCENARIO_CAPABILITIES) c.check?.(doc, issues);
}

/** Group name → its app names, for timeline references. */
function checkGroups(groups: unknown, issues: IssueCollector): Map<string, Set<string>> {
  const byName = new Map<string, Set<string>>();
  list(groups).forEach((g, i) => {
    if (!isObj(g)) return;
    const apps = new Set<string>();
    if (typeof g.name === 'string') {
      if (byName.has(g.name)) issues.error(['groups', i, 'name'], `group name "${g.name}" is used twice`);
      else byName.set(g.name, apps);
    }
    list(g.apps).forEach((a, j) => {
      if (!isObj(a) || typeof a.name !== 'string') return;
      if (apps.has(a.name)) issues.error(['groups', i, 'apps', j, 'name'], `app name "${a.name}" is used twice in this group`);
      apps.add(a.name);
    });
    if (isObj(g.flowlog) && durationOf(g.flowlog.interval) === 0) {
      issues.error(['groups', i, 'flowlog', 'interval'], 'must be longer than 0s');
    }
    if (isObj(g.configItems)) {
      for (const [key, raw] of Object.entries(g.configItems)) {
        if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') continue;
        const r = checkConfigItem(key, raw);
        const path = ['groups', i, 'configItems', key];
        if (!r.ok) issues.error(path, r.message);
        else if (r.warning) issues.warn(path, r.warning, { at: 'key' });
      }
    }
  });
  return byName;
}

function checkArrival(doc: Obj, durationMs: number | undefined, issues: IssueCollector): void {
  const a = doc.arrival;
  if (!isObj(a) || typeof a.model !== 'string') return;
  const hasRate = a.rate !== undefined;
  const hasOver = a.over !== undefined;
  if (a.model === 'all-at-once') {
    if (hasRate) issues.error(['arrival', 'rate'], 'has no meaning with model all-at-once (every device is due at 0s)', { at: 'key' });
    if (hasOver) issues.error(['arrival', 'over'], 'has no meaning with model all-at-once (every device is due at 0s)', { at: 'key' });
    return;
  }
  if (hasRate && hasOver) {
    issues.error(['arrival', 'over'], 'give either rate or over, not both', { at: 'key' });
  } else if (!hasRate && !hasOver) {
    issues.error(['arrival'], `model ${a.model} needs rate (e.g. 50/s) or over (e.g. 10s)`);
  }
  const overMs = durationOf(a.over);
  if (overMs === 0) issues.error(['arrival', 'over'], 'must be longer than 0s');
  if (overMs !== undefined && durationMs !== undefined && durationMs > 0 && overMs > durationMs) {
    issues.warn(['arrival', 'over'], `arrival takes longer than the run (${formatDuration(durationMs)}): late devices never start`);
  }
  if (hasRate && durationMs && (typeof a.rate === 'string' || typeof a.rate === 'number')) {
    const total = list(doc.groups).reduce<number>((n, g) => n + (isObj(g) && typeof g.count === 'number' ? g.count : 0), 0);
    try {
      const takesMs = (total / parseRate(a.rate)) * 1000;
      if (takesMs > durationMs) {
        issues.warn(
          ['arrival', 'rate'],
          `${total} devices at this rate take ${formatDuration(takesMs)}, longer than the run (${formatDuration(durationMs)}): late devices never start`,
        );
      }
    } catch {
      // the schema already reported the bad rate
    }
  }
}

function checkTimeline(
  timeline: unknown,
  durationMs: number | undefined,
  appsByGroup: Map<string, Set<string>>,
  issues: IssueCollector,
): void {
  const groupNames = [...appsByGroup.keys()];
  list(timeline).forEach((t, i) => {
    if (!isObj(t)) return;
    const at = durationOf(t.at);
    if (at !== undefined && durationMs !== undefined && durationMs > 0 && at >= durationMs) {
      issues.error(['timeline', i, 'at'], `is at or after the end of the run (duration ${formatDuration(durationMs)})`);
    }
    let groupsInScope = groupNames;
    if (typeof t.group === 'string') {
      if (!appsByGroup.has(t.group)) {
        issues.error(
          ['timeline', i, 'group'],
          `unknown group "${t.group}"${didYouMean(t.group, groupNames)}; groups are ${groupNames.join(', ') || '(none)'}`,
        );
        return;
      }
      groupsInScope = [t.group];
    }
    if (t.action === 'app-activate' && typeof t.app === 'string') {
      const app = t.app;
      if (!groupsInScope.some((g) => appsByGroup.get(g)?.has(app))) {
        const known = [...new Set(groupsInScope.flatMap((g) => [...(appsByGroup.get(g) ?? [])]))];
        const where = typeof t.group === 'string' ? `group "${t.group}"` : 'any group';
        issues.error(
          ['timeline', i, 'app'],
          `unknown app "${app}" in ${where}${didYouMean(app, known)}; apps are ${known.join(', ') || '(none)'}`,
        );
      }
    }
    if (t.action === 'config-item' && typeof t.key === 'string') {
      const v = t.value;
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
        const r = checkConfigItem(t.key, v);
        if (!r.ok) issues.error(['timeline', i, 'value'], `${t.key} ${r.message}`);
        else if (r.warning) issues.warn(['timeline', i, 'key'], r.warning);
      }
    }
  });
}

function checkThresholds(thresholds: unknown, groups: unknown, issues: IssueCollector): void {
  const apiOf = new Map<string, string>();
  for (const g of list(groups)) if (isObj(g) && typeof g.name === 'string') apiOf.set(g.name, typeof g.api === 'string' ? g.api : 'v2');
  list(thresholds).forEach((t, i) => {
    // An entry is the expression or { threshold: <expression>, required }; the schema checks the shape.
    const text = typeof t === 'string' ? t : isObj(t) && typeof t.threshold === 'string' ? t.threshold : undefined;
    if (text === undefined) return;
    const path = typeof t === 'string' ? ['thresholds', i] : ['thresholds', i, 'threshold'];
    try {
      const spec = parseThreshold(text);
      if (isObj(t)) checkAbortEntry(t, i, issues, () => checkAbortable(spec));
      const group = spec.perDevice?.group;
      if (group === undefined) return;
      const api = apiOf.get(group);
      if (api === undefined) {
        const known = [...apiOf.keys()];
        issues.error(path, `"${spec.source}": unknown group "${group}"${didYouMean(group, known)}; groups are ${known.join(', ')}`);
      } else if (spec.api !== undefined && spec.api !== api) {
        issues.error(path, `"${spec.source}": group "${group}" uses API ${api}, so it has no devices of API ${spec.api}`);
      }
    } catch (e) {
      issues.error(path, (e as Error).message);
    }
  });
}

function checkTarget(target: unknown, issues: IssueCollector, opts: CheckOptions): void {
  if (!isObj(target)) return;
  if (typeof target.url === 'string') {
    const problem = httpUrlProblem(target.url, 'https://127.0.0.1:8443');
    if (problem) issues.error(['target', 'url'], problem);
  }
  if (target.insecureSkipVerify === true) {
    issues.warn(['target', 'insecureSkipVerify'], 'TLS verification of the controller is OFF', { at: 'key' });
  } else if (target.rootCa === undefined) {
    issues.error(['target'], 'missing required field "rootCa" (it may be left out only with insecureSkipVerify: true)', { dedupe: false });
  }
  if (!opts.checkTargetFiles) return;
  for (const field of ['rootCa', 'onboardCert', 'onboardKey']) {
    const p = target[field];
    if (typeof p === 'string' && !existsSync(resolve(opts.baseDir, p))) {
      issues.error(['target', field], `file "${p}" does not exist (paths are relative to the scenario file)`);
    }
  }
}

