// EVE's deferred ("event") send queue for info and attestation-cert messages (wire facts §6.5,
// controllerconn/deferred.go), as a pure data structure the device drives:
//
//   enqueue(key, kind, bytes, now, opts)  → replaces any pending item with the same key, kicks a pass
//   nextDue(now)                          → when the device should wake up for the next pass
//   takeBatch(now)                        → the items to send now, in EVE's order (starts a pass)
//   report(item, outcome, now)            → after each send; says whether to go on with the pass
//
// The queue never sets timers itself. The device sends the items of a batch one after another and
// reports each; a transport error ends the pass (the rest stays queued). An item refused with a
// retriable status waits out a per-item backoff; other 4xx drop it for good.

import type { Millis, Rng } from '../ports.js';
import { exactBytes } from '../../protocol/exact-bytes.js';

/** What a queued message is; decides send order and endpoint. */
export type InfoQueueKind =
  | 'attest' // ZAttestReq (ATTEST_REQ_CERT) → /attest
  | 'app' // ZiApp
  | 'hardware' // ZiHardware
  | 'device' // ZiDevice
  | 'network-instance'
  | 'volume'
  | 'content-tree'
  | 'blob'
  | 'app-metadata'
  | 'location'
  | 'other';

export interface EnqueueOptions {
  /** Drop on any failure instead of retrying (periodic location, attestation certs). */
  discardOnFailure?: boolean;
}

/** Result of one send attempt, as seen by the device. */
export type SendOutcome =
  | { kind: 'http'; status: number }
  | { kind: 'transport'; code?: string };

/** What happened to the item after report(). */
export type ItemDisposition =
  | 'delivered' // controller accepted it
  | 'dropped' // non-retriable 4xx: lost for good (EVE logs an error)
  | 'discarded' // discard-on-failure item failed
  | 'retry' // retriable status: stays, waits out its backoff
  | 'stopped' // no HTTP answer: stays, the pass ends
  | 'superseded'; // a newer message with the same key arrived while this one was in flight

export interface ReportResult {
  disposition: ItemDisposition;
  key: string;
  kind: InfoQueueKind;
  /** HTTP status if there was an answer. */
  status?: number;
  /** Refusals of this payload so far (after this report). */
  attempts: number;
  /** When this item may be tried again (only for 'retry'). */
  retryAt?: Millis;
  /** True when the device should stop sending the rest of the current batch. */
  stopPass: boolean;
}

/** Per-queue totals, cumulative since creation. */
export interface InfoQueueStats {
  enqueued: number;
  replaced: number;
  delivered: number;
  dropped: number;
  discarded: number;
  retried: number;
  transportErrors: number;
  passes: number;
}

export interface UndeliveredItem {
  key: string;
  kind: InfoQueueKind;
  bytes: number;
  enqueuedAt: Millis;
  attempts: number;
  retryAt: Millis;
  lastStatus: number;
  discardOnFailure: boolean;
}

/** HTTP codes EVE treats as success at the transport layer (§0). */
export function isSuccessStatus(status: number): boolean {
  return status === 200 || status === 201 || status === 204 || status === 304;
}

/**
 * Whether the same bytes may be accepted later (deferred.go retriableHTTPStatus): auth and rate
 * limiting, proxy auth, request timeout, and any 5xx. Every other 4xx drops the item.
 */
export function isRetriableStatus(status: number): boolean {
  return status === 401 || status === 403 || status === 407 || status === 408 || status === 429 ||
    (status >= 500 && status < 600);
}

/** Per-item backoff after `attempts` refusals: 1, 2, 4, 8, 15, 15 … minutes. */
export function itemRetryDelayMs(attempts: number): Millis {
  let delay = MIN_RETRY_MS;
  for (let i = 1; i < attempts && delay < MAX_RETRY_MS; i++) delay *= 2;
  return Math.min(delay, MAX_RETRY_MS);
}

/** Send priority: attestation first, then ZiApp, then ZiHardware, then everything else. */
export function kindPriority(kind: InfoQueueKind): number {
  switch (kind) {
    case 'attest':
      return 0;
    case 'app':
      return 1;
    case 'hardware':
      return 2;
    default:
      return 3;
  }
}
const PRIORITY_LEVELS = 4;

/** Which endpoint a queued item goes to. */
export function endpointForKind(kind: InfoQueueKind): 'attest' | 'info' {
  return kind === 'attest' ? 'attest' : 'info';
}

const MINUTE = 60_000;
const MIN_RETRY_MS = MINUTE;
const MAX_RETRY_MS = 15 * MINUTE;
/** Queue re-run timer while non-empty: exponential 1 → 15 min, ±30 s noise. */
const PASS_TIMER_MIN_MS = MINUTE;
const PASS_TIMER_MAX_MS = 15 * MINUTE;
const PASS_TIMER_NOISE_MS = 30_000;

/** One pending message. The device keeps the reference between takeBatch and report. */
export class QueuedItem {
  attempts = 0;
  /** Earliest time of the next attempt (0 = no backoff). */
  retryAt: Millis = 0;
  lastStatus = 0;
  /** Insertion order; kept when an item is replaced in place. */
  seq: number;
  constructor(
    readonly key: string,
    readonly kind: InfoQueueKind,
    readonly bytes: Uint8Array,
    readonly discardOnFailure: boolean,
    readonly enqueuedAt: Millis,
    seq: number,
  ) {
    this.seq = seq;
  }
}

export class InfoQueue {
  private items: QueuedItem[] = [];
  /** Set on enqueue: a pass should run as soon as possible. */
  private kicked = false;
  /** Next tick of the exponential re-run timer; undefined while the queue is empty. */
  private timerAt: Millis | undefined;
  private timerStep = 0;
  private nextSeq = 0;
  /** Items of the pass in progress not yet reported; -1 when no pass is running. */
  private passPending = -1;
  private passSeqLimit = 0;
  private passBatch: QueuedItem[] | undefined;
  readonly stats: InfoQueueStats = {
    enqueued: 0,
    replaced: 0,
    delivered: 0,
    dropped: 0,
    discarded: 0,
    retried: 0,
    transportErrors: 0,
    passes: 0,
  };
  /** The most recent drop (non-retriable refusal), for a finding or a log line. */
  lastDrop: { key: string; kind: InfoQueueKind; status: number; at: Millis } | undefined;

  constructor(private readonly rng: Rng) {}

  get size(): number {
    return this.items.length;
  }

  /** Items whose kind passes `counts`, without copying the queue (read every second per device). */
  count(counts: (kind: InfoQueueKind) => boolean): number {
    let n = 0;
    for (const it of this.items) if (counts(it.kind)) n++;
    return n;
  }

  /** Bytes waiting in the queue. */
  get backlogBytes(): number {
    let n = 0;
    for (const it of this.items) n += it.bytes.length;
    return n;
  }

  get passInProgress(): boolean {
    return this.passPending >= 0;
  }

  /**
   * Queues `bytes` under `key`. A pending item with the same key is replaced in place (only the
   * latest state per object is delivered); its refusal count and backoff carry over only when
   * the bytes are identical. Kicks a pass.
   */
  enqueue(key: string, kind: InfoQueueKind, bytes: Uint8Array, now: Millis, opts: EnqueueOptions = {}): QueuedItem {
    bytes = exactBytes(bytes);
    if (this.items.length === 0) this.startTimer(now);
    this.stats.enqueued++;
    const idx = this.indexOf(key);
    let item: QueuedItem;
    if (idx >= 0) {
      const old = this.items[idx]!;
      item = new QueuedItem(key, kind, bytes, opts.discardOnFailure ?? false, now, old.seq);
      if (sameBytes(old.bytes, bytes)) {
        item.attempts = old.attempts;
        item.retryAt = old.retryAt;
        item.lastStatus = old.lastStatus;
      }
      this.items[idx] = item;
      this.stats.replaced++;
    } else {
      item = new QueuedItem(key, kind, bytes, opts.discardOnFailure ?? false, now, this.nextSeq++);
      this.items.push(item);
    }
    this.kicked = true;
    return item;
  }

  /** Removes a pending item (EVE RemoveDeferred). Returns whether one was there. */
  remove(key: string): boolean {
    const idx = this.indexOf(key);
    if (idx < 0) return false;
    this.items.splice(idx, 1);
    if (this.items.length === 0) this.stopTimer();
    return true;
  }

  has(key: string): boolean {
    return this.indexOf(key) >= 0;
  }

  /**
   * When the device should next call takeBatch(): `now`-ish after an enqueue, else the next tick
   * of the re-run timer. Undefined when there is nothing to do (empty queue, or a pass is running:
   * ask again once it ends).
   */
  nextDue(now: Millis): Millis | undefined {
    if (this.passInProgress || this.items.length === 0) return undefined;
    if (this.kicked) return now;
    return this.timerAt;
  }

  /**
   * Starts a pass: returns the items to send now, attestation first, then ZiApp, then ZiHardware,
   * then the rest, each in insertion order; items still in backoff are skipped. Consumes a kick
   * and, if its time has come, a tick of the re-run timer. Returns [] while a pass is running.
   * The device must report() every returned item in order, or stop at the first report whose
   * result has stopPass set, or call abortPass().
   */
  takeBatch(now: Millis): QueuedItem[] {
    if (this.passInProgress) return [];
    this.kicked = false;
    if (this.timerAt !== undefined && now >= this.timerAt) this.advanceTimer(now);
    if (this.items.length === 0) return [];
    const batch: QueuedItem[] = [];
    for (let p = 0; p < PRIORITY_LEVELS; p++) {
      for (const it of this.items) {
        if (kindPriority(it.kind) === p && it.retryAt <= now && it.bytes.length > 0) batch.push(it);
      }
    }
    this.stats.passes++;
    if (batch.length === 0) {
      this.endPass(now);
      return batch;
    }
    this.passPending = batch.length;
    this.passSeqLimit = this.nextSeq;
    this.passBatch = batch;
    return batch;
  }

  /** Records the outcome of sending `item` (one of the current batch). */
  report(item: QueuedItem, outcome: SendOutcome, now: Millis): ReportResult {
    if (!this.passInProgress || !this.passBatch?.includes(item)) {
      throw new Error(`InfoQueue.report: item ${item.key} is not part of the pass in progress`);
    }
    this.passPending--;
    const current = this.items[this.indexOf(item.key)];
    const superseded = current !== item;
    const result = this.apply(item, outcome, now, superseded);
    if (result.stopPass || this.passPending === 0) this.endPass(now);
    return result;
  }

  /**
   * Makes every item due now, backoff forgotten, and kicks a pass: the simulator's end-of-run
   * drain (core/graceful-drain.ts), not an EVE rule.
   */
  expedite(): void {
    for (const it of this.items) it.retryAt = 0;
    if (this.items.length > 0) this.kicked = true;
  }

  /** Ends the pass in progress without reporting the rest (e.g. the device is stopping). */
  abortPass(now: Millis): void {
    if (this.passInProgress) this.endPass(now);
  }

  /** Everything still waiting, in queue order. */
  undelivered(): UndeliveredItem[] {
    return this.items.map((it) => ({
      key: it.key,
      kind: it.kind,
      bytes: it.bytes.length,
      enqueuedAt: it.enqueuedAt,
      attempts: it.attempts,
      retryAt: it.retryAt,
      lastStatus: it.lastStatus,
      discardOnFailure: it.discardOnFailure,
    }));
  }

  /** Keys in queue order (for tests and debugging). */
  keys(): string[] {
    return this.items.map((it) => it.key);
  }

  /** Drops everything (device reboot: the queue lives in memory). */
  clear(): void {
    this.items = [];
    this.kicked = false;
    this.passPending = -1;
    this.passBatch = undefined;
    this.stopTimer();
  }

  private apply(item: QueuedItem, outcome: SendOutcome, now: Millis, superseded: boolean): ReportResult {
    const base = { key: item.key, kind: item.kind, attempts: item.attempts };
    const status = outcome.kind === 'http' ? outcome.status : undefined;
    if (status !== undefined) item.lastStatus = status;

    if (status !== undefined && isSuccessStatus(status)) {
      this.stats.delivered++;
      if (!superseded) this.removeItem(item);
      return { ...base, disposition: superseded ? 'superseded' : 'delivered', status, stopPass: false };
    }
    const refused = status !== undefined && status >= 400 && status < 600;
    if (!refused) {
      // No answer (or an answer EVE cannot classify): the remaining items would fail the same way.
      this.stats.transportErrors++;
      if (item.discardOnFailure) {
        this.stats.discarded++;
        if (!superseded) this.removeItem(item);
        return { ...base, disposition: superseded ? 'superseded' : 'discarded', status, stopPass: false };
      }
      return { ...base, disposition: superseded ? 'superseded' : 'stopped', status, stopPass: true };
    }
    if (item.discardOnFailure) {
      this.stats.discarded++;
      if (!superseded) this.removeItem(item);
      return { ...base, disposition: superseded ? 'superseded' : 'discarded', status, stopPass: false };
    }
    if (!isRetriableStatus(status)) {
      this.stats.dropped++;
      this.lastDrop = { key: item.key, kind: item.kind, status, at: now };
      if (!superseded) this.removeItem(item);
      return { ...base, disposition: superseded ? 'superseded' : 'dropped', status, stopPass: false };
    }
    this.stats.retried++;
    item.attempts++;
    item.retryAt = now + itemRetryDelayMs(item.attempts);
    return {
      ...base,
      attempts: item.attempts,
      disposition: superseded ? 'superseded' : 'retry',
      status,
      retryAt: item.retryAt,
      stopPass: false,
    };
  }

  /**
   * Reorders after a pass like EVE: items that were in the queue when the pass began come first,
   * those ready to go before those waiting out a backoff (so a refused item cannot hold up its
   * peers); items added during the pass follow in insertion order.
   */
  private endPass(now: Millis): void {
    this.passPending = -1;
    this.passBatch = undefined;
    const ready: QueuedItem[] = [];
    const backoff: QueuedItem[] = [];
    const added: QueuedItem[] = [];
    for (const it of this.items) {
      if (it.seq >= this.passSeqLimit) added.push(it);
      else if (it.retryAt > now) backoff.push(it);
      else ready.push(it);
    }
    this.items = ready.concat(backoff, added);
    if (this.items.length === 0) this.stopTimer();
  }

  private removeItem(item: QueuedItem): void {
    const idx = this.items.indexOf(item);
    if (idx >= 0) this.items.splice(idx, 1);
  }

  private indexOf(key: string): number {
    for (let i = 0; i < this.items.length; i++) if (this.items[i]!.key === key) return i;
    return -1;
  }

  private startTimer(now: Millis): void {
    this.timerStep = 0;
    this.timerAt = now + this.timerDelay(0);
  }

  private advanceTimer(now: Millis): void {
    this.timerStep++;
    this.timerAt = now + this.timerDelay(this.timerStep);
  }

  private stopTimer(): void {
    // EVE switches to a 24–48 h idle ticker that finds nothing to do; no wake-up needed here.
    this.timerAt = undefined;
    this.timerStep = 0;
    this.kicked = false;
  }

  private timerDelay(step: number): Millis {
    const base = Math.min(PASS_TIMER_MIN_MS * 2 ** Math.min(step, 10), PASS_TIMER_MAX_MS);
    return base + Math.round(this.rng.range(-PASS_TIMER_NOISE_MS, PASS_TIMER_NOISE_MS));
  }

  /** Next re-run timer tick (for tests and the progress view). */
  get timerDueAt(): Millis | undefined {
    return this.timerAt;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
