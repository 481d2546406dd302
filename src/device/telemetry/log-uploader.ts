// Device and app logs the way EVE's newlogd + loguploader produce and upload them (§8.2, §8.3).
//
// Lines are generated lazily: when a file is closed, the log generator produces the entries for
// the time since the last close, so a device holds no raw lines between ticks. Files are closed
// at an upload tick that finds no file of their kind waiting (scaled down from EVE's 300 s / 550 kB
// rotation: ticks are ≤ 300 s apart except after long failures), and at the latest RAW_ROTATION_MS
// after the previous close, as EVE rotates its raw file whatever the uploader does: so a backlog
// left by an outage drains at one file a tick, as on EVE, instead of a new file a tick keeping it
// level and packed into gzip files of at most 50 000 bytes (or LogBundles for the
// 'legacy' format). Each tick uploads the oldest device file, then the oldest app file, on EVE's
// cadence: first tick at 90 s, interval by backlog, 429 back-off mode, 503/no answer retried
// later, other 4xx retried up to 10 times and then moved aside as failed.
//
// Logs are reliable: a file leaves the backlog only when delivered, failed after 10 refusals
// (counted undelivered), deleted by EVE's on-disk quota (log-quota.ts; counted apart as dropped by
// the device's quota), or still pending at stop (counted undelivered).
//
// Kept files are what EVE keeps on disk: a device holds up to LOG_MEMORY_BUDGET_BYTES of them (or its --log-memory) in
// memory and hands the rest to the worker's spill store (log-spill-port.ts), from which a file is
// read back when its turn to be uploaded comes; without a store every file stays in memory.

import type { EndpointKey } from '../../protocol/endpoints.js';
import { v2Path } from '../../protocol/endpoints.js';
import { Msg } from '../../protocol/messages.js';
import { NEWLOGS_MAX_FILE_BYTES, packNewlogLines } from '../../protocol/newlogs.js';
import { NewlogLines } from '../../protocol/newlog-lines.js';
import type { DeviceFinding, DeviceOptions } from '../device-options.js';
import type { Answer, DeviceSender } from '../sender/device-sender.js';
import type { DeviceStats } from '../sender/device-stats.js';
import { DeviceTimer } from '../core/device-timer.js';
import { LOG_MAX_4XX_RETRIES, LogUploadSchedule } from '../core/eve-timers.js';
import { drainLogIntervalMs } from '../core/graceful-drain.js';
import { buildAppLogBundle, buildLogBundle, type DeviceLogEntry, type LogEntryVisitor, type LogGenerator } from './log-generator.js';
import type { DeviceCounters } from './metrics-builder.js';
import type { Millis } from '../ports.js';
import { exactBytes } from '../../protocol/exact-bytes.js';
import { LOG_MEMORY_BUDGET_BYTES, type SpillRef } from './log-spill-port.js';
import { logQuota, logQuotaOfBytes, overQuota, underQuota, type LogQuota } from './log-quota.js';
import { SmallMap } from '../../memory/small-map.js';

/** One per thread: the lines of the file being packed (packing is synchronous, so devices share it). */
const scratchLines = new NewlogLines();
/** What becomes of a stream's lines not yet closed: files (to upload), or at stop only a count. */
type LinesEnd = 'file' | 'count';

/** Writes each generated entry straight into scratchLines (the entry itself is the generator's scratch). */
const addScratchLine: LogEntryVisitor = (e) => scratchLines.add(e);
/** EVE's newlogd rotates its raw collect file every 300 s (§8.3, or at 550 kB). */
const RAW_ROTATION_MS = 300_000;

/** A running app whose console output is collected. */
export interface LogApp {
  uuid: string;
  /** Display name: the gzip Name of its newlogs files. */
  name: string;
  /** EVE domain name, the entries' source. */
  domainName: string;
  linesPerSec: number;
  /** When it last reached RUNNING. */
  runningSince: Millis;
}

export interface LogHost {
  readonly opts: DeviceOptions;
  readonly sender: DeviceSender;
  readonly tally: DeviceStats;
  readonly counters: DeviceCounters;
  readonly generator: LogGenerator;
  readonly uuid: string;
  readonly generation: number;
  /** newlog.allow.fastupload from config. */
  readonly fastUpload: boolean;
  runningLogApps(): LogApp[];
  finding(endpoint: EndpointKey, kind: DeviceFinding['kind'], detail: string): void;
  guard(fn: () => Promise<void> | void): void;
}

interface LogFile {
  /** The file's bytes when held in memory; undefined when spilled. */
  bytes: Uint8Array | undefined;
  /** Where the bytes are when spilled. */
  spilled: SpillRef | undefined;
  size: number;
  lines: number;
  createdAt: Millis;
  /** Refusals with a non-retriable 4xx so far. */
  refusals: number;
  /** App files: the app instance UUID (path) — undefined for device files. */
  appUuid?: string;
}

export class LogUploader {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onTimer = (u: LogUploader, dueAt: Millis): void => u.host.guard(() => u.tick(dueAt));

  private deviceFiles: LogFile[] = [];
  private appFiles: LogFile[] = [];
  /** Bytes of every kept file (what EVE's quota counts). */
  private backlogBytes = 0;
  /** Bytes of the kept files held in memory. */
  private heldBytes = 0;
  private readonly quota: LogQuota;
  /** Device lines are generated up to here. */
  /** Start of the device lines not yet collected; undefined until start() (nothing was written before). */
  private deviceFrom: Millis | undefined;
  /** Per running app: lines generated up to here. */
  private appFrom = new SmallMap<string, Millis>();
  private schedule: LogUploadSchedule | undefined;
  private readonly timer: DeviceTimer;
  /** End-of-run drain (core/graceful-drain.ts): no new lines; the backlog goes on EVE's shortest cadence. */
  private draining = false;
  /**
   * While draining, until the lines written up to the drain's start are closed into files: that
   * instant. They are closed at the device's own start in the drain's window (or at stop, or at a
   * power loss), not when the drain begins: generating and deflating them costs about 0.35 ms a
   * device, and a worker that closed all its devices' files at once held its event loop 4.3–4.7 s
   * at 12,000 devices, counted as latency by every answer and delivery due then.
   */
  private drainLinesUntil: Millis | undefined;
  /** pendingFiles as the worker's ReliableBacklog last counted it. */
  private backlogCounted = 0;
  /**
   * The generation of the regular tick now awaiting its uploads, else undefined. A drain that
   * begins meanwhile leaves its first tick to that tick's end (drainFirstTickAt): armed at once, it
   * ran beside it and uploaded the same oldest file again (EVE's loguploader is one loop).
   */
  private tickRunningGen: number | undefined;
  /** When the drain's first tick is due, held while a regular tick still runs. */
  private drainFirstTickAt: Millis | undefined;

  constructor(private readonly host: LogHost) {
    this.timer = new DeviceTimer(host.opts.scheduler, this, LogUploader.onTimer);
    const q = host.opts.behaviour.logQuotaBytes;
    this.quota = q === undefined ? logQuota() : logQuotaOfBytes(q);
  }

  get pendingFiles(): number {
    return this.deviceFiles.length + this.appFiles.length;
  }

  get pendingBytes(): number {
    return this.backlogBytes;
  }

  /** Bytes of the waiting files held in memory (the rest is spilled). */
  get memoryBytes(): number {
    return this.heldBytes;
  }

  /** Starts (or restarts after a boot) log collection and the upload cadence; the backlog survives. */
  start(now: Millis): void {
    this.deviceFrom = now;
    this.appFrom.clear();
    this.schedule = new LogUploadSchedule(now, this.host.fastUpload);
    this.timer.at(now + this.schedule.uploadDelayMs());
  }

  /** newlog.allow.fastupload changed. */
  setFastUpload(enabled: boolean, now: Millis): void {
    this.schedule?.setFastUpload(enabled, now);
  }

  /** An app stopped running or was removed: close its lines up to now into a file. */
  closeApp(app: LogApp, now: Millis): void {
    // While draining, only lines written before the drain began, and only until they are closed.
    const until = this.draining ? this.drainLinesUntil : now;
    if (until !== undefined) this.collectApp(app, Math.min(now, until));
    this.appFrom.delete(app.uuid);
  }

  /** The device goes down for a reboot: close what was written so far (files are on disk and survive). */
  closeForReboot(now: Millis): void {
    this.timer.cancel();
    this.collect(now);
  }

  /** Lines written before the drain began that are not in a file yet (the device is not drained). */
  get linesToClose(): boolean {
    return this.drainLinesUntil !== undefined;
  }

  /**
   * End of the run (simulator action, core/graceful-drain.ts): generate no lines after now; at
   * `deliverFrom` the open files are closed up to now, and from then on the backlog is uploaded one
   * device file and one app file per tick at EVE's shortest upload interval (§8.3), not all at once.
   */
  drain(now: Millis, deliverFrom: Millis = now): void {
    if (this.draining) return;
    this.draining = true;
    if (this.schedule === undefined) {
      this.timer.cancel(); // never started: nothing was written
      return;
    }
    this.drainLinesUntil = now;
    const first = Math.max(now, deliverFrom);
    if (this.tickRunningGen === this.host.generation) this.drainFirstTickAt = first;
    else this.timer.at(first);
  }

  /**
   * The device stops for good: everything not delivered is counted. The lines written since the
   * last close are counted, not made: on EVE they are in the open file of each stream (the
   * device's, each app's), one undelivered file apiece. Making them here only to count them
   * (generating and deflating each device's lines) held a worker's loop for 19 s at the end of an
   * overloaded 100,000-device run, where most devices had not reached their drain tick.
   */
  stop(now: Millis): void {
    this.timer.cancel();
    this.collect(now, false, 'count');
    for (const files of [this.deviceFiles, this.appFiles]) {
      for (const f of [...files]) {
        this.remove(files, f);
        this.countUndelivered(f);
      }
    }
  }

  // The ticks and uploads are chains of then() rather than async functions: while a file's request
  // waits seconds for an in-flight slot, the tick holds only what its next step needs, where
  // suspended async frames (tick and upload) held every local.
  private tick(dueAt: Millis): Promise<void> | undefined {
    if (this.draining) return this.drainTick(dueAt);
    const host = this.host;
    const gen = host.generation;
    const schedule = this.schedule!;
    this.tickRunningGen = gen;
    return endingWith(
      () => {
        schedule.onBackoffExpired(host.opts.clock.now());
        this.collect(host.opts.clock.now(), true);
        return this.uploadDeviceThenApp(dueAt, gen);
      },
      () => this.tickEnded(gen),
    );
  }

  /** The next tick is armed whatever happened in this one (unless the device went down). */
  private tickEnded(gen: number): void {
    const host = this.host;
    if (this.tickRunningGen === gen) this.tickRunningGen = undefined;
    if (gen !== host.generation) return;
    const schedule = this.schedule!;
    const now = host.opts.clock.now();
    schedule.maybeEvaluate(now, this.pendingFiles, host.opts.rng);
    host.counters.setLogBacklog(this.pendingFiles, schedule.intervalS);
    if (!this.draining) return this.timer.at(now + schedule.uploadDelayMs());
    // A drain began while this tick awaited its upload: its first tick comes now, not beside this one.
    const first = this.drainFirstTickAt;
    this.drainFirstTickAt = undefined;
    if (first !== undefined) this.timer.at(Math.max(now, first));
  }

  /**
   * While draining: one tick as EVE's loguploader does it (§8.3: oldest device file, then oldest app
   * file), the next one EVE's shortest interval later (10 s while in 429 back-off mode).
   */
  private drainTick(dueAt: Millis): Promise<void> | undefined {
    const gen = this.host.generation;
    return endingWith(
      () => {
        this.collect(this.host.opts.clock.now());
        return this.uploadDeviceThenApp(dueAt, gen);
      },
      () => this.drainTickEnded(gen),
    );
  }

  private drainTickEnded(gen: number): void {
    const host = this.host;
    if (gen === host.generation && this.pendingFiles > 0) {
      const now = host.opts.clock.now();
      this.timer.at(now + drainLogIntervalMs(host.opts.rng, this.schedule!.inBackoffMode(now)));
    }
  }

  /** EVE's order within a tick: the oldest device file, then (if the device is still up) the oldest app file. */
  private uploadDeviceThenApp(dueAt: Millis, gen: number): Promise<void> | undefined {
    if (this.deviceFiles.length === 0) return this.uploadOldestApp(dueAt);
    return this.uploadOldest(this.deviceFiles, dueAt).then(() =>
      gen === this.host.generation ? this.uploadOldestApp(this.host.opts.clock.now()) : undefined,
    );
  }

  private uploadOldestApp(dueAt: Millis): Promise<void> | undefined {
    return this.appFiles.length > 0 ? this.uploadOldest(this.appFiles, dueAt) : undefined;
  }

  private uploadOldest(files: LogFile[], dueAt: Millis): Promise<void> {
    const host = this.host;
    const gen = host.generation;
    const file = files[0]!;
    if (file.bytes !== undefined) return this.postFile(files, file, file.bytes, dueAt, gen);
    return this.readSpilled(files, file).then((bytes) => (gen === host.generation ? this.postFile(files, file, bytes, dueAt, gen) : undefined));
  }

  private postFile(files: LogFile[], file: LogFile, bytes: Uint8Array, dueAt: Millis, gen: number): Promise<void> {
    const host = this.host;
    const legacy = host.opts.behaviour.logFormat === 'legacy';
    const endpoint: EndpointKey = file.appUuid === undefined ? (legacy ? 'logs' : 'newlogs') : legacy ? 'applogs' : 'appnewlogs';
    let sent: Promise<Answer>;
    try {
      sent = host.sender.post(endpoint, v2Path(endpoint, host.uuid, file.appUuid), bytes, dueAt);
    } catch (err) {
      return Promise.reject(err);
    }
    return sent.then((answer) => {
      if (gen === host.generation) this.onUploadAnswer(files, file, dueAt, answer);
    });
  }

  /** What an upload's answer does to the file and to EVE's upload schedule. */
  private onUploadAnswer(files: LogFile[], file: LogFile, dueAt: Millis, answer: Answer): void {
    const host = this.host;
    const now = host.opts.clock.now();
    const schedule = this.schedule!;
    host.counters.recordLogUpload({ bytes: file.size, status: answer?.status, latencyMs: now - dueAt, at: now, app: file.appUuid !== undefined });
    if (answer === undefined) {
      schedule.onUnavailable(now);
      return;
    }
    const status = answer.status;
    if (status === 200 || status === 201 || status === 204) {
      this.remove(files, file);
      schedule.onSuccess();
    } else if (status === 429) {
      schedule.onTooManyRequests(now);
    } else if (status === 503) {
      schedule.onUnavailable(now);
    } else if (status >= 400 && status < 500) {
      file.refusals++;
      if (file.refusals >= LOG_MAX_4XX_RETRIES) {
        // EVE moves the file to its "failed" directory: it will never be delivered.
        this.remove(files, file);
        this.countUndelivered(file);
      }
    }
    // Other statuses (5xx): the same file is tried again on a later tick.
  }

  /** A waiting file's bytes, read back from the spill (they are not in memory). */
  private readSpilled(files: LogFile[], file: LogFile): Promise<Uint8Array> {
    let read: Promise<Uint8Array>;
    try {
      read = this.host.opts.logSpill!.read(file.spilled!);
    } catch (err) {
      read = Promise.reject(err);
    }
    return read.then(undefined, (err: unknown) => {
      // The kept copy is unreadable: the file is lost (counted), and the error shows as a device error.
      this.remove(files, file);
      this.countUndelivered(file);
      throw err;
    });
  }

  /**
   * Closes the lines written since the last close into files. `onUploadTick`: only where no file of
   * that kind is waiting or the raw file is due for rotation anyway (RAW_ROTATION_MS). `end`
   * 'count' (at stop): the same lines are counted as one undelivered file per stream instead of made.
   */
  private collect(now: Millis, onUploadTick = false, end: LinesEnd = 'file'): void {
    if (!this.draining) return this.closeUpTo(now, onUploadTick, end);
    // Draining: no lines after the drain's start; those before it are closed once.
    const until = this.drainLinesUntil;
    if (until === undefined) return;
    this.drainLinesUntil = undefined;
    this.closeUpTo(until, false, end);
  }

  private closeUpTo(now: Millis, onUploadTick: boolean, end: LinesEnd): void {
    const host = this.host;
    const rate = host.opts.behaviour.logLinesPerSec;
    const due = (files: readonly LogFile[], from: number): boolean => !onUploadTick || files.length === 0 || now - from >= RAW_ROTATION_MS;
    if (this.deviceFrom !== undefined && now > this.deviceFrom && due(this.deviceFiles, this.deviceFrom)) {
      const from = this.deviceFrom;
      this.deviceFrom = now;
      if (rate > 0) this.endLines(undefined, from, now, rate, end);
    }
    for (const app of host.runningLogApps()) {
      if (due(this.appFiles, this.appLinesFrom(app))) this.collectApp(app, now, end);
    }
  }

  /** Where an app's lines not yet closed begin. */
  private appLinesFrom(app: LogApp): Millis {
    return Math.max(this.appFrom.get(app.uuid) ?? app.runningSince, app.runningSince);
  }

  private collectApp(app: LogApp, now: Millis, end: LinesEnd = 'file'): void {
    const from = this.appLinesFrom(app);
    this.appFrom.set(app.uuid, now);
    if (now <= from || app.linesPerSec <= 0) return;
    this.endLines(app, from, now, app.linesPerSec, end);
  }

  /** Lines of (from, now] into files, or at stop only counted (one undelivered file, every line). */
  private endLines(app: LogApp | undefined, from: Millis, now: Millis, linesPerSec: number, end: LinesEnd): void {
    if (end === 'file') return this.closeLines(app, from, now, linesPerSec);
    const gen = this.host.generator;
    const lines = app ? gen.countAppLines(app, from, now, linesPerSec) : gen.countDeviceLines(from, now, linesPerSec);
    if (lines > 0) this.host.tally.addUndelivered('logs', 1, lines);
  }

  /**
   * Generates the device's (app undefined) or an app's lines for (from, now] and keeps them as
   * files: newlogs lines go straight from the generator into scratchLines, legacy bundles are built
   * from entry arrays.
   */
  private closeLines(app: LogApp | undefined, from: Millis, now: Millis, linesPerSec: number): void {
    const gen = this.host.generator;
    const rng = this.host.opts.rng;
    if (this.host.opts.behaviour.logFormat === 'legacy') {
      const entries = app ? gen.appEntries(app, from, now, linesPerSec, rng) : gen.deviceEntries(from, now, linesPerSec, rng);
      if (entries.length > 0) this.addFiles(this.packLegacy(entries, now, app), now, app);
      return;
    }
    scratchLines.reset();
    const lines = app
      ? gen.visitAppEntries(app, from, now, linesPerSec, rng, addScratchLine)
      : gen.visitDeviceEntries(from, now, linesPerSec, rng, addScratchLine);
    if (lines > 0) this.addFiles(this.packNewlogs(now, app), now, app);
  }

  /** Keeps packed files as waiting files of their kind. */
  private addFiles(packed: readonly { bytes: Uint8Array; lines: number }[], now: Millis, app: LogApp | undefined): void {
    const host = this.host;
    const target = app ? this.appFiles : this.deviceFiles;
    for (const p of packed) {
      const file = this.keep(exactBytes(p.bytes), p.lines, now);
      if (app) file.appUuid = app.uuid;
      target.push(file);
      host.counters.recordGzipFile(p.bytes.length);
    }
    this.enforceQuota();
    this.settleBacklog();
  }

  /** A new waiting file: in memory while the device's budget allows, else in the spill. */
  private keep(bytes: Uint8Array, lines: number, now: Millis): LogFile {
    const size = bytes.length;
    this.backlogBytes += size;
    const spill = this.host.opts.logSpill;
    if (spill !== undefined && this.heldBytes + size > (this.host.opts.logMemoryBytes ?? LOG_MEMORY_BUDGET_BYTES)) {
      try {
        const ref = spill.put(this.host.opts.index, bytes);
        return { bytes: undefined, spilled: ref, size, lines, createdAt: now, refusals: 0 };
      } catch {
        // The spill cannot take it (disk full, ...): held in memory, still within EVE's quota.
      }
    }
    this.heldBytes += size;
    return { bytes, spilled: undefined, size, lines, createdAt: now, refusals: 0 };
  }

  /** The lines written into scratchLines as newlogs gzip files. */
  private packNewlogs(now: Millis, app: LogApp | undefined): { bytes: Uint8Array; lines: number }[] {
    const host = this.host;
    const lines = scratchLines;
    host.counters.recordLogInput(lines.count, lines.byteLength, app !== undefined);
    const kind = app
      ? ({ kind: 'app', appName: app.name } as const)
      : ({ kind: 'device', meta: { devID: host.uuid, image: 'IMGA', eveVersion: host.opts.behaviour.eveVersion } } as const);
    // Files are copies (gzip output): the scratch lines can be reused at once.
    return packNewlogLines(kind, lines, Math.floor(now / 1000));
  }

  /** LogBundle / AppInstanceLogBundle, halved until each encodes within the file limit. */
  private packLegacy(entries: DeviceLogEntry[], now: Millis, app: LogApp | undefined): { bytes: Uint8Array; lines: number }[] {
    const host = this.host;
    host.counters.recordLogInput(entries.length, 0, app !== undefined);
    const encode = (part: DeviceLogEntry[]): Uint8Array =>
      app
        ? Msg.AppInstanceLogBundle.encode(buildAppLogBundle(part, now))
        : Msg.LogBundle.encode(buildLogBundle(host.uuid, host.opts.behaviour.eveVersion, 'IMGA', part, now));
    const out: { bytes: Uint8Array; lines: number }[] = [];
    const split = (part: DeviceLogEntry[]): void => {
      const bytes = encode(part);
      if (bytes.length <= NEWLOGS_MAX_FILE_BYTES || part.length === 1) {
        out.push({ bytes, lines: part.length });
        return;
      }
      const mid = part.length >> 1;
      split(part.slice(0, mid));
      split(part.slice(mid));
    };
    split(entries);
    return out;
  }

  /** EVE's on-disk quota (log-quota.ts): over it, the oldest app files go first, then the oldest device files. */
  private enforceQuota(): void {
    const q = this.quota;
    if (!overQuota(q, this.backlogBytes, this.pendingFiles)) return;
    for (const victims of [this.appFiles, this.deviceFiles]) {
      while (victims.length > 0 && !underQuota(q, this.backlogBytes, this.pendingFiles)) {
        if (this.pendingFiles <= 1) return; // never the only (newest) file
        const f = victims[0]!;
        this.remove(victims, f);
        this.host.tally.addDroppedByQuota(f.lines);
      }
    }
  }

  /** Tells the worker's totals how many files wait now (after every change to the two lists). */
  private settleBacklog(): void {
    const fleet = this.host.opts.backlog;
    if (fleet) this.backlogCounted = fleet.settle('logs', this.backlogCounted, this.pendingFiles);
  }

  private remove(files: LogFile[], file: LogFile): void {
    const i = files.indexOf(file);
    if (i < 0) return;
    files.splice(i, 1);
    this.settleBacklog();
    this.backlogBytes -= file.size;
    if (file.spilled !== undefined) {
      this.host.opts.logSpill?.release(file.spilled);
      file.spilled = undefined;
    } else {
      this.heldBytes -= file.size;
    }
    file.bytes = undefined;
  }

  private countUndelivered(f: LogFile): void {
    this.host.tally.addUndelivered('logs', 1, f.lines);
  }
}

/** Runs `run`, then `end` once it is over, however it ended: returned, threw or rejected (the error goes on after `end`). */
function endingWith(run: () => Promise<void> | undefined, end: () => void): Promise<void> | undefined {
  let running: Promise<void> | undefined;
  try {
    running = run();
  } catch (err) {
    end();
    throw err;
  }
  if (running === undefined) {
    end();
    return undefined;
  }
  return running.then(end, (err: unknown) => {
    end();
    throw err;
  });
}
