// The on-disk layout of a `--record DIR` recording, shared by the writer and the reader.
// Full description: RECORD-FORMAT.md next to this file.
//
//   DIR/meta.json      { format: "evesim-record", version: 1, createdAt, closedAt?, exchanges, dropped, ... }
//   DIR/index.ndjson   one RecordIndexEntry per line, in completion order
//   DIR/bodies.bin     raw request and response bodies back to back, no separators; an index entry
//                      points into it with (reqOff, reqLen) and (resOff, resLen)
//
// Bodies are written before the index lines that point at them, so even a recording cut short by
// a crash never has an index line whose bodies are missing (at most a partial last line, which
// readers ignore).

import type { RequestEndpointKey } from '../device/ports.js';

export const RECORD_FORMAT = 'evesim-record';
export const RECORD_VERSION = 1;
export const META_FILE = 'meta.json';
export const INDEX_FILE = 'index.ndjson';
export const BODIES_FILE = 'bodies.bin';
/** Hex characters of SHA-256 kept per body: 64 bits, plenty to catch a misplaced offset. */
export const SHA_PREFIX_CHARS = 16;

/** One line of index.ndjson. Times are clock milliseconds (epoch ms in real runs). */
export interface RecordIndexEntry {
  /** Order in which the writer saw the exchange, from 0. Gaps = exchanges dropped (see meta). */
  seq: number;
  /** Device index within the fleet. */
  device: number;
  endpoint: RequestEndpointKey;
  method: 'GET' | 'POST';
  /** Path and query as the device asked for it (without the base URL). */
  path: string;
  /** HTTP status, or 0 when no HTTP answer came. */
  status: number;
  /** TransportError code when status is 0: 'timeout', 'ECONNREFUSED', ... */
  error?: string;
  dueAt: number;
  sentAt: number;
  doneAt: number;
  /** doneAt - dueAt: what the run's latency histograms count. */
  latencyMs: number;
  reqOff: number;
  reqLen: number;
  /** First 16 hex chars of SHA-256 of the request body; absent when reqLen is 0. */
  reqSha256?: string;
  resOff: number;
  resLen: number;
  resSha256?: string;
  reqHeaders: Record<string, string>;
  /** Absent when no HTTP answer came. */
  resHeaders?: Record<string, string | string[] | undefined>;
}

export interface RecordMeta {
  format: typeof RECORD_FORMAT;
  version: number;
  createdAt: string;
  /** Set by a clean close; absent if the run died before closing the recording. */
  closedAt?: string;
  /** Exchanges written (index lines). */
  exchanges: number;
  /** Exchanges seen but not written because the write backlog was full or a write failed. */
  dropped: number;
  bodyBytes: number;
  indexBytes: number;
  /** First write error, if any (recording stopped there). */
  writeError?: string;
}
