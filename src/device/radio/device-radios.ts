// The radio adapters and GNSS receiver a virtual device carries, made from its group's plain specs
// (radio-specs.ts), and how they show up in what the device reports to its controller: ZInfoDevice
// cell_radios, sims and the ports' wireless_status (§6.2, §11.4), and the gauge states the fleet
// counts devices by. The models themselves are cellular-model.ts and gnss-model.ts; this file only
// builds and reads them.

import { info } from '../../gen/eve-types.js';
import { CellularRadios } from './cellular-model.js';
import { GnssReceiver, type GeoPoint, type GnssFixQuality } from './gnss-model.js';
import { managementPorts, toTimestamp } from '../telemetry/info-builders.js';
import { modelSeed, unit } from './model-noise.js';
import type { Millis } from '../ports.js';
import type { CellularSpec, GnssSpec } from './radio-specs.js';

/** The default radios when a group says nothing: one LTE modem with one SIM, seeded operator. */
export const DEFAULT_CELLULAR: CellularSpec = { modems: 1, simSlots: 1, drops: { meanIntervalS: 3600, meanDurationS: 40 } };

/** How the fleet counts a device's radio: its first modem, or the radio-silence change in progress. */
export type RadioGaugeState = 'connected' | 'no-signal' | 'radio-off' | 'applying' | 'config-error';
export const RADIO_GAUGE_STATES: readonly RadioGaugeState[] = ['connected', 'no-signal', 'radio-off', 'applying', 'config-error'];
export type GnssGaugeState = GnssFixQuality;
export const GNSS_GAUGE_STATES: readonly GnssGaugeState[] = ['good', 'fair', 'poor', 'no-fix'];

const EARTH_RADIUS_M = 6_371_000;

export function createCellular(spec: CellularSpec | undefined, seed: number, deviceIndex: number): CellularRadios | undefined {
  if (spec === undefined || spec.modems === 0) return undefined;
  return new CellularRadios({
    seed,
    deviceIndex,
    modems: spec.modems,
    simSlots: spec.simSlots,
    ...(spec.operator !== undefined ? { operator: spec.operator } : {}),
    ...(spec.roamingOn !== undefined ? { roamingOn: spec.roamingOn } : {}),
    drops: spec.drops,
  });
}

export function createGnss(spec: GnssSpec | undefined, seed: number, deviceIndex: number, routeStartMs: Millis): GnssReceiver | undefined {
  if (spec === undefined) return undefined;
  const outages = spec.outages !== undefined ? { outages: spec.outages } : {};
  if (spec.route !== undefined) {
    const loop = spec.route.loop !== undefined ? { loop: spec.route.loop } : {};
    // Vehicles of a group start spread along the route rather than in one convoy.
    const offsetMs = unit(modelSeed(seed, deviceIndex, 0x60a7), 1, 0) * 3_600_000;
    return new GnssReceiver({
      seed,
      deviceIndex,
      motion: { kind: 'route', waypoints: spec.route.waypoints, speedMps: spec.route.speedMps, ...loop },
      routeStartMs: routeStartMs - offsetMs,
      ...outages,
    });
  }
  const site = spec.site;
  if (site === undefined) throw new Error(`GNSS of device ${deviceIndex}: the spec names neither a site nor a route`);
  return new GnssReceiver({ seed, deviceIndex, motion: { kind: 'fixed', ...placeNear(site, site.jitterM ?? 0, seed, deviceIndex) }, ...outages });
}

/** A point uniformly within `radiusM` metres of `p`, fixed per device. */
function placeNear(p: GeoPoint, radiusM: number, seed: number, deviceIndex: number): GeoPoint {
  const out: GeoPoint = { latitude: p.latitude, longitude: p.longitude, ...(p.altitude !== undefined ? { altitude: p.altitude } : {}) };
  if (!(radiusM > 0)) return out;
  const s = modelSeed(seed, deviceIndex, 0x517e);
  const angle = 2 * Math.PI * unit(s, 1, 0);
  const r = radiusM * Math.sqrt(unit(s, 2, 0));
  const dLat = ((r * Math.cos(angle)) / EARTH_RADIUS_M) * (180 / Math.PI);
  const dLon = ((r * Math.sin(angle)) / (EARTH_RADIUS_M * Math.cos((p.latitude * Math.PI) / 180))) * (180 / Math.PI);
  out.latitude = Math.max(-90, Math.min(90, p.latitude + dLat));
  out.longitude = ((((p.longitude + dLon + 180) % 360) + 360) % 360) - 180;
  return out;
}

/**
 * Adds the radios to a ZInfoDevice the way EVE fills it: cell_radios and sims, and a
 * systemAdapter whose port list has the management ports and one wwan port per modem carrying
 * its wireless_status.
 */
export function addRadiosToDeviceInfo(dinfo: info.ZInfoDevice, radios: CellularRadios, deviceIndex: number, now: Millis): void {
  dinfo.cell_radios = radios.moduleInfos(now);
  dinfo.sims = radios.simCards();
  const ports: info.DevicePort[] = managementPorts(deviceIndex).map((p) => ({
    ifname: p.ifname,
    name: p.label,
    isMgmt: true,
    dhcpType: 4, // DhcpTypeClient
    subnet: p.subnet,
    gateway: p.gateway,
    macAddr: p.mac,
    IPAddrs: [p.ipv4, p.ipv6LinkLocal],
    defaultRouters: [p.gateway],
    dns: { DNSservers: [p.gateway] },
    up: true,
    cost: 0,
    mtu: 1500,
  }));
  for (let i = 0; i < radios.modemCount; i++) {
    const label = `wwan${i}`;
    const connected = radios.linkState(now, i) === 'connected';
    ports.push({ ifname: label, name: label, isMgmt: true, dhcpType: 4, up: connected, cost: 10, mtu: 1500, wireless_status: radios.wirelessStatus(now, i) });
  }
  dinfo.systemAdapter = {
    currentIndex: 0,
    status: [{ version: 1, key: 'zedagent', timePriority: toTimestamp(now), lastSucceeded: toTimestamp(now), ports }],
  };
}

/** The gauge state of a device's radios now. */
export function radioGaugeState(radios: CellularRadios, silencePhase: 'idle' | 'applying' | 'failed', now: Millis): RadioGaugeState {
  if (silencePhase === 'applying') return 'applying';
  if (silencePhase === 'failed') return 'config-error';
  return radios.linkState(now, 0);
}
