// Logical endpoints of controller API v2 and how EVE spells their paths on the wire
// (eve-wire-facts §0, §8.2, §15.1): lower-case `edgedevice`, device-scoped calls under id/<uuid>/.

export const V2_PREFIX = '/api/v2/edgedevice';

export const ENDPOINT_KEYS = [
  'ping',
  'certs',
  'register',
  'uuid',
  'attest',
  'config',
  'info',
  'metrics',
  'logs',
  'newlogs',
  'applogs',
  'appnewlogs',
  'flowlog',
] as const;
export type EndpointKey = (typeof ENDPOINT_KEYS)[number];

/** Path of a v2 endpoint as real EVE sends it. `appUuid` only for applogs/appnewlogs. */
export function v2Path(endpoint: EndpointKey, deviceUuid?: string, appUuid?: string): string {
  switch (endpoint) {
    case 'ping':
    case 'certs':
    case 'register':
    case 'uuid':
      return `${V2_PREFIX}/${endpoint}`;
    case 'applogs':
      // Adam's protobuf app-log route (§15.1 #2); current EVE never uses it.
      return `${V2_PREFIX}/id/${need(deviceUuid, endpoint)}/apps/instances/id/${need(appUuid, endpoint)}/logs`;
    case 'appnewlogs':
      return `${V2_PREFIX}/id/${need(deviceUuid, endpoint)}/apps/instanceid/${need(appUuid, endpoint)}/newlogs`;
    default:
      return `${V2_PREFIX}/id/${need(deviceUuid, endpoint)}/${endpoint}`;
  }
}

function need(v: string | undefined, endpoint: EndpointKey): string {
  if (!v) throw new Error(`endpoint ${endpoint} needs a UUID to build its path`);
  return v;
}
