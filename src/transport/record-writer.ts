// `--record DIR`: a RequestObserver that appends every exchange of a run to DIR so a fleet bug
// can be inspected and its traffic decoded afterwards (record-reader.ts, record-decode.ts).
//
// Layout (record-format.ts, RECORD-FORMAT.md):
//   DIR/meta.json      format, version, counts; rewritten on close
//   DIR/index.ndjson   one JSON line per exchange: seq, device, endpoint, method, path, status,
//                      error, dueAt/sentAt/doneAt, latencyMs, body offsets/lengths/sha256 prefixes,
//                      request and response headers
//   DIR/bodies.bin     raw request and response bodies back to back
//
// Cheap on the hot path: onOutcome only queues references and one JSON line; a background flush
// writes bodies (writev, no copy) and then the index lines, one flush at a time, no fsync. Memory
// is bounded: when the backlog would exceed maxBufferedBytes the exchange is dropped and counted
// (meta.json `dropped`, and a gap in `seq`), because stalling the event loop would distort the
// very timings being recorded.

import { hash } from 'node:crypto';
import { mkdir, open, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { RequestObserver, RequestOutcome } from './request-observer.js';
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

export interface RecordWriterOptions {
  /** Most bytes (bodies + index lines) held in memory waiting for the disk. Default 64 MiB. */
  maxBufferedBytes?: number;
  /** Start a flush once this many bytes are waiting. Default 1 MiB. */
  flushBytes?: number;
  /** Flush whatever is waiting at least this often. Default 1000 ms. */
  flushIntervalMs?: number;
}

export interface RecordWriterStats {
  exchanges: number;
  dropped: number;
  bodyBytes: number;
  indexBytes: number;
  /** Bytes queued or being written now. */
  buffered: number;
  writeError?: string;
}

const EMPTY = new Uint8Array(0);

export class RecordWriter implements RequestObserver {
  private seq = 0;
  private written = 0;
  private dropped = 0;
  private bodyOffset = 0;
  private indexBytes = 0;
  private bodies: Uint8Array[] = [];
  private lines: string[] = [];
  private pendingBytes = 0;
  private writingBytes = 0;
  private flushing: Promise<void> | undefined;
  private writeError: Error | undefined;
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  private readonly maxBufferedBytes: number;
  private readonly flushBytes: number;

  private constructor(
    readonly dir: string,
    private readonly indexFh: FileHandle,
    private readonly bodiesFh: FileHandle,
    private readonly createdAt: string,
    opts: RecordWriterOptions,
  ) {
    this.maxBufferedBytes = opts.maxBufferedBytes ?? 64 * 1024 * 1024;
    this.flushBytes = opts.flushBytes ?? 1024 * 1024;
    this.timer = setInterval(() => {
      if (this.pendingBytes > 0) this.kick();
    }, opts.flushIntervalMs ?? 1000);
    this.timer.unref();
  }

  /** Creates DIR (if needed) and starts a recording. Refuses a DIR that already holds one. */
  static async open(dir: string, opts: RecordWriterOptions = {}): Promise<RecordWriter> {
    await mkdir(dir, { recursive: true });
    const createdAt = new Date().toISOString();
    let indexFh: FileHandle | undefined;
    try {
      // 'wx': never overwrite the evidence of an earlier run.
      indexFh = await open(path.join(dir, INDEX_FILE), 'wx');
      const bodiesFh = await open(path.join(dir, BODIES_FILE), 'wx');
      const w = new RecordWriter(dir, indexFh, bodiesFh, createdAt, opts);
      await w.writeMeta(undefined);
      return w;
    } catch (err) {
      await indexFh?.close();
      if ((err as { code?: string }).code === 'EEXIST') {
        throw new Error(`--record ${dir}: directory already holds a recording (${INDEX_FILE} or ${BODIES_FILE}); choose an empty directory`);
      }
      throw new Error(`--record ${dir}: cannot start recording: ${(err as Error).message}`, { cause: err });
    }
  }

  onOutcome(o: RequestOutcome): void {
    const seq = this.seq++;
    const req = o.requestBody ?? EMPTY;
    const res = o.responseBody ?? EMPTY;
    if (this.closed || this.writeError) {
      this.dropped++;
      return;
    }
    const entry: RecordIndexEntry = {
      seq,
      device: o.deviceIndex,
      endpoint: o.endpoint,
      method: o.method,
      path: o.path,
      status: o.status,
      dueAt: o.dueAt,
      sentAt: o.sentAt,
      doneAt: o.doneAt,
      latencyMs: o.doneAt - o.dueAt,
      reqOff: this.bodyOffset,
      reqLen: req.byteLength,
      resOff: this.bodyOffset + req.byteLength,
      resLen: res.byteLength,
      reqHeaders: o.requestHeaders,
    };
    if (o.error !== undefined) entry.error = o.error;
    if (req.byteLength > 0) entry.reqSha256 = shaPrefix(req);
    if (res.byteLength > 0) entry.resSha256 = shaPrefix(res);
    if (o.responseHeaders) entry.resHeaders = o.responseHeaders;
    const line = JSON.stringify(entry) + '\n';
    const size = req.byteLength + res.byteLength + line.length;
    if (this.pendingBytes + this.writingBytes + size > this.maxBufferedBytes) {
      this.dropped++;
      return;
    }
    // Observers get the caller's buffers; they are not copied, only kept until written.
    if (req.byteLength > 0) this.bodies.push(req);
    if (res.byteLength > 0) this.bodies.push(res);
    this.bodyOffset += req.byteLength + res.byteLength;
    this.lines.push(line);
    this.pendingBytes += size;
    if (this.pendingBytes >= this.flushBytes) this.kick();
  }

  /** Writes everything queued so far. */
  async flush(): Promise<void> {
    while (this.pendingBytes > 0 || this.flushing) {
      this.kick();
      await this.flushing;
    }
  }

  /** Flushes, writes the final meta.json and closes the files. Rejects if any write failed. */
  async close(): Promise<RecordWriterStats> {
    if (this.closed) return this.stats();
    clearInterval(this.timer);
    await this.flush();
    this.closed = true;
    try {
      await this.writeMeta(new Date().toISOString());
    } catch (err) {
      this.writeError ??= err as Error;
    }
    await Promise.allSettled([this.indexFh.close(), this.bodiesFh.close()]);
    if (this.writeError) {
      throw new Error(`--record ${this.dir}: recording incomplete, write failed: ${this.writeError.message}`, { cause: this.writeError });
    }
    return this.stats();
  }

  stats(): RecordWriterStats {
    const s: RecordWriterStats = {
      exchanges: this.written,
      dropped: this.dropped,
      bodyBytes: this.bodyOffset,
      indexBytes: this.indexBytes,
      buffered: this.pendingBytes + this.writingBytes,
    };
    if (this.writeError) s.writeError = this.writeError.message;
    return s;
  }

  private kick(): void {
    if (this.flushing || this.pendingBytes === 0) return;
    this.flushing = this.writeBatch().finally(() => {
      this.flushing = undefined;
      if (this.pendingBytes >= this.flushBytes) this.kick();
    });
  }

  private async writeBatch(): Promise<void> {
    const bodies = this.bodies;
    const lines = this.lines;
    this.bodies = [];
    this.lines = [];
    this.writingBytes = this.pendingBytes;
    this.pendingBytes = 0;
    try {
      if (this.writeError) return;
      // Bodies first: an index line must never point at bytes that are not on disk yet.
      if (bodies.length > 0) {
        let expected = 0;
        for (const b of bodies) expected += b.byteLength;
        const { bytesWritten } = await this.bodiesFh.writev(bodies);
        if (bytesWritten !== expected) throw new Error(`short write to ${BODIES_FILE}: ${bytesWritten} of ${expected} bytes`);
      }
      const text = Buffer.from(lines.join(''), 'utf8');
      const { bytesWritten } = await this.indexFh.write(text);
      if (bytesWritten !== text.byteLength) throw new Error(`short write to ${INDEX_FILE}: ${bytesWritten} of ${text.byteLength} bytes`);
      this.indexBytes += text.byteLength;
      this.written += lines.length;
    } catch (err) {
      this.writeError ??= err as Error;
      this.dropped += lines.length;
    } finally {
      this.writingBytes = 0;
    }
  }

  private async writeMeta(closedAt: string | undefined): Promise<void> {
    const meta: RecordMeta = {
      format: RECORD_FORMAT,
      version: RECORD_VERSION,
      createdAt: this.createdAt,
      exchanges: this.written,
      dropped: this.dropped,
      bodyBytes: this.bodyOffset,
      indexBytes: this.indexBytes,
    };
    if (closedAt) meta.closedAt = closedAt;
    if (this.writeError) meta.writeError = this.writeError.message;
    await writeFile(path.join(this.dir, META_FILE), JSON.stringify(meta, null, 2) + '\n');
  }
}

function shaPrefix(b: Uint8Array): string {
  return hash('sha256', b, 'hex').slice(0, SHA_PREFIX_CHARS);
}
