// Which controller endpoint a request path names. Both spellings of the prefix are served
// (`edgeDevice` as the document writes it, `edgedevice` as EVE sends it), plus the device-scoped
// app log paths EVE and Adam use (eve-wire-facts §15.1 #2, #3) and the document's unscoped ones.

import type { EndpointKey } from '../../protocol/endpoints.js';

export interface Route {
  endpoint: EndpointKey;
  /** `{uuid}` from `/id/{uuid}/...`, when the path is device-scoped. */
  deviceUuid?: string;
  /** `{app-instance-uuid}` for app log paths. */
  appUuid?: string;
}

const PREFIXES = ['/api/v2/edgedevice/', '/api/v2/edgeDevice/'];

/** Actions of a registered device, under `id/{uuid}/` (v2) or directly after the prefix (v1). */
export const DEVICE_ACTIONS: Record<string, EndpointKey> = {
  config: 'config',
  attest: 'attest',
  info: 'info',
  metrics: 'metrics',
  logs: 'logs',
  newlogs: 'newlogs',
  flowlog: 'flowlog',
};

/** The path segments after one of `prefixes` (query ignored), or undefined when none matches or a segment is empty. */
export function pathSegments(rawPath: string, prefixes: readonly string[]): string[] | undefined {
  const q = rawPath.indexOf('?');
  const path = q < 0 ? rawPath : rawPath.slice(0, q);
  const prefix = prefixes.find((p) => path.startsWith(p));
  if (!prefix) return undefined;
  const parts = path.slice(prefix.length).split('/');
  return parts.some((p) => p.length === 0) ? undefined : parts;
}

/** The route for method + path, or undefined (→ 404). */
export function matchRoute(method: string, rawPath: string): Route | undefined {
  const parts = pathSegments(rawPath, PREFIXES);
  if (!parts) return undefined;

  if (parts.length === 1) {
    const [action] = parts;
    if (action === 'ping') return method === 'GET' ? { endpoint: 'ping' } : undefined;
    // Adam answers certs on GET and POST; EVE uses GET.
    if (action === 'certs') return method === 'GET' || method === 'POST' ? { endpoint: 'certs' } : undefined;
    if (method !== 'POST') return undefined;
    if (action === 'register') return { endpoint: 'register' };
    if (action === 'uuid') return { endpoint: 'uuid' };
    return undefined;
  }
  if (method !== 'POST') return undefined;

  // Document form: apps/instanceid/{app}/logs | newlogs
  if (parts.length === 4 && parts[0] === 'apps' && parts[1] === 'instanceid') {
    return appRoute(parts[3]!, parts[2]!, undefined);
  }
  if (parts[0] !== 'id') return undefined;
  const deviceUuid = parts[1]!;
  if (parts.length === 3) {
    const endpoint = DEVICE_ACTIONS[parts[2]!];
    return endpoint ? { endpoint, deviceUuid } : undefined;
  }
  // EVE / Adam: id/{uuid}/apps/instanceid/{app}/newlogs (and logs, by symmetry)
  if (parts.length === 6 && parts[2] === 'apps' && parts[3] === 'instanceid') {
    return appRoute(parts[5]!, parts[4]!, deviceUuid);
  }
  // Adam's protobuf app log route: id/{uuid}/apps/instances/id/{app}/logs
  if (parts.length === 7 && parts[2] === 'apps' && parts[3] === 'instances' && parts[4] === 'id' && parts[6] === 'logs') {
    return { endpoint: 'applogs', deviceUuid, appUuid: parts[5]! };
  }
  return undefined;
}

function appRoute(action: string, appUuid: string, deviceUuid: string | undefined): Route | undefined {
  if (action === 'logs') return { endpoint: 'applogs', deviceUuid, appUuid };
  if (action === 'newlogs') return { endpoint: 'appnewlogs', deviceUuid, appUuid };
  return undefined;
}
