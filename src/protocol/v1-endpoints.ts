// How the logical endpoints are spelt on controller API v1 (docs/interfaces.md, eve-wire-
// facts §12). Devices use the lower-case prefix Adam routes (its router is case-sensitive; the
// document's headings write `edgeDevice`) and no `id/<uuid>/`: the mutual-TLS client certificate
// says who is asking. Two exceptions, each following the only source that has the endpoint:
//   - attest: only the document lists it for v1, as `id/{uuid}/attest`;
//   - app logs: Adam's routes `apps/instances/id/{app}/logs` and `apps/instanceid/id/{app}/newlogs`
//     (the document writes `apps/instances/{app}/logs`; the embedded controller accepts both).
// `/uuid` and the newlogs endpoints are Adam extensions of v1; the document has neither.

import type { EndpointKey } from './endpoints.js';

export const V1_PREFIX = '/api/v1/edgedevice';

/** Path of a v1 endpoint as a device sends it. `deviceUuid` only for attest, `appUuid` only for app logs. */
export function v1Path(endpoint: EndpointKey, deviceUuid?: string, appUuid?: string): string {
  switch (endpoint) {
    case 'attest':
      return `${V1_PREFIX}/id/${need(deviceUuid, endpoint, 'device UUID')}/attest`;
    case 'applogs':
      return `${V1_PREFIX}/apps/instances/id/${need(appUuid, endpoint, 'app instance UUID')}/logs`;
    case 'appnewlogs':
      return `${V1_PREFIX}/apps/instanceid/id/${need(appUuid, endpoint, 'app instance UUID')}/newlogs`;
    default:
      return `${V1_PREFIX}/${endpoint}`;
  }
}

/**
 * The app instance UUID inside a v2 app-log path (…/apps/instances/id/<app>/logs or
 * …/apps/instanceid/<app>/newlogs), so a v2-spelt request can be re-spelt for v1.
 */
export function appUuidOfV2Path(path: string): string | undefined {
  const m = /\/apps\/(?:instances\/id|instanceid)\/([^/]+)\/(?:logs|newlogs)$/.exec(path);
  return m?.[1];
}

/** The device UUID inside a v2 device-scoped path (…/id/<uuid>/…). */
export function deviceUuidOfV2Path(path: string): string | undefined {
  const m = /\/edgedevice\/id\/([^/]+)\//i.exec(path);
  return m?.[1];
}

function need(v: string | undefined, endpoint: EndpointKey, what: string): string {
  if (!v) throw new Error(`v1 endpoint ${endpoint} needs the ${what} to build its path`);
  return v;
}
