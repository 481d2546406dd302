// Rules for the local profile server parts of a scenario that the schema cannot say: site names
// unique, the groups a site serves exist and belong to one site only, a GNSS model is a site or a
// route (not both), outage windows shorter than their interval, and LPS timeline actions that name
// a site or group that exists and is served, and an app that group has. Runs on the plain
// document even when the schema found errors, so every access is guarded.

import type { IssueCollector } from '../issue-collector.js';
import { parseShare, parseSpeed } from './build-lps.js';
import { durationOf } from '../parse-duration.js';
import { didYouMean } from '../suggest.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export function checkLps(doc: Obj, issues: IssueCollector): void {
  const apps = new Map<string, Set<string>>();
  list(doc.groups).forEach((g, i) => {
    if (!isObj(g) || typeof g.name !== 'string') return;
    apps.set(g.name, new Set(list(g.apps).flatMap((a) => (isObj(a) && typeof a.name === 'string' ? [a.name] : []))));
    if (isObj(g.gnss)) checkGnss(g.gnss, ['groups', i, 'gnss'], issues);
    if (isObj(g.cellular) && isObj(g.cellular.drops)) checkWindow(g.cellular.drops, ['groups', i, 'cellular', 'drops'], issues);
  });
  const groupNames = [...apps.keys()];

  /** site name → its groups */
  const sites = new Map<string, string[]>();
  /** group → the site serving it */
  const siteOf = new Map<string, string>();
  list(doc.sites).forEach((s, i) => {
    if (!isObj(s) || typeof s.name !== 'string') return;
    if (sites.has(s.name)) {
      issues.error(['sites', i, 'name'], `site name "${s.name}" is used twice`);
      return;
    }
    const groups: string[] = [];
    list(s.groups).forEach((g, j) => {
      if (typeof g !== 'string') return;
      if (!apps.has(g)) {
        issues.error(['sites', i, 'groups', j], `unknown group "${g}"${didYouMean(g, groupNames)}; groups are ${groupNames.join(', ') || '(none)'}`);
        return;
      }
      const other = siteOf.get(g);
      if (other !== undefined) {
        issues.error(['sites', i, 'groups', j], `group "${g}" is already served by site "${other}"; a group has at most one local profile server`);
        return;
      }
      siteOf.set(g, s.name as string);
      groups.push(g);
    });
    sites.set(s.name, groups);
    if (typeof s.share === 'number' || typeof s.share === 'string') {
      try {
        parseShare(s.share);
      } catch (e) {
        issues.error(['sites', i, 'share'], (e as Error).message);
      }
    }
  });
  const siteNames = [...sites.keys()];

  list(doc.timeline).forEach((t, i) => {
    if (!isObj(t) || typeof t.action !== 'string') return;
    const path = ['timeline', i];
    switch (t.action) {
      case 'local-profile':
      case 'radio-silence':
      case 'lps-throttle':
        if (typeof t.site === 'string') knownSite(t.site, [...path, 'site'], sites, siteNames, issues);
        return;
      case 'app-command':
      case 'device-command': {
        const hasSite = typeof t.site === 'string';
        const hasGroup = typeof t.group === 'string';
        if (hasSite === hasGroup) {
          issues.error(path, `${t.action} needs either "site" (every device of the site) or "group" (every device of the group), not ${hasSite ? 'both' : 'neither'}`);
          return;
        }
        let scope: string[] | undefined;
        if (hasSite) scope = knownSite(t.site as string, [...path, 'site'], sites, siteNames, issues);
        else if (apps.has(t.group as string)) {
          // Unknown groups are reported by the general timeline check.
          if (!siteOf.has(t.group as string)) {
            issues.error([...path, 'group'], `group "${t.group as string}" is not served by any site, so no LPS can send it commands`);
            return;
          }
          scope = [t.group as string];
        }
        if (scope !== undefined && t.action === 'app-command' && typeof t.app === 'string') {
          const app = t.app;
          if (!scope.some((g) => apps.get(g)?.has(app))) {
            const known = [...new Set(scope.flatMap((g) => [...(apps.get(g) ?? [])]))];
            issues.error([...path, 'app'], `unknown app "${app}" in ${hasSite ? `site "${t.site as string}"` : `group "${t.group as string}"`}${didYouMean(app, known)}; apps are ${known.join(', ') || '(none)'}`);
          }
        }
        return;
      }
      default:
        return;
    }
  });

  if (sites.size > 0 && isObj(doc.target)) {
    issues.warn(['sites'], 'a real controller does not put the sites\' LPS addresses into device configurations: the sites run but devices only use them if that controller does', { at: 'key' });
  }
}

function knownSite(name: string, path: (string | number)[], sites: Map<string, string[]>, names: string[], issues: IssueCollector): string[] | undefined {
  const groups = sites.get(name);
  if (groups === undefined) issues.error(path, `unknown site "${name}"${didYouMean(name, names)}; sites are ${names.join(', ') || '(none)'}`);
  return groups;
}

function checkGnss(g: Obj, path: (string | number)[], issues: IssueCollector): void {
  const hasSite = g.site !== undefined;
  const hasRoute = g.route !== undefined;
  if (hasSite === hasRoute) {
    issues.error(path, `gnss needs either "site" (a fixed place) or "route" (a vehicle), not ${hasSite ? 'both' : 'neither'}`);
  }
  if (isObj(g.route) && (typeof g.route.speed === 'number' || typeof g.route.speed === 'string')) {
    try {
      parseSpeed(g.route.speed);
    } catch (e) {
      issues.error([...path, 'route', 'speed'], (e as Error).message);
    }
  }
  if (isObj(g.outages)) checkWindow(g.outages, [...path, 'outages'], issues);
}

function checkWindow(w: Obj, path: (string | number)[], issues: IssueCollector): void {
  const every = durationOf(w.every);
  const lasting = durationOf(w.lasting);
  if (every === 0) issues.error([...path, 'every'], 'must be longer than 0s');
  // every 0 is reported above; "lasting must be shorter than 0s" would only repeat it.
  if (every !== undefined && every > 0 && lasting !== undefined && lasting >= every) {
    issues.error([...path, 'lasting'], `must be shorter than "every" (${String(w.every)})`);
  }
}
