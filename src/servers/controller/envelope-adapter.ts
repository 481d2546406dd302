// Maps the envelope functions of src/protocol/envelope.ts onto the controller's status codes
// (controller-api-v2 Errors): an empty or undecodable body is 422 (missing or unprocessable body);
// an empty or unknown sender hash, an unusable onboarding certificate or a bad signature is 401.

import type { KeyObject } from 'node:crypto';
import { EnvelopeError, openRegisterRequest, openRequest, sealResponse, type RegisterEnvelope } from '../../protocol/envelope.js';
import { ControllerHttpError, unauthorized, unprocessable } from './http-error.js';

function toHttp(e: unknown): unknown {
  if (!(e instanceof EnvelopeError)) return e;
  return e.kind === 'bad-envelope' ? unprocessable(e.message) : unauthorized(e.message);
}

/**
 * Opens a device request. `lookup` finds the sender by SHA-256 of its certificate DER; unknown
 * senders get `unknownSender` (401, or 400 where the document calls it "unknown device").
 */
export function openDeviceEnvelope<S extends { publicKey: KeyObject }>(
  body: Uint8Array,
  lookup: (certDerHash: Uint8Array) => S | undefined,
  unknownSender: (message: string) => ControllerHttpError = unauthorized,
): { payload: Uint8Array; signer: S } {
  try {
    const opened = openRequest(body, lookup);
    return { payload: opened.payload, signer: opened.signer };
  } catch (e) {
    if (e instanceof EnvelopeError && e.kind === 'unknown-signer') throw unknownSender(e.message);
    throw toHttp(e);
  }
}

export function openRegisterEnvelope(body: Uint8Array): RegisterEnvelope {
  try {
    return openRegisterRequest(body);
  } catch (e) {
    throw toHttp(e);
  }
}

/** Seals response payloads: senderCertHash = SHA-256 over the signing PEM exactly as /certs serves it. */
export class ResponseSealer {
  constructor(
    private readonly signingKey: KeyObject,
    private readonly signingCertPemHash: Uint8Array,
  ) {}

  seal(payload: Uint8Array): Uint8Array {
    return sealResponse(payload, this.signingKey, this.signingCertPemHash);
  }
}
