// A worker's log spill: the log files its devices cannot hold in their memory budget, appended to
// files in the state directory (EVE keeps them on disk too) and read back when they are uploaded.
//
// Layout: <stateDir>/log-spill/ (0700), one series of segments per worker,
// `worker-<id>-<pid>-<seq>.spill` (0600), records as log-spill-record.ts describes. Segments are
// append-only; a new one is started when the current one reaches SEGMENT_ROTATE_BYTES, and a
// segment is deleted as soon as every record in it has been released (delivered, dropped or
// counted undelivered) and no read of it is in flight. close() deletes what is left: the spill
// holds nothing worth keeping after the run.
//
// Writes are synchronous (the worker's own thread, one small write per closed log file); reads
// are asynchronous, so an upload never blocks the worker on the disk.

import { closeSync, openSync, read, rmdirSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { LogSpill, SpillRef } from '../device/telemetry/log-spill-port.js';
import { encodeSpillHeader, SPILL_RECORD_HEADER_BYTES } from './log-spill-record.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../identity/state-files.js';

/** A segment is closed for writing once it holds this much (and deleted when all of it is released). */
export const SEGMENT_ROTATE_BYTES = 64 * 1024 * 1024;

interface Segment {
  seq: number;
  path: string;
  fd: number;
  /** Bytes written so far (the next record's offset). */
  size: number;
  /** Records not yet released. */
  live: number;
  /** Reads in flight. */
  reading: number;
}

export interface LogSpillFigures {
  /** Segments on disk now. */
  segments: number;
  /** Bytes in those segments (released records included until their segment goes). */
  diskBytes: number;
  /** Records kept and not yet released. */
  liveRecords: number;
  /** Largest diskBytes seen. */
  peakDiskBytes: number;
}

export class LogSpillFile implements LogSpill {
  readonly dir: string;
  private readonly segments = new Map<number, Segment>();
  private current: Segment | undefined;
  private nextSeq = 0;
  private peakDiskBytes = 0;
  private closed = false;

  constructor(
    stateDir: string,
    private readonly workerId: number,
    private readonly rotateBytes = SEGMENT_ROTATE_BYTES,
  ) {
    this.dir = join(stateDir, 'log-spill');
  }

  put(device: number, bytes: Uint8Array): SpillRef {
    if (this.closed) throw new Error('log spill is closed');
    const seg = this.writable();
    const header = encodeSpillHeader(device, bytes.length);
    const at = seg.size;
    writeAll(seg.fd, header, at);
    writeAll(seg.fd, bytes, at + header.length);
    seg.size += header.length + bytes.length;
    seg.live++;
    const disk = this.diskBytes();
    if (disk > this.peakDiskBytes) this.peakDiskBytes = disk;
    return { segment: seg.seq, offset: at + SPILL_RECORD_HEADER_BYTES, length: bytes.length };
  }

  read(ref: SpillRef): Promise<Uint8Array> {
    const seg = this.segments.get(ref.segment);
    if (!seg) return Promise.reject(new Error(`log spill: segment ${ref.segment} is gone (record already released?)`));
    seg.reading++;
    const buf = Buffer.allocUnsafe(ref.length);
    return new Promise<Uint8Array>((resolve, reject) => {
      const step = (done: number): void => {
        if (done === ref.length) return resolve(buf);
        read(seg.fd, buf, done, ref.length - done, ref.offset + done, (err, n) => {
          if (err) return reject(err);
          if (n === 0) return reject(new Error(`log spill: ${seg.path} ends before offset ${ref.offset + ref.length}`));
          step(done + n);
        });
      };
      step(0);
    }).finally(() => {
      seg.reading--;
      this.reclaim(seg);
    });
  }

  release(ref: SpillRef): void {
    const seg = this.segments.get(ref.segment);
    if (!seg) return;
    seg.live--;
    this.reclaim(seg);
  }

  figures(): LogSpillFigures {
    let live = 0;
    for (const s of this.segments.values()) live += s.live;
    return { segments: this.segments.size, diskBytes: this.diskBytes(), liveRecords: live, peakDiskBytes: this.peakDiskBytes };
  }

  /** End of the run: every segment is closed and deleted (and the directory, if nothing else is in it). */
  close(): void {
    this.closed = true;
    for (const seg of [...this.segments.values()]) this.drop(seg);
    this.current = undefined;
    try {
      rmdirSync(this.dir);
    } catch {
      // not empty (another worker's segments) or never made: left as it is
    }
  }

  private writable(): Segment {
    const cur = this.current;
    if (cur && cur.size < this.rotateBytes) return cur;
    if (cur) this.current = undefined;
    if (cur) this.reclaim(cur);
    ensurePrivateDir(this.dir);
    const seq = this.nextSeq++;
    const path = join(this.dir, `worker-${this.workerId}-${process.pid}-${seq}.spill`);
    // 'wx+': a new file only (never another run's), readable through the same descriptor.
    const fd = openSync(path, 'wx+', PRIVATE_FILE_MODE);
    const seg: Segment = { seq, path, fd, size: 0, live: 0, reading: 0 };
    this.segments.set(seq, seg);
    this.current = seg;
    return seg;
  }

  /** Deletes a segment no record of which is live or being read; the current one goes only once it is full. */
  private reclaim(seg: Segment): void {
    if (seg.live > 0 || seg.reading > 0) return;
    if (seg === this.current) {
      // Emptied but still being written: start over in a fresh segment once it holds much dead space.
      if (seg.size < this.rotateBytes / 4) return;
      this.current = undefined;
    }
    this.drop(seg);
  }

  private drop(seg: Segment): void {
    this.segments.delete(seg.seq);
    try {
      closeSync(seg.fd);
    } catch {
      // already closed
    }
    try {
      unlinkSync(seg.path);
    } catch {
      // already gone
    }
  }

  private diskBytes(): number {
    let n = 0;
    for (const s of this.segments.values()) n += s.size;
    return n;
  }
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}
