// Drives EVE's keyed deferred queue (info-queue.ts, §6.5) over the device's sender: info messages
// and the attestation certificate post are marshalled once at enqueue time, sent in passes in
// EVE's order, retried or dropped by EVE's rules. Dropped items, and items still queued when the
// device reboots or stops, are counted as undelivered (info is reliable per the spec).

import { v2Path, type EndpointKey } from '../../protocol/endpoints.js';
import { Msg } from '../../protocol/messages.js';
import type { info } from '../../gen/eve-types.js';
import type { DeviceFinding, DeviceOptions } from '../device-options.js';
import type { Answer, DeviceSender } from '../sender/device-sender.js';
import type { DeviceStats } from '../sender/device-stats.js';
import { armed, disarmed, type DeviceTimer } from '../core/device-timer.js';
import { endpointForKind, InfoQueue, type InfoQueueKind, type QueuedItem } from './info-queue.js';
import type { Millis } from '../ports.js';

export interface InfoHost {
  readonly opts: DeviceOptions;
  readonly sender: DeviceSender;
  readonly tally: DeviceStats;
  readonly uuid: string;
  readonly generation: number;
  finding(endpoint: EndpointKey, kind: DeviceFinding['kind'], detail: string): void;
  /** Outcome of the ATTEST_REQ_CERT post (kind 'attest'): delivered, or discarded on failure. */
  onAttestCertsOutcome(delivered: boolean, now: Millis): void;
  guard(fn: () => Promise<void> | void): void;
}

/** Info the device owes the controller: not the attestation certificate post, not periodic location. */
const isReliableInfo = (kind: InfoQueueKind): boolean => kind !== 'attest' && kind !== 'location';

export class InfoPublisher {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onTimer = (p: InfoPublisher, dueAt: Millis): void => {
    p.timer = undefined;
    p.host.guard(() => p.pass(dueAt));
  };

  readonly queue: InfoQueue;
  /** The next pass, only while one is due (core/device-timer.ts): most of the time nothing waits. */
  private timer: DeviceTimer | undefined;
  private passRunning = false;
  /** End-of-run drain (core/graceful-drain.ts): the one kick every item gets, and when. */
  private drainKickAt: Millis | undefined;
  /** pendingInfo as the worker's ReliableBacklog last counted it. */
  private backlogCounted = 0;

  constructor(private readonly host: InfoHost) {
    this.queue = new InfoQueue(host.opts.rng);
  }

  /** Queues an info message under `key` (the object's UUID) and kicks a pass. */
  publish(key: string, kind: InfoQueueKind, msg: info.ZInfoMsg, now: Millis): void {
    this.enqueue(key, kind, Msg.ZInfoMsg.encode(msg), now, false);
  }

  /** Queues already encoded bytes (the attestation certificate post: discard on failure). */
  enqueue(key: string, kind: InfoQueueKind, bytes: Uint8Array, now: Millis, discardOnFailure: boolean): void {
    this.queue.enqueue(key, kind, bytes, now, { discardOnFailure });
    this.settleBacklog();
    this.rearm(now);
  }

  /** Reliable info waiting (the attestation certificate post is no info message; periodic location is best effort). */
  get pendingInfo(): number {
    return this.queue.size === 0 ? 0 : this.queue.count(isReliableInfo);
  }

  /**
   * End of the run (simulator action, core/graceful-drain.ts): at `deliverFrom` the queue is kicked
   * once with every item due (backoff forgotten); after that EVE's own rules apply (§6.5: per-item
   * backoff 1, 2, 4 … min, pass timer), so a refusing controller gets no quick retries.
   */
  drain(now: Millis, deliverFrom: Millis = now): void {
    this.drainKickAt = Math.max(now, deliverFrom);
    this.rearm(now);
  }

  /** The device reboots or stops: the queue lives in memory, whatever is in it is lost. */
  discardAll(): void {
    this.host.tally.addUndelivered('info', this.pendingInfo);
    this.queue.clear();
    this.settleBacklog();
    this.timer = disarmed(this.timer);
    this.passRunning = false;
  }

  /** Tells the worker's totals how much reliable info waits now (after every change to the queue). */
  private settleBacklog(): void {
    const fleet = this.host.opts.backlog;
    if (fleet) this.backlogCounted = fleet.settle('info', this.backlogCounted, this.pendingInfo);
  }

  private rearm(now: Millis): void {
    if (this.passRunning) return; // the pass re-arms when it ends
    if (this.drainKickAt !== undefined) {
      this.timer = this.queue.size === 0 ? disarmed(this.timer) : this.armAt(this.drainKickAt);
      return;
    }
    const due = this.queue.nextDue(now);
    if (due === undefined) this.timer = disarmed(this.timer);
    else if (this.timer === undefined) this.timer = this.armAt(due);
    else this.timer.atOrSooner(due);
  }

  private armAt(at: Millis): DeviceTimer {
    return armed(this.timer, at, this.host.opts.scheduler, this, InfoPublisher.onTimer);
  }

  // The pass is a chain of then() rather than an async loop: while an item's request waits seconds
  // for an in-flight slot, the pass holds only what its next step needs, where two suspended async
  // frames held every local (bench/waiting-request-memory.ts, "a device's info pass").
  private pass(dueAt: Millis): Promise<void> | undefined {
    const host = this.host;
    const gen = host.generation;
    if (this.drainKickAt !== undefined && host.opts.clock.now() >= this.drainKickAt) {
      this.queue.expedite();
      this.drainKickAt = undefined;
    }
    const batch = this.queue.takeBatch(host.opts.clock.now());
    this.passRunning = batch.length > 0;
    return this.sendFrom(batch, 0, dueAt, gen);
  }

  /** Sends batch[i], then the rest in order, until an answer stops the pass or the device reboots. */
  private sendFrom(batch: QueuedItem[], i: number, dueAt: Millis, gen: number): Promise<void> | undefined {
    if (i >= batch.length) {
      this.passEnded(gen);
      return undefined;
    }
    const item = batch[i]!;
    let sent: Promise<Answer>;
    try {
      const endpoint = endpointForKind(item.kind);
      sent = this.host.sender.post(endpoint, v2Path(endpoint, this.host.uuid), item.bytes, dueAt);
    } catch (err) {
      this.passEnded(gen);
      throw err;
    }
    return sent.then(
      (answer) => {
        if (gen !== this.host.generation) return undefined;
        let stop: boolean;
        try {
          stop = this.onSent(item, answer);
        } catch (err) {
          this.passEnded(gen);
          throw err;
        }
        // Reporting runs the device's own callbacks (the attestation certificates' outcome): if the device
        // went down in one, its pass ended with that boot.
        if (gen !== this.host.generation) return undefined;
        if (stop) {
          this.passEnded(gen);
          return undefined;
        }
        return this.sendFrom(batch, i + 1, this.host.opts.clock.now(), gen);
      },
      (err: unknown) => {
        this.passEnded(gen);
        throw err;
      },
    );
  }

  /**
   * The pass is over: the next one is armed (unless the device rebooted meanwhile, which ended it).
   * A pass cut short by an error ends in the queue too, its unsent items kept for the next pass;
   * otherwise the queue would wait for reports that never come and send no info again.
   */
  private passEnded(gen: number): void {
    if (gen !== this.host.generation) return;
    const now = this.host.opts.clock.now();
    this.queue.abortPass(now);
    this.passRunning = false;
    this.rearm(now);
  }

  /** Reports one sent item's outcome; true when the pass must stop. */
  private onSent(item: QueuedItem, answer: Answer): boolean {
    const host = this.host;
    const now = host.opts.clock.now();
    const result = this.queue.report(item, answer === undefined ? { kind: 'transport' } : { kind: 'http', status: answer.status }, now);
    this.settleBacklog();
    if (item.kind === 'attest') {
      if (result.disposition === 'delivered') host.onAttestCertsOutcome(true, now);
      else if (result.disposition === 'discarded') host.onAttestCertsOutcome(false, now);
    } else if (result.disposition === 'dropped' || (result.disposition === 'discarded' && item.kind !== 'location')) {
      // Periodic location is best effort (§6.5): discarding it loses nothing the device owed.
      host.tally.addUndelivered('info', 1);
    }
    return result.stopPass;
  }
}
