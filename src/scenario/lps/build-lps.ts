// Normalises the local profile server parts of a checked scenario document: sites, a group's GNSS
// and cellular models, and the LPS timeline actions. Only called once check-lps.ts and the schema
// found nothing wrong, so shapes can be trusted; units are parsed here.

import type { CellOperatorId } from '../../device/radio/cellular-model.js';
import type { CellularSpec, GnssSpec } from '../../device/radio/radio-specs.js';
import type { LpsThrottleEndpoint, LpsTimelineAction, SiteSpec } from './lps-scenario-types.js';
import { parseDuration } from '../parse-duration.js';

interface PointDocument {
  latitude: number;
  longitude: number;
  altitude?: number;
}

export interface GnssDocument {
  site?: PointDocument & { jitter?: number };
  route?: { waypoints: PointDocument[]; speed: number | string; loop?: 'back-and-forth' | 'closed' };
  outages?: WindowDocument;
}

export interface CellularDocument {
  modems?: number;
  simSlots?: 1 | 2;
  operator?: string;
  roaming?: string;
  drops?: WindowDocument | false;
  radioSilenceFails?: string;
}

interface WindowDocument {
  every: string;
  lasting: string;
}

export interface SiteDocument {
  name: string;
  groups: string[];
  share?: number | string;
  profile?: string;
  radioSilence?: boolean;
  throttleRule?: 'eve' | 'spec';
  throttle?: LpsThrottleEndpoint[];
  tokenMismatch?: boolean;
}

export interface LpsGroupDocument {
  gnss?: GnssDocument;
  cellular?: CellularDocument;
}

export function buildSites(sites: readonly SiteDocument[] | undefined): SiteSpec[] | undefined {
  if (sites === undefined || sites.length === 0) return undefined;
  return sites.map((s) => ({
    name: s.name,
    groups: [...s.groups],
    share: s.share === undefined ? 1 : parseShare(s.share),
    profile: s.profile ?? '',
    ...(s.radioSilence !== undefined ? { radioSilence: s.radioSilence } : {}),
    throttleRule: s.throttleRule ?? 'eve',
    throttle: [...(s.throttle ?? [])],
    tokenMismatch: s.tokenMismatch ?? false,
  }));
}

/** The gnss / cellular fields of a GroupSpec (absent ones are left out). */
export function lpsGroupFields(g: LpsGroupDocument): { gnss?: GnssSpec; cellular?: CellularSpec } {
  const out: { gnss?: GnssSpec; cellular?: CellularSpec } = {};
  if (g.gnss !== undefined) out.gnss = buildGnss(g.gnss);
  if (g.cellular !== undefined) out.cellular = buildCellular(g.cellular);
  return out;
}

function buildGnss(g: GnssDocument): GnssSpec {
  const out: GnssSpec = {};
  if (g.site !== undefined) {
    out.site = { latitude: g.site.latitude, longitude: g.site.longitude };
    if (g.site.altitude !== undefined) out.site.altitude = g.site.altitude;
    if (g.site.jitter !== undefined) out.site.jitterM = g.site.jitter;
  }
  if (g.route !== undefined) {
    out.route = {
      waypoints: g.route.waypoints.map((p) => ({ latitude: p.latitude, longitude: p.longitude, ...(p.altitude !== undefined ? { altitude: p.altitude } : {}) })),
      speedMps: parseSpeed(g.route.speed),
      ...(g.route.loop !== undefined ? { loop: g.route.loop } : {}),
    };
  }
  if (g.outages !== undefined) out.outages = windowOf(g.outages);
  return out;
}

function buildCellular(c: CellularDocument): CellularSpec {
  return {
    modems: c.modems ?? 1,
    simSlots: c.simSlots ?? 1,
    ...(c.operator !== undefined ? { operator: c.operator as CellOperatorId } : {}),
    ...(c.roaming !== undefined ? { roamingOn: c.roaming as CellOperatorId } : {}),
    drops: c.drops === false ? null : c.drops === undefined ? { meanIntervalS: 3600, meanDurationS: 40 } : windowOf(c.drops),
    ...(c.radioSilenceFails !== undefined ? { radioSilenceFails: c.radioSilenceFails } : {}),
  };
}

function windowOf(w: WindowDocument): { meanIntervalS: number; meanDurationS: number } {
  return { meanIntervalS: parseDuration(w.every) / 1000, meanDurationS: parseDuration(w.lasting) / 1000 };
}

/** An LPS timeline action (the caller has parsed `at`). */
export function buildLpsAction(atMs: number, t: Record<string, unknown>): LpsTimelineAction {
  const target = {
    ...(typeof t.site === 'string' ? { site: t.site } : {}),
    ...(typeof t.group === 'string' ? { group: t.group } : {}),
  };
  switch (t.action) {
    case 'local-profile':
      return { atMs, action: 'local-profile', site: t.site as string, profile: t.profile as string };
    case 'radio-silence':
      return { atMs, action: 'radio-silence', site: t.site as string, enabled: t.enabled as boolean };
    case 'lps-throttle':
      return { atMs, action: 'lps-throttle', site: t.site as string, endpoints: [...(t.endpoints as LpsThrottleEndpoint[])] };
    case 'app-command':
      return { atMs, action: 'app-command', ...target, app: t.app as string, command: t.command as 'restart' | 'purge' };
    case 'device-command':
      return { atMs, action: 'device-command', ...target, command: t.command as 'shutdown' | 'poweroff' | 'reboot' | 'collect-info' };
    default:
      throw new Error(`not an LPS timeline action: ${String(t.action)}`);
  }
}

/** 0.5, "50%" → 0.5. Throws naming the problem (check-lps.ts reports it with its position). */
export function parseShare(v: number | string): number {
  let n: number;
  if (typeof v === 'number') n = v;
  else {
    const m = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(v);
    if (!m) throw new Error(`"${v}" is not a share; expected 0 to 1 or a percentage such as 50%`);
    n = Number(m[1]) / 100;
  }
  if (!(n > 0 && n <= 1)) throw new Error(`share must be more than 0 and at most 1 (100%), got ${String(v)}`);
  return n;
}

/** 13.9, "13.9m/s", "50km/h" → m/s. Throws naming the problem. */
export function parseSpeed(v: number | string): number {
  if (typeof v === 'number') {
    if (!(v >= 0) || !Number.isFinite(v)) throw new Error(`speed must be ≥ 0 m/s, got ${v}`);
    return v;
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*(m\/s|km\/h)\s*$/.exec(v);
  if (!m) throw new Error(`"${v}" is not a speed; expected e.g. 50km/h or 13.9m/s`);
  const n = Number(m[1]);
  return m[2] === 'km/h' ? n / 3.6 : n;
}
