// Which controller API a request, a device group or a figure belongs to. v1 is the older mutual-TLS
// interface (docs/interfaces.md), v2 the enveloped one every current EVE speaks.

export const API_VERSIONS = ['v1', 'v2'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];

/**
 * The API of a request path: '/api/v1/...' is v1, everything else (the v2 paths EVE sends) v2.
 * Paths handed to a transport always start at '/api/' (a base URL's own prefix is added later).
 */
export function apiOfPath(path: string): ApiVersion {
  return path.startsWith('/api/v1/') ? 'v1' : 'v2';
}

/** What request figures are labelled with: the controller API, or 'lps' for local profile server requests. */
export type ApiLabel = ApiVersion | 'lps';
export const API_LABELS: readonly ApiLabel[] = ['v1', 'v2', 'lps'];

/** The label of a request: LPS endpoint keys start with 'lps.'; controller requests by their path. */
export function apiLabelOf(endpoint: string, path: string): ApiLabel {
  return endpoint.startsWith('lps.') ? 'lps' : apiOfPath(path);
}
