// The event log as EVE carries it in ZAttestQuote.tpm_binary_event_log: gzip of the raw binary log.
// EVE drops the log when the raw file exceeds 2 × 63488 bytes (tpm-facts §11), so a controller can
// refuse to inflate more than that — a bounded gunzip keeps a hostile device from sending a zip bomb.

import { gunzipSync, gzipSync } from 'node:zlib';

/** EVE's size limit for the raw binary log it is willing to send. */
export const EVE_MAX_RAW_EVENT_LOG = 2 * 63488;

export function gzipEventLog(raw: Uint8Array): Uint8Array {
  return new Uint8Array(gzipSync(raw));
}

/** Inflates a received log; throws an error naming `where` when it is not gzip or is too large. */
export function gunzipEventLog(gz: Uint8Array, where = 'tpm_binary_event_log', maxBytes = EVE_MAX_RAW_EVENT_LOG): Uint8Array {
  try {
    return new Uint8Array(gunzipSync(gz, { maxOutputLength: maxBytes }));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') throw new Error(`${where}: inflates to more than ${maxBytes} bytes`);
    throw new Error(`${where}: not a gzip stream (${(e as Error).message})`);
  }
}
