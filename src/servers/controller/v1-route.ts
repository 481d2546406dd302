// Which endpoint a controller API v1 path names (docs/interfaces.md, eve-wire-facts §12).
// Both spellings of the prefix are served (`edgeDevice` as the document's headings write it,
// `edgedevice` as Adam routes it). Besides the document's paths, Adam's v1 forms are accepted:
// `apps/instances/id/{app}/logs`, `apps/instanceid/id/{app}/newlogs`, `/newlogs` and `/uuid`; and
// `id/{uuid}/<action>` as the document writes attest (for every device action, like v2).

import { DEVICE_ACTIONS, pathSegments, type Route } from './route.js';

export interface V1Route extends Route {
  /** GET /config: the deprecated form that answers the bare EdgeDevConfig. */
  getConfig?: boolean;
}

const PREFIXES = ['/api/v1/edgedevice/', '/api/v1/edgeDevice/'];

/** POST actions of a registered device, with or without `id/{uuid}/` before them (same as v2's). */
const DEVICE_POSTS = DEVICE_ACTIONS;

/** The route for method + path, or undefined (→ 404). */
export function matchV1Route(method: string, rawPath: string): V1Route | undefined {
  const parts = pathSegments(rawPath, PREFIXES);
  if (!parts) return undefined;

  if (parts.length === 1) {
    const [action] = parts as [string];
    if (method === 'GET') {
      if (action === 'ping') return { endpoint: 'ping' };
      if (action === 'certs') return { endpoint: 'certs' };
      if (action === 'config') return { endpoint: 'config', getConfig: true };
      return undefined;
    }
    if (method !== 'POST') return undefined;
    if (action === 'register') return { endpoint: 'register' };
    if (action === 'uuid') return { endpoint: 'uuid' };
    const endpoint = DEVICE_POSTS[action];
    return endpoint ? { endpoint } : undefined;
  }
  if (method !== 'POST') return undefined;

  if (parts[0] === 'apps') return appRoute(parts.slice(1), undefined);
  if (parts[0] !== 'id' || parts.length < 3) return undefined;
  const deviceUuid = parts[1]!;
  if (parts.length === 3) {
    const endpoint = DEVICE_POSTS[parts[2]!];
    return endpoint ? { endpoint, deviceUuid } : undefined;
  }
  if (parts[2] === 'apps') return appRoute(parts.slice(3), deviceUuid);
  return undefined;
}

/**
 * After `apps/`: `instances/{app}/logs` (document), `instances/id/{app}/logs` (Adam),
 * `instanceid/id/{app}/newlogs` (Adam), `instanceid/{app}/logs|newlogs` (the v2 document's form).
 */
function appRoute(rest: string[], deviceUuid: string | undefined): V1Route | undefined {
  const [kind, a, b, c] = rest;
  let appUuid: string | undefined;
  let action: string | undefined;
  if (rest.length === 3) [appUuid, action] = [a, b];
  else if (rest.length === 4 && a === 'id') [appUuid, action] = [b, c];
  else return undefined;
  if (kind === 'instances' && action === 'logs') return withDevice({ endpoint: 'applogs', appUuid: appUuid! }, deviceUuid);
  if (kind === 'instanceid' && action === 'logs') return withDevice({ endpoint: 'applogs', appUuid: appUuid! }, deviceUuid);
  if (kind === 'instanceid' && action === 'newlogs') return withDevice({ endpoint: 'appnewlogs', appUuid: appUuid! }, deviceUuid);
  return undefined;
}

function withDevice(r: V1Route, deviceUuid: string | undefined): V1Route {
  return deviceUuid === undefined ? r : { ...r, deviceUuid };
}
