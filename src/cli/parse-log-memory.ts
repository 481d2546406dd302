// --log-memory SIZE: how many compressed log bytes each device holds in memory while its files wait
// for upload; the rest waits in its worker's spill file under the state directory, as EVE keeps
// its log files on disk. A bare 0 keeps none in memory; other sizes need a unit (parse-bytes.ts).

import { BYTES_HINT, parseBytes } from '../scenario/parse-bytes.js';

/** Most a device may hold in memory: EVE's own on-device quota is far larger, but memory is the point. */
export const LOG_MEMORY_MAX_BYTES = 64 * 2 ** 20;

/** Bytes of a --log-memory value, or an Error naming the flag and what is wrong. */
export function parseLogMemory(text: string): number {
  const t = text.trim();
  if (t === '0') return 0;
  let bytes: number;
  try {
    bytes = parseBytes(t);
  } catch (e) {
    throw new Error(`--log-memory: ${(e as Error).message} (or 0 to keep every waiting log file on disk)`);
  }
  if (!Number.isInteger(bytes)) throw new Error(`--log-memory: "${t}" is not a whole number of bytes; expected ${BYTES_HINT}`);
  if (bytes > LOG_MEMORY_MAX_BYTES) throw new Error(`--log-memory: at most 64MiB per device, got ${t}`);
  return bytes;
}
