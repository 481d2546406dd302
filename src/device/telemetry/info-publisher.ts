// Drives EVE's keyed deferred queue (info-queue.ts, §6.5) over the device's sender: info messages
// and the attestation certificate post are marshalled once at enqueue time, sent in passes in
// EVE's order, retried or dropped by EVE's rules. Dropped items, and items still queued when the
// device reboots or stops, are counted as undelivered (info is reliable per the spec).

import { v2Path, type EndpointKey } from '../../protocol/endpoints.js';
import { Msg } from '../../protocol/messages.js';
import type { info } from '../../gen/eve-types.js';
import type { DeviceFinding, DeviceOptions } from '../device-options.js';
import type { DeviceSender } from '../sender/device-sender.js';
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

  private async pass(dueAt: Millis): Promise<void> {
    const host = this.host;
    const gen = host.generation;
    if (this.drainKickAt !== undefined && host.opts.clock.now() >= this.drainKickAt) {
      this.queue.expedite();
      this.drainKickAt = undefined;
    }
    const batch = this.queue.takeBatch(host.opts.clock.now());
    this.passRunning = batch.length > 0;
    try {
      for (let i = 0; i < batch.length; i++) {
        const item = batch[i]!;
        const stop = await this.sendOne(item, i === 0 ? dueAt : host.opts.clock.now());
        if (gen !== host.generation) return;
        if (stop) break;
      }
    } finally {
      if (gen === host.generation) {
        this.passRunning = false;
        this.rearm(host.opts.clock.now());
      }
    }
  }

  /** Sends one queued item and reports it; true when the pass must stop. */
  private async sendOne(item: QueuedItem, dueAt: Millis): Promise<boolean> {
    const host = this.host;
    const gen = host.generation;
    const endpoint = endpointForKind(item.kind);
    const answer = await host.sender.post(endpoint, v2Path(endpoint, host.uuid), item.bytes, dueAt);
    if (gen !== host.generation) return true;
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
