// A small client of an embedded LPS's JSON admin API (src/servers/lps/lps-admin-api.ts) for the
// runner: set profile, radio silence and throttling, issue app and device commands, read the
// command records. One keep-alive undici pool per LPS; errors name the site and the call.

import { Pool } from 'undici';

/** One command as GET /admin/commands lists it (server clock ms). */
export interface LpsCommandRecord {
  device: string;
  kind: 'app' | 'device';
  command: string;
  timestamp: number;
  issuedAt: number;
  completedAt: number | null;
}

/** Devices to address: UUIDs, or 'all' for every device the LPS has heard from. */
export type LpsDevices = readonly string[] | 'all';

export class LpsAdmin {
  private readonly pool: Pool;

  constructor(
    readonly site: string,
    readonly adminUrl: string,
  ) {
    this.pool = new Pool(adminUrl, { connections: 2 });
  }

  setProfile(profile: string): Promise<unknown> {
    return this.call('PUT', '/admin/profile', { profile });
  }

  setRadioSilence(radioSilence: boolean): Promise<unknown> {
    return this.call('PUT', '/admin/radio', { radioSilence });
  }

  setThrottle(endpoints: readonly string[]): Promise<unknown> {
    return this.call('PUT', '/admin/throttle', { endpoints });
  }

  appCommand(devices: LpsDevices, app: { name?: string; id?: string }, command: string): Promise<{ issued: unknown[] }> {
    return this.call('POST', '/admin/app-commands', { devices, app, command });
  }

  deviceCommand(devices: LpsDevices, command: string): Promise<{ issued: unknown[] }> {
    return this.call('POST', '/admin/device-commands', { devices, command });
  }

  async commands(): Promise<LpsCommandRecord[]> {
    return (await this.call<{ commands: LpsCommandRecord[] }>('GET', '/admin/commands')).commands;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async call<T>(method: 'GET' | 'PUT' | 'POST', path: string, body?: unknown): Promise<T> {
    let res;
    try {
      res = await this.pool.request({
        method,
        path,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new Error(`LPS ${this.site}: ${method} ${this.adminUrl}${path}: no answer (${(e as Error).message})`);
    }
    const text = await res.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`LPS ${this.site}: ${method} ${path}: answer is not JSON (status ${res.statusCode}): ${text.slice(0, 200)}`);
    }
    if (res.statusCode !== 200) {
      const e = json as { error?: string; field?: string };
      throw new Error(`LPS ${this.site}: ${method} ${path}: ${e.error ?? `status ${res.statusCode}`}${e.field ? ` (field ${e.field})` : ''}`);
    }
    return json as T;
  }
}
