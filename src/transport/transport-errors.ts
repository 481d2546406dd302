// Turns what undici and node:net/tls throw into the one error the device layer understands:
// TransportError(code) = "no HTTP answer came". Codes stay short and stable because they become
// metric labels and record fields: 'timeout', 'connect-timeout', 'ECONNREFUSED', 'ECONNRESET',
// 'body-too-large', 'closed', TLS verification codes such as 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'.
// Errors that mean our own request was malformed (a bug, not the network) are not converted.

import { TransportError } from '../device/ports.js';

/** undici codes that mean the request itself was wrong: rethrown as bugs, not as TransportError. */
const PROGRAMMING_ERRORS = new Set([
  'UND_ERR_INVALID_ARG',
  'UND_ERR_INVALID_RETURN_VALUE',
  'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_NOT_SUPPORTED',
]);

const CODE_MAP: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'connect-timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  UND_ERR_RES_EXCEEDED_MAX_SIZE: 'body-too-large',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'body-length-mismatch',
  UND_ERR_CLOSED: 'closed',
  UND_ERR_DESTROYED: 'closed',
  UND_ERR_ABORTED: 'aborted',
  UND_ERR_HEADERS_OVERFLOW: 'headers-too-large',
  ETIMEDOUT: 'connect-timeout',
};

/** The TransportError code for an error, or undefined when it is a programming error. */
export function transportErrorCode(err: unknown): string | undefined {
  if (err instanceof TransportError) return err.code;
  const code = errCode(err);
  if (code === undefined) return 'unknown';
  if (PROGRAMMING_ERRORS.has(code)) return undefined;
  // "other side closed": the server hung up mid-exchange; the socket's own code says how.
  if (code === 'UND_ERR_SOCKET') return errCode((err as { cause?: unknown }).cause) ?? 'ECONNRESET';
  if (code.startsWith('HPE_')) return 'bad-http';
  return CODE_MAP[code] ?? code;
}

/**
 * Wraps `err` as a TransportError whose message names the request (`what`, e.g.
 * "POST https://ctrl:443/api/v2/edgedevice/id/…/info (device 17, info)"). Programming errors come
 * back as a plain Error with the same context, so they surface as bugs.
 */
export function toTransportError(err: unknown, what: string): Error {
  if (err instanceof TransportError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  const code = transportErrorCode(err);
  if (code === undefined) {
    return new Error(`${what}: request rejected by the HTTP client (${errCode(err)}): ${detail}`, { cause: err });
  }
  const e = new TransportError(`${what}: no HTTP answer (${code}): ${detail}`, code);
  (e as { cause?: unknown }).cause = err;
  return e;
}

function errCode(err: unknown): string | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && code.length > 0 ? code : undefined;
}
