// How a device speaks controller API v1 (docs/interfaces.md, eve-wire-facts §12) instead
// of v2. The device's parts describe every request in v2 terms (endpoint key, v2 path, payload);
// the sender asks this dialect what actually goes on the wire:
//   - paths under /api/v1/edgedevice/ (v1-endpoints.ts), no id/<uuid>/ except for attest;
//   - raw protobuf bodies, no AuthContainer, and raw answers (nothing to verify: TLS authenticated
//     the controller, the client certificate authenticates the device);
//   - which TLS client certificate the request needs: the onboarding certificate for register and
//     for ping before registration, the device certificate for everything else;
//   - optionally the deprecated GET /config, whose answer is a bare EdgeDevConfig: it is handed to
//     the config fetcher as a ConfigResponse carrying a hash computed here, so an unchanged
//     configuration is recognised as unchanged.

import type { ApiVersion } from '../../protocol/api-version.js';
import { configHashOfBytes, configResponseAround } from '../../protocol/config-response-bytes.js';
import type { EndpointKey } from '../../protocol/endpoints.js';
import { appUuidOfV2Path, deviceUuidOfV2Path, v1Path } from '../../protocol/v1-endpoints.js';
import type { ClientCertKind } from '../ports.js';

/** How a v1 device fetches its configuration: POST with ConfigRequest (default) or the deprecated GET. */
export type V1ConfigMethod = 'POST' | 'GET';

export interface V1WireRequest {
  method: 'GET' | 'POST';
  path: string;
  body: Uint8Array | undefined;
  clientCert: ClientCertKind;
}

export class ApiV1Dialect {
  readonly api: ApiVersion = 'v1';
  /**
   * Whether the controller knows this device's certificate: from the start for a pre-registered
   * device, else once POST /register answered 200 or 201. Kept across reboots, as EVE keeps its
   * onboarding state on /persist.
   */
  registered: boolean;

  constructor(
    readonly configMethod: V1ConfigMethod = 'POST',
    preRegistered = false,
  ) {
    this.registered = preRegistered;
  }

  /**
   * The wire form of a request the device's parts describe in v2 terms. A path that is already a
   * v1 path is kept (callers that know they speak v1, such as the UUID lookup).
   */
  request(endpoint: EndpointKey, method: 'GET' | 'POST', path: string, payload: Uint8Array | undefined): V1WireRequest {
    const wirePath = path.startsWith('/api/v1/') ? path : v1Path(endpoint, deviceUuidOfV2Path(path), appUuidOfV2Path(path));
    if (endpoint === 'config' && this.configMethod === 'GET') {
      return { method: 'GET', path: wirePath, body: undefined, clientCert: 'device' };
    }
    return { method, path: wirePath, body: payload, clientCert: this.clientCertFor(endpoint) };
  }

  /** Register always uses the onboarding certificate; ping does until the device is registered. */
  clientCertFor(endpoint: EndpointKey): ClientCertKind {
    if (endpoint === 'register') return 'onboarding';
    if (endpoint === 'ping' && !this.registered) return 'onboarding';
    return 'device';
  }

  /** Notes what an answer means for the dialect's own state. */
  onAnswer(endpoint: EndpointKey, status: number): void {
    if (endpoint === 'register' && (status === 200 || status === 201)) this.registered = true;
  }

  /**
   * The payload of a successful answer. v1 answers are the message itself; the deprecated GET
   * /config answers a bare EdgeDevConfig, returned here as ConfigResponse{config, configHash}.
   */
  payload(endpoint: EndpointKey, body: Uint8Array): Uint8Array {
    if (endpoint !== 'config' || this.configMethod !== 'GET') return body;
    // The hash is computed here (the usual form, only ever compared with hashes made here).
    return configResponseAround(body, configHashOfBytes(body));
  }
}
