// POST /uuid: the device learns its UUID (EVE's onboarding ends here). The document also names the
// registered name and enterprise; UuidResponse has no fields for them (uuid, manufacturer,
// product_name only), so they travel in EdgeDevConfig (device_name, enterprise_name) instead.

import type { uuid } from '../../gen/eve-types.js';
import { Msg } from '../../protocol/messages.js';
import { PROTO_MIME, type ControllerContext, type Reply, type RequestState } from './controller-context.js';
import { authenticateDevice } from './device-auth.js';
import { unprocessable } from './http-error.js';

export function handleUuid(ctx: ControllerContext, req: RequestState): Reply {
  const { device, payload } = authenticateDevice(ctx, req);
  try {
    Msg.UuidRequest.decode(payload);
  } catch (e) {
    throw unprocessable(`payload is not a UuidRequest: ${(e as Error).message}`);
  }
  const hw = device.group.spec.hardware;
  const resp: uuid.UuidResponse = { uuid: device.uuid, manufacturer: hw.manufacturer, product_name: hw.model };
  return { status: 200, body: ctx.sealer.seal(Msg.UuidResponse.encode(resp)), contentType: PROTO_MIME };
}
