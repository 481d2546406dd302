// The HTTP statuses the interface documents list for each endpoint (docs/interfaces.md, sections
// "Controller API v2 > Errors", "Controller API v1 > Errors" and "Local profile server v1 >
// Endpoints / Errors", which summarise controller-api-v2, controller-api-v1 and
// local-profile-server-v1). An answer with a status the document does not list for its endpoint
// is a finding of its own kind, 'undocumented-status' (e.g. 404 on config), apart from the errors
// the document foresees (e.g. 403 on config after a failed attestation), which are only counted.

import type { ApiLabel } from './api-version.js';

/** The document each interface label is judged by (the name docs/interfaces.md gives it). */
export const STATUS_DOCUMENT: Readonly<Record<ApiLabel, string>> = {
  v2: 'controller-api-v2',
  v1: 'controller-api-v1',
  lps: 'local-profile-server-v1',
};

/** Per endpoint key: the statuses the document lists, and those accepted beyond it (see ACCEPTED). */
interface EndpointStatuses {
  listed: readonly number[];
  accepted?: readonly number[];
}

/**
 * Controller API v2. Authentication rule 6 and the Errors table: failed authentication 401 (or
 * 400), no access 403 (or 400), on every endpoint; 503 "controller unavailable" on every endpoint.
 */
const V2_EVERY_ENDPOINT = [400, 401, 403, 503];

/**
 * Statuses accepted beyond the documents, each for a reason the project can cite:
 * - 304 on config: Adam (and the embedded controller by default) answers an unchanged config with
 *   304, and EVE treats it as success (eve-wire-facts §13.2, §13.3).
 * - 429 on ping and certs: the documents' Limits say the controller SHOULD rate-limit them and the
 *   device MUST back off, without naming the status; 429 Too Many Requests is that answer.
 * - 429 on newlogs: EVE's log uploader has a back-off mode for it (eve-wire-facts §8.3).
 */
const UNCHANGED = [304];
const RATE_LIMITED = [429];

const V2: Readonly<Record<string, EndpointStatuses>> = {
  // Endpoints table (success codes) and Errors table, controller-api-v2.
  register: { listed: [201, 200, 403, 409, 422] },
  ping: { listed: [200], accepted: RATE_LIMITED },
  config: { listed: [200, 400, 403], accepted: UNCHANGED },
  certs: { listed: [200, 404], accepted: RATE_LIMITED },
  attest: { listed: [201, 400, 422] },
  info: { listed: [201, 400, 422] },
  metrics: { listed: [201, 400, 422] },
  logs: { listed: [201, 400, 422] },
  applogs: { listed: [201, 400, 422] },
  newlogs: { listed: [201, 400, 422], accepted: RATE_LIMITED },
  appnewlogs: { listed: [201, 400, 422], accepted: RATE_LIMITED },
  flowlog: { listed: [201, 400, 422] },
  uuid: { listed: [200, 400] },
};

/** Controller API v1. Authentication rule 5: 401 without a valid client certificate, 403 without access. */
const V1_EVERY_ENDPOINT = [401, 403];

const V1: Readonly<Record<string, EndpointStatuses>> = {
  // Endpoints table (success codes) and Errors table, controller-api-v1. The document has no
  // uuid, newlogs or app newlogs endpoint: requests to them are not judged.
  register: { listed: [201, 200, 403, 409, 422] },
  ping: { listed: [200], accepted: RATE_LIMITED },
  config: { listed: [200, 400], accepted: UNCHANGED },
  certs: { listed: [200, 404] },
  attest: { listed: [201, 400, 422] },
  info: { listed: [201, 400, 422] },
  metrics: { listed: [201, 400, 422] },
  logs: { listed: [201, 400, 422] },
  applogs: { listed: [201, 400, 422] },
  flowlog: { listed: [201, 400, 422] },
};

const LPS: Readonly<Record<string, EndpointStatuses>> = {
  // Endpoints table and Errors, local-profile-server-v1: 404 means "not implemented" (and, for
  // appinfo, devinfo and location, "throttled or cancelled"). appbootinfo and network are EVE's
  // own additions the document does not describe: not judged.
  'lps.local_profile': { listed: [200, 404] },
  'lps.radio': { listed: [200, 204, 404] },
  'lps.appinfo': { listed: [200, 204, 404] },
  'lps.devinfo': { listed: [200, 204, 404] },
  'lps.location': { listed: [200, 404] },
};

const TABLES: Readonly<Record<ApiLabel, { every: readonly number[]; byEndpoint: Readonly<Record<string, EndpointStatuses>> }>> = {
  v2: { every: V2_EVERY_ENDPOINT, byEndpoint: V2 },
  v1: { every: V1_EVERY_ENDPOINT, byEndpoint: V1 },
  lps: { every: [], byEndpoint: LPS },
};

/** The statuses listed for an endpoint (its own and those of every endpoint), ascending; undefined when the document does not describe it. */
export function listedStatuses(api: ApiLabel, endpoint: string): readonly number[] | undefined {
  const t = TABLES[api];
  const e = t.byEndpoint[endpoint];
  return e ? [...new Set([...e.listed, ...t.every])].sort((a, b) => a - b) : undefined;
}

/** True unless the document describes the endpoint and neither lists nor accepts `status` for it. */
export function isDocumentedStatus(api: ApiLabel, endpoint: string, status: number): boolean {
  const t = TABLES[api];
  const e = t.byEndpoint[endpoint];
  if (!e) return true;
  return e.listed.includes(status) || t.every.includes(status) || (e.accepted?.includes(status) ?? false);
}

/** The finding's detail: what was answered, and what the document lists instead. */
export function undocumentedStatusDetail(api: ApiLabel, endpoint: string, status: number, method: string, path: string): string {
  const listed = listedStatuses(api, endpoint) ?? [];
  const accepted = TABLES[api].byEndpoint[endpoint]?.accepted ?? [];
  return (
    `${method} ${path} answered ${status}, a status ${STATUS_DOCUMENT[api]} does not list for ${endpoint} ` +
    `(it lists ${listed.join(', ')}${accepted.length > 0 ? `; also accepted: ${accepted.join(', ')}` : ''})`
  );
}
