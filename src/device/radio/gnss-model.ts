// Seeded GNSS receivers for virtual devices: where the device is (a fixed site, or a vehicle
// driving a route at a speed), how good the fix is (satellites in view, HDOP), and when the fix is
// lost. Produces ZInfoLocation (eve-wire-facts §11.4) as EVE posts it to the LPS and sends to the
// controller as ZiLocation. Everything is a pure function of (seed, time): no random state, so
// 10,000 receivers cost a few numbers each and a seeded run replays exactly.

import { info } from '../../gen/eve-types.js';
import type { Millis } from '../ports.js';
import { gauss, modelSeed, msToOutage, smooth, type OutagePlan } from './model-noise.js';

const R = info.LocReliability;
const EARTH_RADIUS_M = 6_371_000;
/** User-equivalent range error of a consumer GNSS receiver, metres: uncertainty = HDOP × UERE. */
const UERE_M = 3;
/** Satellites below which there is no fix at all. */
const MIN_SATS_FOR_FIX = 4;
/** Time around a loss of fix during which satellites fade out / come back, ms. */
const FADE_MS = 45_000;

export interface GeoPoint {
  latitude: number;
  longitude: number;
  /** Metres above the ellipsoid. Default 0. */
  altitude?: number;
}

export interface GnssFixedSite extends GeoPoint {
  kind: 'fixed';
}

export interface GnssRoute {
  kind: 'route';
  /** At least two points. */
  waypoints: readonly GeoPoint[];
  /** Ground speed, m/s. */
  speedMps: number;
  /** 'back-and-forth' (default) drives to the end and back; 'closed' goes from the last point to the first. */
  loop?: 'back-and-forth' | 'closed';
}

export interface GnssReceiverOptions {
  /** Scenario seed and device index: together they pick this receiver's noise and outages. */
  seed: number;
  deviceIndex: number;
  motion: GnssFixedSite | GnssRoute;
  /** Losses of fix (tunnels, obstructions): about one per interval, lasting about the duration. None by default. */
  outages?: { meanIntervalS: number; meanDurationS: number };
  /** Logical label of the GNSS-capable modem reported in ZInfoLocation. Default 'wwan0'. */
  logicalLabel?: string;
  /** Clock time at which a route starts at its first waypoint. Default 0. */
  routeStartMs?: Millis;
}

export type GnssFixQuality = 'no-fix' | 'poor' | 'fair' | 'good';

export interface GnssFix {
  quality: GnssFixQuality;
  satellites: number;
  hdop: number;
}

export class GnssReceiver {
  private readonly seed: number;
  private readonly outages: OutagePlan | undefined;
  private readonly label: string;
  private readonly routeStartMs: Millis;
  /** Cumulative distances along the route (closed routes include the closing leg), metres. */
  private readonly cumulative: Float64Array | undefined;
  /** Route points in driving order (closed routes repeat the first at the end). */
  private readonly points: readonly GeoPoint[] = [];
  /** Per-receiver sky quality: some sites see more of the sky than others. */
  private readonly skyBias: number;

  constructor(private readonly o: GnssReceiverOptions) {
    this.seed = modelSeed(o.seed, o.deviceIndex, 0x6e55);
    this.label = o.logicalLabel ?? 'wwan0';
    this.routeStartMs = o.routeStartMs ?? 0;
    const m = o.motion;
    checkPoint(m.kind === 'fixed' ? m : undefined, 'motion');
    if (m.kind === 'route') {
      if (m.waypoints.length < 2) throw new Error(`GNSS receiver of device ${o.deviceIndex}: a route needs at least 2 waypoints, got ${m.waypoints.length}`);
      m.waypoints.forEach((p, i) => checkPoint(p, `motion.waypoints[${i}]`));
      if (!(m.speedMps >= 0)) throw new Error(`GNSS receiver of device ${o.deviceIndex}: motion.speedMps must be >= 0, got ${m.speedMps}`);
      const pts = m.loop === 'closed' ? [...m.waypoints, m.waypoints[0]!] : [...m.waypoints];
      this.points = pts;
      const cum = new Float64Array(pts.length);
      for (let i = 1; i < pts.length; i++) cum[i] = cum[i - 1]! + distanceM(pts[i - 1]!, pts[i]!);
      this.cumulative = cum;
    }
    if (o.outages !== undefined) {
      const { meanIntervalS, meanDurationS } = o.outages;
      if (!(meanIntervalS > 0) || !(meanDurationS >= 0) || meanDurationS >= meanIntervalS) {
        throw new Error(`GNSS receiver of device ${o.deviceIndex}: outages need meanIntervalS > meanDurationS >= 0, got ${meanIntervalS} and ${meanDurationS}`);
      }
      this.outages = { meanIntervalMs: meanIntervalS * 1000, meanDurationMs: meanDurationS * 1000 };
    }
    this.skyBias = smooth(this.seed, 1, 0, 1);
  }

  /** Fix quality at time t. */
  fixAt(t: Millis): GnssFix {
    const toLoss = msToOutage(this.seed, 2, t, this.outages);
    // 7..13 satellites drifting over minutes; a moving receiver loses some behind buildings.
    let sats = 10 + 1.5 * this.skyBias + 2.5 * smooth(this.seed, 3, t, 240_000);
    if (this.o.motion.kind === 'route') sats -= 1.5 * Math.abs(smooth(this.seed, 4, t, 20_000));
    if (toLoss < FADE_MS) sats = Math.min(sats, 2 + (toLoss / FADE_MS) * (sats - 2));
    const satellites = Math.max(0, Math.round(sats));
    if (satellites < MIN_SATS_FOR_FIX) return { quality: 'no-fix', satellites, hdop: 99 };
    const hdop = round2(Math.max(0.6, 0.35 + 8 / satellites + 0.15 * smooth(this.seed, 5, t, 30_000)));
    const quality: GnssFixQuality = hdop <= 1.5 ? 'good' : hdop <= 2.5 ? 'fair' : 'poor';
    return { quality, satellites, hdop };
  }

  /** True position (no measurement noise) at time t. */
  truePositionAt(t: Millis): Required<GeoPoint> {
    const m = this.o.motion;
    if (m.kind === 'fixed') return { latitude: m.latitude, longitude: m.longitude, altitude: m.altitude ?? 0 };
    const cum = this.cumulative!;
    const total = cum[cum.length - 1]!;
    const pts = this.points;
    if (total === 0) return withAlt(pts[0]!);
    let d = (Math.max(0, t - this.routeStartMs) / 1000) * m.speedMps;
    if (m.loop === 'closed') d %= total;
    else {
      d %= 2 * total;
      if (d > total) d = 2 * total - d;
    }
    let i = 1;
    while (i < cum.length - 1 && cum[i]! < d) i++;
    const a = pts[i - 1]!;
    const b = pts[i]!;
    const seg = cum[i]! - cum[i - 1]!;
    const f = seg === 0 ? 0 : (d - cum[i - 1]!) / seg;
    return {
      latitude: a.latitude + (b.latitude - a.latitude) * f,
      longitude: a.longitude + (b.longitude - a.longitude) * f,
      altitude: (a.altitude ?? 0) + ((b.altitude ?? 0) - (a.altitude ?? 0)) * f,
    };
  }

  /** What the receiver reports at time t; undefined while it has no fix (EVE then publishes nothing). */
  locationAt(t: Millis): info.ZInfoLocation | undefined {
    const fix = this.fixAt(t);
    if (fix.quality === 'no-fix') return undefined;
    const hUnc = fix.hdop * UERE_M;
    const vUnc = hUnc * 1.7; // vertical dilution is typically 1.5–2× horizontal
    const p = this.truePositionAt(t);
    const step = Math.floor(t / 1000);
    const north = gauss(this.seed, 6, step) * hUnc * 0.5;
    const east = gauss(this.seed, 7, step) * hUnc * 0.5;
    const up = gauss(this.seed, 8, step) * vUnc * 0.5;
    const latitude = p.latitude + (north / EARTH_RADIUS_M) * (180 / Math.PI);
    const longitude = p.longitude + (east / (EARTH_RADIUS_M * Math.cos((p.latitude * Math.PI) / 180))) * (180 / Math.PI);
    const horizontal = reliability(fix);
    return {
      latitude: round7(latitude),
      longitude: round7(wrapLongitude(longitude)),
      altitude: round2(p.altitude + up),
      utc_timestamp: { seconds: Math.floor(t / 1000), nanos: (t % 1000) * 1_000_000 },
      horizontal_reliability: horizontal,
      vertical_reliability: Math.max(R.LOC_RELIABILITY_VERY_LOW, horizontal - 1),
      horizontal_uncertainty: round2(hUnc),
      vertical_uncertainty: round2(vUnc),
      logicallabel: this.label,
    };
  }
}

/** LocReliability from the fix: many satellites and a low HDOP are HIGH, a marginal fix VERY_LOW. */
function reliability(fix: GnssFix): info.LocReliability {
  if (fix.satellites <= 4 || fix.hdop > 4) return R.LOC_RELIABILITY_VERY_LOW;
  if (fix.hdop > 2.5) return R.LOC_RELIABILITY_LOW;
  if (fix.hdop > 1.5) return R.LOC_RELIABILITY_MEDIUM;
  return R.LOC_RELIABILITY_HIGH;
}

/** Great-circle distance (haversine), metres. */
export function distanceM(a: GeoPoint, b: GeoPoint): number {
  const r = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * r;
  const dLon = (b.longitude - a.longitude) * r;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * r) * Math.cos(b.latitude * r) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

function checkPoint(p: GeoPoint | undefined, where: string): void {
  if (p === undefined) return;
  if (!(Math.abs(p.latitude) <= 90)) throw new Error(`GNSS: ${where}.latitude must be in [-90, 90], got ${p.latitude}`);
  if (!(Math.abs(p.longitude) <= 180)) throw new Error(`GNSS: ${where}.longitude must be in [-180, 180], got ${p.longitude}`);
  if (p.altitude !== undefined && !Number.isFinite(p.altitude)) throw new Error(`GNSS: ${where}.altitude must be a number, got ${p.altitude}`);
}

function withAlt(p: GeoPoint): Required<GeoPoint> {
  return { latitude: p.latitude, longitude: p.longitude, altitude: p.altitude ?? 0 };
}

function wrapLongitude(x: number): number {
  return ((((x + 180) % 360) + 360) % 360) - 180;
}

function round7(x: number): number {
  return Math.round(x * 1e7) / 1e7;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
