// Reads a `--record DIR` recording back (layout: record-format.ts, RECORD-FORMAT.md), streaming:
// index lines are parsed one at a time and each body is read from bodies.bin at its offset, so a
// recording of any size can be walked. Used by tests and by `evesim decode`.

import { hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { RequestEndpointKey } from '../device/ports.js';
import {
  BODIES_FILE,
  INDEX_FILE,
  META_FILE,
  RECORD_FORMAT,
  RECORD_VERSION,
  SHA_PREFIX_CHARS,
  type RecordIndexEntry,
  type RecordMeta,
} from './record-format.js';

/** One recorded exchange with its bodies, named like RequestOutcome. */
export interface RecordedExchange {
  seq: number;
  deviceIndex: number;
  endpoint: RequestEndpointKey;
  method: 'GET' | 'POST';
  path: string;
  status: number;
  error?: string;
  dueAt: number;
  sentAt: number;
  doneAt: number;
  latencyMs: number;
  requestHeaders: Record<string, string>;
  responseHeaders?: Record<string, string | string[] | undefined>;
  requestBody: Uint8Array;
  responseBody: Uint8Array;
}

export interface ReadRecordingOptions {
  /** Check each body against its sha256 prefix. Default true. */
  verify?: boolean;
}

export async function readRecordingMeta(dir: string): Promise<RecordMeta> {
  const file = path.join(dir, META_FILE);
  let meta: RecordMeta;
  try {
    meta = JSON.parse(await readFile(file, 'utf8')) as RecordMeta;
  } catch (err) {
    throw new Error(`${file}: not a readable evesim recording: ${(err as Error).message}`, { cause: err });
  }
  if (meta.format !== RECORD_FORMAT) throw new Error(`${file}: format is ${JSON.stringify(meta.format)}, expected "${RECORD_FORMAT}"`);
  if (meta.version !== RECORD_VERSION) throw new Error(`${file}: version ${meta.version} is not supported (this evesim reads version ${RECORD_VERSION})`);
  return meta;
}

/** Yields every exchange of the recording in DIR, in recorded order, with its bodies. */
export async function* readRecording(dir: string, opts: ReadRecordingOptions = {}): AsyncGenerator<RecordedExchange> {
  await readRecordingMeta(dir);
  const verify = opts.verify ?? true;
  const indexFile = path.join(dir, INDEX_FILE);
  const bodiesFile = path.join(dir, BODIES_FILE);
  const bodies = await open(bodiesFile, 'r');
  try {
    const bodiesSize = (await bodies.stat()).size;
    let lineNo = 0;
    for await (const line of completeLines(indexFile)) {
      lineNo++;
      if (line.length === 0) continue;
      const where = `${indexFile} line ${lineNo}`;
      let e: RecordIndexEntry;
      try {
        e = JSON.parse(line) as RecordIndexEntry;
      } catch (err) {
        throw new Error(`${where}: not JSON: ${(err as Error).message}`, { cause: err });
      }
      checkEntry(e, where);
      const requestBody = await readBody(bodies, bodiesSize, e.reqOff, e.reqLen, `${where} request body`);
      const responseBody = await readBody(bodies, bodiesSize, e.resOff, e.resLen, `${where} response body`);
      if (verify) {
        checkSha(requestBody, e.reqSha256, `${where} request body`);
        checkSha(responseBody, e.resSha256, `${where} response body`);
      }
      const x: RecordedExchange = {
        seq: e.seq,
        deviceIndex: e.device,
        endpoint: e.endpoint,
        method: e.method,
        path: e.path,
        status: e.status,
        dueAt: e.dueAt,
        sentAt: e.sentAt,
        doneAt: e.doneAt,
        latencyMs: e.latencyMs,
        requestHeaders: e.reqHeaders ?? {},
        requestBody,
        responseBody,
      };
      if (e.error !== undefined) x.error = e.error;
      if (e.resHeaders !== undefined) x.responseHeaders = e.resHeaders;
      yield x;
    }
  } finally {
    await bodies.close();
  }
}

/** Newline-terminated lines only: a partial last line (run died mid-write) is ignored. */
async function* completeLines(file: string): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
    const text = rest + (chunk as string);
    let start = 0;
    for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
      yield text.slice(start, nl);
      start = nl + 1;
    }
    rest = text.slice(start);
  }
}

function checkEntry(e: RecordIndexEntry, where: string): void {
  for (const k of ['seq', 'device', 'status', 'dueAt', 'sentAt', 'doneAt', 'reqOff', 'reqLen', 'resOff', 'resLen'] as const) {
    if (typeof e[k] !== 'number') throw new Error(`${where}: field "${k}" missing or not a number`);
  }
  for (const k of ['endpoint', 'method', 'path'] as const) {
    if (typeof e[k] !== 'string') throw new Error(`${where}: field "${k}" missing or not a string`);
  }
}

async function readBody(
  fh: Awaited<ReturnType<typeof open>>,
  fileSize: number,
  off: number,
  len: number,
  where: string,
): Promise<Uint8Array> {
  if (len === 0) return new Uint8Array(0);
  if (off < 0 || off + len > fileSize) {
    throw new Error(`${where}: bytes ${off}..${off + len} lie outside ${BODIES_FILE} (${fileSize} bytes)`);
  }
  const buf = Buffer.allocUnsafe(len);
  let got = 0;
  while (got < len) {
    const { bytesRead } = await fh.read(buf, got, len - got, off + got);
    if (bytesRead === 0) throw new Error(`${where}: ${BODIES_FILE} ended after ${got} of ${len} bytes`);
    got += bytesRead;
  }
  return buf;
}

function checkSha(body: Uint8Array, expected: string | undefined, where: string): void {
  if (body.byteLength === 0) return;
  const actual = hash('sha256', body, 'hex').slice(0, SHA_PREFIX_CHARS);
  if (expected !== actual) {
    throw new Error(`${where}: sha256 prefix ${actual} does not match the index (${expected ?? 'missing'}); the recording is damaged`);
  }
}
