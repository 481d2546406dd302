// The controller's JSON admin API on its own loopback port: stats, device list and details, the
// fleet, live config changes and the maintenance and certs switches. Errors are JSON {error, field?}.
//
//   GET   /admin/stats                       totals per endpoint and status; attestation outcomes by code;
//                                            connections of each device-API listener (opened, open, peak)
//   GET   /admin/devices[?offset=&limit=]    device summaries
//   GET   /admin/devices/{uuid|serial}       one device in detail
//   GET   /admin/devices/{uuid|serial}/config   the EdgeDevConfig it is served (proto3 JSON) and its hash
//   PATCH /admin/devices/{uuid|serial}/config   ConfigPatch (config-overlay.ts) for one device
//   PATCH /admin/groups/{name}/config        ConfigPatch for every device of a group
//   GET   /admin/fleet                       groups and device counts
//   PUT   /admin/fleet                       { groups: GroupSpec[], devices: [{serial, group, deviceCertPem?}] }
//   PATCH /admin/fleet                       the same body, added to the fleet (shards of one run);
//                                            with "replaceGroups": true its groups are made again
//   POST  /admin/maintenance                 { enabled: boolean }  → every device endpoint answers 503
//   POST  /admin/certs                       { enabled: boolean }  → /certs answers 404 while false

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readLimitedBody, sendJson } from '../admin-http.js';
import { threadId } from 'node:worker_threads';
import { Msg } from '../../protocol/messages.js';
import { AdminInputError, applyConfigPatch, emptyOverlay, parseConfigPatch } from './config-overlay.js';
import type { ControllerCore } from './controller-core.js';
import { parseFleetSpec } from './fleet-spec.js';

const MAX_ADMIN_BODY = 512 * 1024 * 1024;

class AdminHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export function createAdminServer(core: ControllerCore): Server {
  return createServer((req, res) => {
    readBody(req)
      .then((body) => {
        const { status, json } = route(core, req.method ?? 'GET', req.url ?? '/', body);
        sendJson(res, status, json);
      })
      .catch((e: unknown) => {
        if (e instanceof AdminHttpError) sendJson(res, e.status, { error: e.message, ...(e.field ? { field: e.field } : {}) });
        else if (e instanceof AdminInputError) sendJson(res, 400, { error: e.message, field: e.field });
        else sendJson(res, 500, { error: `internal error: ${(e as Error).message}` });
      });
  });
}

function route(core: ControllerCore, method: string, url: string, body: Buffer): { status: number; json: unknown } {
  const u = new URL(url, 'http://admin');
  const parts = u.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 'admin') throw new AdminHttpError(404, `no admin endpoint ${u.pathname}`);
  const [, what, id, sub] = parts;
  const reg = core.registry;

  if (what === 'stats' && parts.length === 2 && method === 'GET') {
    return ok({
      ...core.stats.toJSON(),
      attestation: core.stats.attestation.toJSON(reg.devices()),
      byApi: { v1: core.apiStats.v1.toJSON(), v2: core.apiStats.v2.toJSON() },
      // TCP connections of each device-API listener: opened, open now, most at once.
      connections: { v1: core.connections.v1.toJSON(), v2: core.connections.v2.toJSON() },
      threadId,
      devices: reg.size,
      maintenance: core.switches.maintenance,
      serveCerts: core.switches.serveCerts,
      ...(core.sink ? { sink: { verifySample: core.options.sink!.verifySample, ...core.sink.counts } } : {}),
    });
  }
  if (what === 'devices') {
    if (parts.length === 2 && method === 'GET') {
      const offset = intParam(u, 'offset', 0);
      const limit = intParam(u, 'limit', Number.MAX_SAFE_INTEGER);
      const out: unknown[] = [];
      let i = 0;
      for (const d of reg.devices()) {
        if (i++ < offset) continue;
        if (out.length >= limit) break;
        out.push(d.summary());
      }
      return ok({ total: reg.size, offset, devices: out });
    }
    const dev = id === undefined ? undefined : reg.find(id);
    if (!dev) throw new AdminHttpError(404, `no device with UUID or serial "${id}"`, 'id');
    if (parts.length === 3 && method === 'GET') return ok({ ...dev.toJSON(), currentConfigHash: core.configs.currentHash(dev) });
    if (parts.length === 4 && sub === 'config') {
      if (method === 'GET') {
        const built = core.configs.build(dev);
        return ok({ configHash: built.hash, config: Msg.EdgeDevConfig.toJSON(built.config) });
      }
      if (method === 'PATCH') {
        const patch = parseConfigPatch(parseJson(body), dev.group.appNames);
        dev.overlay ??= emptyOverlay();
        applyConfigPatch(dev.overlay, patch);
        core.store?.deviceOverlayChanged(dev.uuid, dev.overlay);
        return ok({ uuid: dev.uuid, configHash: core.configs.currentHash(dev) });
      }
    }
  }
  if (what === 'groups' && parts.length === 4 && sub === 'config' && method === 'PATCH') {
    const group = reg.group(id!);
    if (!group) throw new AdminHttpError(404, `no group named "${id}"`, 'name');
    const patch = parseConfigPatch(parseJson(body), group.appNames);
    applyConfigPatch(group.overlay, patch);
    core.store?.groupOverlayChanged(group.name, group.overlay);
    return ok({ group: group.name, version: group.overlay.version });
  }
  if (what === 'fleet' && parts.length === 2) {
    if (method === 'GET') {
      const counts = new Map<string, number>();
      for (const d of reg.devices()) counts.set(d.group.name, (counts.get(d.group.name) ?? 0) + 1);
      return ok({ groups: reg.allGroups().map((g) => ({ name: g.name, apps: g.spec.apps.map((a) => a.name), devices: counts.get(g.name) ?? 0 })) });
    }
    if (method === 'PUT') return ok(reg.setFleet(parseFleetSpec(parseJson(body))));
    if (method === 'PATCH') return ok(reg.mergeFleet(parseFleetSpec(parseJson(body))));
  }
  if ((what === 'maintenance' || what === 'certs') && parts.length === 2 && method === 'POST') {
    const b = parseJson(body);
    const enabled = (b as { enabled?: unknown } | null)?.enabled;
    if (typeof enabled !== 'boolean') throw new AdminHttpError(400, 'enabled: must be true or false', 'enabled');
    if (what === 'maintenance') core.switches.maintenance = enabled;
    else core.switches.serveCerts = enabled;
    return ok({ maintenance: core.switches.maintenance, serveCerts: core.switches.serveCerts });
  }
  throw new AdminHttpError(404, `no admin endpoint ${method} ${u.pathname}`);
}

const ok = (json: unknown) => ({ status: 200, json });

function intParam(u: URL, name: string, dflt: number): number {
  const v = u.searchParams.get(name);
  if (v === null) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new AdminHttpError(400, `${name}: must be a non-negative integer`, name);
  return n;
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw new AdminHttpError(400, 'body: missing JSON body', 'body');
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw new AdminHttpError(400, `body: not JSON (${(e as Error).message})`, 'body');
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return readLimitedBody(req, MAX_ADMIN_BODY, () => new AdminHttpError(413, `body: larger than ${MAX_ADMIN_BODY} bytes`, 'body'));
}

