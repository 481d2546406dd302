// The per-group controller API choices of a scenario: `api: v1 | v2`, how the group's devices
// connect (`connection: per-device | shared`) and, for v1, how they fetch their configuration
// (`v1Config: post | get`, GET being the deprecated form). Schema fragment, document type, the
// normalised fields and the one cross-field rule: API v1 is mutual TLS, so every device needs a
// connection of its own (with its own client certificate); only v2 groups may share a pool.

import type { IssueCollector } from '../issue-collector.js';
import type { GroupSpec } from '../scenario-types.js';

type Schema = Record<string, unknown>;

export const API_GROUP_PROPERTIES: Record<string, Schema> = {
  api: { enum: ['v1', 'v2'], expect: 'v1 (mutual TLS, older) or v2' },
  connection: {
    enum: ['per-device', 'shared'],
    expect: 'per-device (one keep-alive connection per device, as real devices) or shared (one pool per worker; v2 only)',
  },
  v1Config: { enum: ['post', 'get'], expect: 'post (ConfigRequest with configHash) or get (the deprecated GET /config)' },
};

export interface ApiGroupDocument {
  api?: 'v1' | 'v2';
  connection?: 'per-device' | 'shared';
  v1Config?: 'post' | 'get';
}

export type ApiGroupFields = Pick<GroupSpec, 'api' | 'connection' | 'v1ConfigMethod'>;

/** The group's API fields: v1 always connects per device; v2 shares a pool unless told (absent = shared). */
export function apiGroupFields(g: ApiGroupDocument): ApiGroupFields {
  const api = g.api ?? 'v2';
  if (api === 'v1') return { api, connection: 'per-device', v1ConfigMethod: g.v1Config === 'get' ? 'GET' : 'POST' };
  return g.connection === undefined ? { api } : { api, connection: g.connection };
}

/** Rules a schema cannot say. Runs on the plain document, so every access is guarded. */
export function checkApiChoices(doc: Record<string, unknown>, issues: IssueCollector): void {
  const groups = Array.isArray(doc.groups) ? doc.groups : [];
  groups.forEach((g: unknown, i) => {
    if (typeof g !== 'object' || g === null) return;
    const group = g as Record<string, unknown>;
    const api = group.api ?? 'v2';
    if (api === 'v1' && group.connection === 'shared') {
      issues.error(
        ['groups', i, 'connection'],
        'API v1 authenticates each device by its TLS client certificate, so its devices cannot share connections; use per-device (the default for v1)',
      );
    }
    if (api !== 'v1' && group.v1Config !== undefined) {
      issues.error(['groups', i, 'v1Config'], 'v1Config applies only to groups with api: v1', { at: 'key' });
    }
  });
  const target = doc.target;
  if (typeof target === 'object' && target !== null && typeof (target as Record<string, unknown>).v1Url === 'string') {
    const v1Url = (target as Record<string, string>).v1Url!;
    let ok = false;
    try {
      ok = new URL(v1Url).protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok) issues.error(['target', 'v1Url'], `must be an https:// URL (API v1 is mutual TLS), got "${v1Url}"`);
  }
}
