// Which HTTP statuses the interface documents (controller-api-v2 "Errors", §13.2, §13.3) allow per
// endpoint. Anything else is a conformance finding ("unexpected-status"); the device still reacts
// to it the way EVE would.

import type { EndpointKey } from '../../protocol/endpoints.js';

/** Allowed on every endpoint: authentication failures (400/401/403) and "unavailable" (503). */
const COMMON = [400, 401, 403, 503];

const BY_ENDPOINT: Record<EndpointKey, readonly number[]> = {
  ping: [200, 429],
  certs: [200, 404, 429],
  register: [200, 201, 409, 422],
  uuid: [200],
  config: [200, 304, 404],
  attest: [200, 201, 422],
  info: [200, 201, 422],
  metrics: [200, 201, 422],
  logs: [200, 201, 422],
  applogs: [200, 201, 422],
  // EVE's uploader also handles 429 back-off for newlogs (§8.3).
  newlogs: [200, 201, 422, 429],
  appnewlogs: [200, 201, 422, 429],
  flowlog: [200, 201, 422],
};

const ALLOWED: Record<EndpointKey, Set<number>> = Object.fromEntries(
  Object.entries(BY_ENDPOINT).map(([k, v]) => [k, new Set([...COMMON, ...v])]),
) as Record<EndpointKey, Set<number>>;

export function isDocumentedStatus(endpoint: EndpointKey, status: number): boolean {
  return ALLOWED[endpoint].has(status);
}
