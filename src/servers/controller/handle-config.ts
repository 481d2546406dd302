// POST /id/{uuid}/config. The integrity token from the last successful attestation is required
// (403 when missing or different, as the document and Adam do). A request hash equal to the
// current one gets 304 without a body (Adam; EVE treats it as "unchanged") or, with
// unchangedConfigReply 'hash-only', the document's form: 200 + ConfigResponse with only configHash.

import protobuf from 'protobufjs';
import type { config } from '../../gen/eve-types.js';
import { bytesEqual } from '../../protocol/cert-hash.js';
import { Msg } from '../../protocol/messages.js';
import { PROTO_MIME, type ControllerContext, type Reply, type RequestState } from './controller-context.js';
import { authenticateDevice } from './device-auth.js';
import { forbidden, unprocessable } from './http-error.js';

export function handleConfig(ctx: ControllerContext, req: RequestState): Reply {
  const { device, payload } = authenticateDevice(ctx, req);
  let creq: config.ConfigRequest;
  try {
    creq = Msg.ConfigRequest.decode(payload);
  } catch (e) {
    throw unprocessable(`payload is not a ConfigRequest: ${(e as Error).message}`);
  }
  const stored = device.attest?.integrityToken;
  const sent = creq.integrity_token;
  if (!stored) throw forbidden('attestation required: this device has no integrity token yet');
  if (!sent || sent.length === 0) throw forbidden('attestation required: ConfigRequest has no integrity_token');
  if (!bytesEqual(sent, stored)) throw forbidden('integrity_token mismatch: attest again for the current token');

  const requested = creq.configHash ?? '';
  device.lastRequestedConfigHash = requested || undefined;
  if (requested !== '' && requested === ctx.configs.currentHash(device)) {
    if (ctx.options.unchangedConfigReply === '304') return { status: 304 };
    const resp: config.ConfigResponse = { configHash: requested };
    return { status: 200, body: ctx.sealer.seal(Msg.ConfigResponse.encode(resp)), contentType: PROTO_MIME };
  }
  const kept = ctx.configReplies.get(device);
  if (kept) {
    device.lastServedConfigHash = kept.hash;
    return { status: 200, body: kept.body, contentType: PROTO_MIME };
  }
  const built = ctx.configs.build(device);
  device.lastServedConfigHash = built.hash;
  const body = ctx.sealer.seal(configResponseBytes(built.encoded, built.hash));
  ctx.configReplies.put(device, built.hash, body);
  return { status: 200, body, contentType: PROTO_MIME };
}

/**
 * ConfigResponse{config=1, configHash=2} from the already encoded config: an embedded message is a
 * length-delimited field, so the bytes the hash was taken over are spliced in instead of encoded twice.
 */
function configResponseBytes(encodedConfig: Uint8Array, hash: string): Uint8Array {
  return protobuf.Writer.create().uint32((1 << 3) | 2).bytes(encodedConfig).uint32((2 << 3) | 2).string(hash).finish();
}
