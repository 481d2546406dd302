// ConfigResponse bytes around an EdgeDevConfig that is already encoded, and the configHash form.
// ConfigResponse{config=1, configHash=2}: an embedded message is a length-delimited field, so the
// exact bytes the hash was taken over are spliced in instead of being decoded and encoded again.

import { createHash } from 'node:crypto';
import protobuf from 'protobufjs';

export function configResponseAround(encodedConfig: Uint8Array, hash: string): Uint8Array {
  return protobuf.Writer.create().uint32((1 << 3) | 2).bytes(encodedConfig).uint32((2 << 3) | 2).string(hash).finish();
}

/** base64url (with padding, as Adam writes it) of SHA-256 over the encoded EdgeDevConfig. */
export function configHashOfBytes(encodedConfig: Uint8Array): string {
  return createHash('sha256').update(encodedConfig).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
}
