// The embedded LPS's JSON admin API, on its own loopback port. Errors are JSON {error, field?}.
// `devices` is a list of device UUIDs (or 'peer:…' keys of devices that did not identify
// themselves yet), or 'all' for every device that did; UUIDs that never called are created, so
// commands can be queued before a device first calls. Without `devices`, profile, radio and
// throttle settings are the site defaults.
//
//   GET  /admin/site                     token, defaults, device and command totals
//   GET  /admin/stats                    answers per endpoint and status, signal streams
//   PUT  /admin/profile                  {profile: string|null, devices?}       null removes an override
//   PUT  /admin/radio                    {radioSilence: boolean|null, devices?} null: site → no RadioConfig (204)
//   PUT  /admin/throttle                 {endpoints: string[]|null, devices?}   listed endpoints answer 404
//   POST /admin/app-commands             {devices, app: {id?, name?}, command: restart|purge}
//   POST /admin/device-commands          {devices, command: shutdown|poweroff|reboot|collect-info}
//   GET  /admin/devices[?offset=&limit=] device summaries
//   GET  /admin/devices/{uuid|key}       one device: overrides, posts with the last body decoded, commands
//   GET  /admin/commands[?device=&pending=1]  every command with issuedAt / completedAt (server ms)

import type { IncomingMessage, ServerResponse } from 'node:http';
import { readLimitedBody, sendJson } from '../admin-http.js';
import { Msg } from '../../protocol/messages.js';
import type { Codec } from '../../protocol/codec.js';
import type { LpsDeviceApi } from './lps-device-api.js';
import { isLpsEndpoint, LPS_ENDPOINT_INDEX, LPS_SERVED_ENDPOINTS, type LpsServedEndpoint } from './lps-endpoints.js';
import { LpsSignalHub, SignalEndpoint } from './lps-signal.js';
import { LPS_APP_COMMANDS, LPS_DEVICE_COMMANDS, type LpsAppCommandName, type LpsAppTarget, type LpsDevice, type LpsDeviceCommandName, type LpsSite } from './lps-site.js';

const MAX_ADMIN_BODY = 64 * 1024 * 1024;

export class LpsAdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** Decoder of the last body per endpoint, for device details. */
const LAST_BODY_CODEC: Partial<Record<LpsServedEndpoint, Codec<object>>> = {
  radio: Msg.RadioStatus as Codec<object>,
  appinfo: Msg.LocalAppInfoList as Codec<object>,
  devinfo: Msg.LocalDevInfo as Codec<object>,
  location: Msg.ZInfoLocation as Codec<object>,
  appbootinfo: Msg.AppBootInfoList as Codec<object>,
  network: Msg.NetworkInfo as Codec<object>,
};

export interface LpsAdminContext {
  site: LpsSite;
  api: LpsDeviceApi;
  signals: LpsSignalHub;
}

export function handleAdminRequest(ctx: LpsAdminContext, req: IncomingMessage, res: ServerResponse): void {
  readJsonBody(req)
    .then((body) => {
      const { status, json } = route(ctx, req.method ?? 'GET', req.url ?? '/', body);
      sendJson(res, status, json);
    })
    .catch((e: unknown) => {
      if (e instanceof LpsAdminError) sendJson(res, e.status, { error: e.message, ...(e.field ? { field: e.field } : {}) });
      else sendJson(res, 500, { error: `internal error: ${(e as Error).message}` });
    });
}

function route(ctx: LpsAdminContext, method: string, url: string, body: unknown): { status: number; json: unknown } {
  const { site, signals } = ctx;
  const u = new URL(url, 'http://admin');
  const parts = u.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 'admin') throw new LpsAdminError(404, `no admin endpoint ${u.pathname}`);
  const what = parts[1];
  const need = (m: string) => {
    if (method !== m) throw new LpsAdminError(405, `${method} ${u.pathname}: use ${m}`);
  };

  switch (what) {
    case 'site': {
      need('GET');
      return ok(siteSummary(site));
    }
    case 'stats': {
      need('GET');
      return ok({ answers: ctx.api.counts, signalStreams: signals.openStreams, signalLines: signals.linesSent });
    }
    case 'profile': {
      need('PUT');
      const b = obj(body);
      const value = b.profile;
      if (value !== null && typeof value !== 'string') throw new LpsAdminError(400, 'profile must be a string (or null to remove a device override)', 'profile');
      const devices = optDevices(site, b.devices);
      if (devices === undefined && value === null) throw new LpsAdminError(400, 'the site profile cannot be null; use "" for no local profile', 'profile');
      site.setProfile(value, devices);
      signals.notify(devices ?? 'all', [SignalEndpoint.CONFIG_ENDPOINT_LOCAL_PROFILE]);
      return ok({ profile: value, devices: devices?.length ?? 'site' });
    }
    case 'radio': {
      need('PUT');
      const b = obj(body);
      const value = b.radioSilence;
      if (value !== null && typeof value !== 'boolean') throw new LpsAdminError(400, 'radioSilence must be true, false or null', 'radioSilence');
      const devices = optDevices(site, b.devices);
      site.setRadioSilence(value, devices);
      signals.notify(devices ?? 'all', [SignalEndpoint.CONFIG_ENDPOINT_RADIO]);
      return ok({ radioSilence: value, devices: devices?.length ?? 'site' });
    }
    case 'throttle': {
      need('PUT');
      const b = obj(body);
      let eps: LpsServedEndpoint[] | null;
      if (b.endpoints === null) eps = null;
      else if (Array.isArray(b.endpoints)) {
        b.endpoints.forEach((e, i) => {
          if (!isLpsEndpoint(e)) throw new LpsAdminError(400, `${JSON.stringify(e)} is not one of ${LPS_SERVED_ENDPOINTS.join(', ')}`, `endpoints[${i}]`);
        });
        eps = b.endpoints as LpsServedEndpoint[];
      } else throw new LpsAdminError(400, 'endpoints must be a list of endpoint names (or null to remove a device override)', 'endpoints');
      const devices = optDevices(site, b.devices);
      if (devices === undefined && eps === null) throw new LpsAdminError(400, 'the site throttle list cannot be null; use []', 'endpoints');
      site.setThrottle(eps, devices);
      return ok({ endpoints: eps, devices: devices?.length ?? 'site' });
    }
    case 'app-commands': {
      need('POST');
      const b = obj(body);
      const devices = reqDevices(site, b.devices);
      const app = b.app;
      if (typeof app !== 'object' || app === null || Array.isArray(app)) throw new LpsAdminError(400, 'app must be {id?, name?}', 'app');
      const a = app as Record<string, unknown>;
      const target: LpsAppTarget = {};
      if (a.id !== undefined) {
        if (typeof a.id !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(a.id)) {
          throw new LpsAdminError(400, 'app.id must be an app instance UUID', 'app.id');
        }
        target.id = a.id.toLowerCase();
      }
      if (a.name !== undefined) {
        if (typeof a.name !== 'string' || a.name === '') throw new LpsAdminError(400, 'app.name must be a non-empty display name', 'app.name');
        target.name = a.name;
      }
      if (target.id === undefined && target.name === undefined) throw new LpsAdminError(400, 'app needs an id or a name (or both)', 'app');
      if (!LPS_APP_COMMANDS.includes(b.command as LpsAppCommandName)) throw new LpsAdminError(400, `command must be one of ${LPS_APP_COMMANDS.join(', ')}`, 'command');
      const recs = site.issueAppCommand(devices, target, b.command as LpsAppCommandName);
      signals.notify(devices, [SignalEndpoint.CONFIG_ENDPOINT_APP_INFO]);
      return ok({ issued: recs.map((r, i) => ({ device: label(devices[i]!), timestamp: r.timestamp, issuedAt: r.issuedAt })) });
    }
    case 'device-commands': {
      need('POST');
      const b = obj(body);
      const devices = reqDevices(site, b.devices);
      if (!LPS_DEVICE_COMMANDS.includes(b.command as LpsDeviceCommandName)) throw new LpsAdminError(400, `command must be one of ${LPS_DEVICE_COMMANDS.join(', ')}`, 'command');
      const recs = site.issueDeviceCommand(devices, b.command as LpsDeviceCommandName);
      signals.notify(devices, [SignalEndpoint.CONFIG_ENDPOINT_DEV_INFO]);
      return ok({ issued: recs.map((r, i) => ({ device: label(devices[i]!), timestamp: r.timestamp, issuedAt: r.issuedAt })) });
    }
    case 'devices': {
      need('GET');
      if (parts.length === 2) {
        const all = [...site.devices.values()];
        const offset = intParam(u, 'offset', 0);
        const limit = intParam(u, 'limit', 1000);
        return ok({ total: all.length, devices: all.slice(offset, offset + limit).map((d) => deviceSummary(site, d)) });
      }
      const d = site.find(parts.slice(2).join('/'), false);
      if (d === undefined) throw new LpsAdminError(404, `no device ${parts.slice(2).join('/')} at this LPS`);
      return ok(deviceDetail(site, d));
    }
    case 'commands': {
      need('GET');
      const only = u.searchParams.get('device');
      const pending = u.searchParams.get('pending') === '1' || u.searchParams.get('pending') === 'true';
      let devices = [...site.devices.values()];
      if (only !== null) {
        const d = site.find(only, false);
        devices = d === undefined ? [] : [d];
      }
      const out: unknown[] = [];
      for (const d of devices) {
        for (const c of d.appCommands) {
          if (pending && c.completedAt !== undefined) continue;
          out.push({ device: label(d), kind: 'app', app: c.target, command: c.command, timestamp: c.timestamp, issuedAt: c.issuedAt, completedAt: c.completedAt ?? null });
        }
        for (const c of d.deviceCommands) {
          if (pending && c.completedAt !== undefined) continue;
          out.push({ device: label(d), kind: 'device', command: c.command, timestamp: c.timestamp, issuedAt: c.issuedAt, completedAt: c.completedAt ?? null });
        }
      }
      return ok({ commands: out });
    }
    default:
      throw new LpsAdminError(404, `no admin endpoint ${u.pathname}`);
  }
}

function siteSummary(site: LpsSite): unknown {
  let devices = 0;
  let identified = 0;
  const app = { issued: 0, completed: 0 };
  const dev = { issued: 0, completed: 0 };
  for (const d of site.devices.values()) {
    devices++;
    if (d.uuid !== undefined) identified++;
    for (const c of d.appCommands) {
      app.issued++;
      if (c.completedAt !== undefined) app.completed++;
    }
    for (const c of d.deviceCommands) {
      dev.issued++;
      if (c.completedAt !== undefined) dev.completed++;
    }
  }
  return {
    token: site.token,
    profile: site.profile,
    radioSilence: site.radioSilence ?? null,
    throttle: site.throttledEndpoints(),
    devices,
    identifiedDevices: identified,
    appCommands: app,
    deviceCommands: dev,
  };
}

function deviceSummary(site: LpsSite, d: LpsDevice): unknown {
  const posts: Record<string, number> = {};
  for (const e of LPS_SERVED_ENDPOINTS) posts[e] = d.posts[LPS_ENDPOINT_INDEX[e]]!;
  return {
    key: d.key,
    uuid: d.uuid ?? null,
    profile: site.effectiveProfile(d),
    radioSilence: site.effectiveRadioSilence(d) ?? null,
    posts,
    pendingCommands: d.appCommands.filter((c) => c.completedAt === undefined).length + d.deviceCommands.filter((c) => c.completedAt === undefined).length,
  };
}

function deviceDetail(site: LpsSite, d: LpsDevice): unknown {
  const posts: Record<string, unknown> = {};
  for (const e of LPS_SERVED_ENDPOINTS) {
    const i = LPS_ENDPOINT_INDEX[e];
    if (d.posts[i] === 0) continue;
    const entry: Record<string, unknown> = { count: d.posts[i], lastAt: d.lastAt[i] };
    const raw = d.lastBody[i];
    const codec = LAST_BODY_CODEC[e];
    if (raw !== undefined && codec !== undefined) {
      try {
        entry.last = codec.toJSON(codec.decode(raw));
      } catch (err) {
        entry.lastError = (err as Error).message;
      }
    }
    posts[e] = entry;
  }
  return {
    key: d.key,
    uuid: d.uuid ?? null,
    peer: d.lastPeer || null,
    profile: { override: d.profile ?? null, effective: site.effectiveProfile(d) },
    radioSilence: { override: d.radioSilence ?? null, effective: site.effectiveRadioSilence(d) ?? null },
    throttle: site.throttledEndpoints(d),
    posts,
    badBodies: d.badBodies,
    appCommands: d.appCommands.map((c) => ({ ...c, completedAt: c.completedAt ?? null })),
    deviceCommands: d.deviceCommands.map((c) => ({ ...c, completedAt: c.completedAt ?? null })),
  };
}

function label(d: LpsDevice): string {
  return d.uuid ?? d.key;
}

function optDevices(site: LpsSite, v: unknown): LpsDevice[] | undefined {
  if (v === undefined) return undefined;
  return reqDevices(site, v);
}

function reqDevices(site: LpsSite, v: unknown): LpsDevice[] {
  if (v === 'all') return site.knownDevices();
  if (!Array.isArray(v) || v.length === 0) throw new LpsAdminError(400, "devices must be 'all' or a non-empty list of device UUIDs", 'devices');
  return v.map((x, i) => {
    if (typeof x !== 'string') throw new LpsAdminError(400, 'must be a device UUID', `devices[${i}]`);
    const d = site.find(x, true);
    if (d === undefined) throw new LpsAdminError(404, `no device ${JSON.stringify(x)} at this LPS (give a UUID, or a key listed by GET /admin/devices)`, `devices[${i}]`);
    return d;
  });
}

function obj(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new LpsAdminError(400, 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

function intParam(u: URL, name: string, def: number): number {
  const v = u.searchParams.get(name);
  if (v === null) return def;
  if (!/^[0-9]+$/.test(v)) throw new LpsAdminError(400, `${name} must be a non-negative integer`, name);
  return Number(v);
}

function ok(json: unknown): { status: number; json: unknown } {
  return { status: 200, json };
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const body = await readLimitedBody(req, MAX_ADMIN_BODY, () => new LpsAdminError(413, `admin request body larger than ${MAX_ADMIN_BODY} bytes`));
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw new LpsAdminError(400, `request body is not JSON: ${(e as Error).message}`);
  }
}

