// The endpoints an embedded LPS serves (docs/interfaces.md plus what EVE also calls,
// eve-wire-facts §11.2, §15.1 #7) and the admin names for them.

export const LPS_SERVED_ENDPOINTS = ['local_profile', 'radio', 'appinfo', 'devinfo', 'location', 'appbootinfo', 'network', 'signal'] as const;
export type LpsServedEndpoint = (typeof LPS_SERVED_ENDPOINTS)[number];

export const LPS_ENDPOINT_INDEX: Readonly<Record<LpsServedEndpoint, number>> = Object.fromEntries(
  LPS_SERVED_ENDPOINTS.map((e, i) => [e, i]),
) as Record<LpsServedEndpoint, number>;

/** Method each endpoint expects. */
export const LPS_ENDPOINT_METHOD: Readonly<Record<LpsServedEndpoint, 'GET' | 'POST'>> = {
  local_profile: 'GET',
  radio: 'POST',
  appinfo: 'POST',
  devinfo: 'POST',
  location: 'POST',
  appbootinfo: 'POST',
  network: 'POST',
  signal: 'GET',
};

export const PROTO_MIME = 'application/x-proto-binary';
export const NDJSON_MIME = 'application/x-ndjson';

/** Endpoint of a request path ('/api/v1/radio?x' → 'radio'), or undefined. */
export function lpsEndpointOf(url: string): LpsServedEndpoint | undefined {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!path.startsWith('/api/v1/')) return undefined;
  const name = path.slice('/api/v1/'.length).replace(/\/+$/, '');
  return (LPS_SERVED_ENDPOINTS as readonly string[]).includes(name) ? (name as LpsServedEndpoint) : undefined;
}

export function isLpsEndpoint(x: unknown): x is LpsServedEndpoint {
  return typeof x === 'string' && (LPS_SERVED_ENDPOINTS as readonly string[]).includes(x);
}
