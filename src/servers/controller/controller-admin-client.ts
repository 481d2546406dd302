// Client of the controller's admin API (admin-api.ts), for the runner and tests. Uses undici with
// one small keep-alive pool; every call resolves with the parsed JSON or rejects with
// AdminClientError carrying the status and the server's {error, field}.

import { Pool } from 'undici';
import type { ConfigPatch } from './config-overlay.js';
import type { FleetSpec } from './fleet-spec.js';

export class AdminClientError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'AdminClientError';
  }
}

export class ControllerAdminClient {
  private readonly pool: Pool;

  constructor(readonly adminUrl: string) {
    this.pool = new Pool(adminUrl, { connections: 2 });
  }

  stats(): Promise<Record<string, unknown>> {
    return this.call('GET', '/admin/stats');
  }

  devices(page: { offset?: number; limit?: number } = {}): Promise<{ total: number; offset: number; devices: Record<string, unknown>[] }> {
    const q = new URLSearchParams();
    if (page.offset !== undefined) q.set('offset', String(page.offset));
    if (page.limit !== undefined) q.set('limit', String(page.limit));
    return this.call('GET', `/admin/devices${q.size ? `?${q}` : ''}`);
  }

  /** One device by UUID or serial. */
  device(id: string): Promise<Record<string, unknown>> {
    return this.call('GET', `/admin/devices/${encodeURIComponent(id)}`);
  }

  /** The EdgeDevConfig a device is served (proto3 JSON) and its hash. */
  deviceConfig(id: string): Promise<{ configHash: string; config: Record<string, unknown> }> {
    return this.call('GET', `/admin/devices/${encodeURIComponent(id)}/config`);
  }

  setFleet(fleet: FleetSpec): Promise<{ groups: number; devices: number; preRegistered: number }> {
    return this.call('PUT', '/admin/fleet', fleet);
  }

  /** PATCH /admin/fleet: adds the groups it lacks and the devices to the fleet (DeviceRegistry.mergeFleet). */
  mergeFleet(fleet: FleetSpec): Promise<{ groups: number; devices: number; preRegistered: number }> {
    return this.call('PATCH', '/admin/fleet', fleet);
  }

  fleet(): Promise<{ groups: { name: string; apps: string[]; devices: number }[] }> {
    return this.call('GET', '/admin/fleet');
  }

  patchDevice(id: string, patch: ConfigPatch): Promise<{ uuid: string; configHash: string }> {
    return this.call('PATCH', `/admin/devices/${encodeURIComponent(id)}/config`, patch);
  }

  patchGroup(name: string, patch: ConfigPatch): Promise<{ group: string; version: number }> {
    return this.call('PATCH', `/admin/groups/${encodeURIComponent(name)}/config`, patch);
  }

  setMaintenance(enabled: boolean): Promise<{ maintenance: boolean; serveCerts: boolean }> {
    return this.call('POST', '/admin/maintenance', { enabled });
  }

  setServeCerts(enabled: boolean): Promise<{ maintenance: boolean; serveCerts: boolean }> {
    return this.call('POST', '/admin/certs', { enabled });
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async call<T>(method: 'GET' | 'PUT' | 'PATCH' | 'POST', path: string, body?: unknown): Promise<T> {
    const res = await this.pool.request({
      method,
      path,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new AdminClientError(res.statusCode, `${method} ${path}: answer is not JSON (status ${res.statusCode}): ${text.slice(0, 200)}`);
    }
    if (res.statusCode !== 200) {
      const e = json as { error?: string; field?: string };
      throw new AdminClientError(res.statusCode, `${method} ${path}: ${e.error ?? `status ${res.statusCode}`}`, e.field);
    }
    return json as T;
  }
}
