// Authenticates an enveloped device request: the sender is found by senderCertHash (SHA-256 of the
// device certificate DER, all 32 bytes) and the signature checked with the KeyObject made at
// registration. The path UUID, when there is one, must name that same device.

import type { ControllerContext, RequestState } from './controller-context.js';
import type { DeviceRecord } from './device-record.js';
import { certHashKey } from './device-registry.js';
import { openDeviceEnvelope } from './envelope-adapter.js';
import { badRequest, forbidden, unauthorized } from './http-error.js';

export interface AuthenticatedRequest {
  device: DeviceRecord;
  /** The inner message bytes (AuthBody.payload). */
  payload: Uint8Array;
}

/**
 * Order of checks: unknown path UUID → 400 (unknown device); missing/undecodable envelope → 422;
 * empty or unknown sender hash, bad signature → 401 (for /uuid, which has no path UUID, an unknown
 * sender is the document's "unknown device" → 400); path UUID of another device → 403.
 */
export function authenticateDevice(ctx: ControllerContext, req: RequestState): AuthenticatedRequest {
  const { route } = req;
  if (route.deviceUuid !== undefined && !ctx.registry.byDeviceUuid(route.deviceUuid)) {
    throw badRequest(`unknown device ${route.deviceUuid}`);
  }
  if (req.authenticated) {
    const device = req.authenticated;
    req.device = device;
    if (route.deviceUuid !== undefined && route.deviceUuid !== device.uuid) {
      throw forbidden(`device ${device.uuid} may not post for device ${route.deviceUuid}`);
    }
    return { device, payload: req.body };
  }
  const lookup = (hash: Uint8Array): DeviceRecord | undefined => {
    const d = ctx.registry.byCert(certHashKey(hash));
    if (d) req.device = d; // counted against the device even when the signature then fails
    return d;
  };
  const unknown = route.endpoint === 'uuid' ? (m: string) => badRequest(`unknown device: ${m}`) : unauthorized;
  const { payload, signer: device } = openDeviceEnvelope(req.body, lookup, unknown);
  if (route.deviceUuid !== undefined && route.deviceUuid !== device.uuid) {
    throw forbidden(`device ${device.uuid} may not post for device ${route.deviceUuid}`);
  }
  return { device, payload };
}
