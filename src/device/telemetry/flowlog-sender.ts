// Flow logs as EVE's zedrouter sends them (§9): every flowlogIntervalMs one FlowMessage per running
// app interface, marshalled once; sent one at a time, the same message retried with backoff
// 1, 2, 4 … 128 s until delivered (flow logs are reliable). The queue is small and bounded: a new
// message that finds it full is dropped, as EVE drops when its queue is over 90 % full, and
// counted as undelivered, as is anything still queued at reboot or stop.

import { v2Path, type EndpointKey } from '../../protocol/endpoints.js';
import { Msg } from '../../protocol/messages.js';
import type { DeviceFinding, DeviceOptions } from '../device-options.js';
import { isSuccess, type Answer, type DeviceSender } from '../sender/device-sender.js';
import type { DeviceStats } from '../sender/device-stats.js';
import { DeviceTimer, armed, disarmed } from '../core/device-timer.js';
import { flowlogRetryDelayMs } from '../core/eve-timers.js';
import { buildFlowMessage, type FlowScope } from './flowlog-builder.js';
import type { DeviceCounters } from './metrics-builder.js';
import type { Millis } from '../ports.js';
import { exactBytes } from '../../protocol/exact-bytes.js';

/** Messages kept waiting per device (bounded memory; EVE's channel is similarly small). */
export const FLOWLOG_QUEUE_LIMIT = 8;

export interface FlowSource {
  scope: FlowScope;
  flowsPerMessage: number;
}

export interface FlowlogHost {
  readonly opts: DeviceOptions;
  readonly sender: DeviceSender;
  readonly tally: DeviceStats;
  readonly counters: DeviceCounters;
  readonly uuid: string;
  readonly generation: number;
  /** One entry per running app interface whose network instance collects flow logs. */
  flowSources(): FlowSource[];
  finding(endpoint: EndpointKey, kind: DeviceFinding['kind'], detail: string): void;
  guard(fn: () => Promise<void> | void): void;
}

interface PendingFlowMessage {
  bytes: Uint8Array;
  flows: number;
  dns: number;
}

export class FlowlogSender {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onCollectTimer = (f: FlowlogSender, dueAt: Millis): void => f.host.guard(() => f.collect(dueAt));
  private static readonly onSendTimer = (f: FlowlogSender, dueAt: Millis): void => {
    f.sendTimer = undefined;
    f.host.guard(() => f.sendHead(dueAt));
  };

  private pending: PendingFlowMessage[] = [];
  private failures = 0;
  private sending = false;
  /** The queue's length as the worker's ReliableBacklog last counted it. */
  private backlogCounted = 0;
  private windowStart: Millis = 0;
  private readonly collectTimer: DeviceTimer;
  /** A resend after a failure (or the drain's first send), only while one is due (core/device-timer.ts). */
  private sendTimer: DeviceTimer | undefined;

  constructor(private readonly host: FlowlogHost) {
    this.collectTimer = new DeviceTimer(host.opts.scheduler, this, FlowlogSender.onCollectTimer);
  }

  get queued(): number {
    return this.pending.length;
  }

  start(now: Millis): void {
    this.windowStart = now;
    this.collectTimer.at(now + this.host.opts.behaviour.flowlogIntervalMs);
  }

  /**
   * End of the run (simulator action, core/graceful-drain.ts): no new flow windows; the head of the
   * queue is sent at `deliverFrom` (backoff forgotten once), then retried on EVE's 1, 2, 4 … 128 s
   * backoff (§9). A send already under way goes on by the same rule.
   */
  drain(now: Millis, deliverFrom: Millis = now): void {
    this.collectTimer.cancel();
    if (this.sending || this.pending.length === 0) return;
    this.failures = 0;
    this.armSend(Math.max(now, deliverFrom));
  }

  /** Reboot or stop: the queue is in memory; what it holds is lost and counted. */
  discardAll(): void {
    this.collectTimer.cancel();
    this.sendTimer = disarmed(this.sendTimer);
    this.host.tally.addUndelivered('flowlog', this.pending.length);
    this.pending = [];
    this.settleBacklog();
    this.failures = 0;
    this.sending = false;
  }

  private armSend(at: Millis): void {
    this.sendTimer = armed(this.sendTimer, at, this.host.opts.scheduler, this, FlowlogSender.onSendTimer);
  }

  /** Tells the worker's totals how many messages wait now (after every change to the queue). */
  private settleBacklog(): void {
    const fleet = this.host.opts.backlog;
    if (fleet) this.backlogCounted = fleet.settle('flowlog', this.backlogCounted, this.pending.length);
  }

  private collect(dueAt: Millis): void {
    const host = this.host;
    const now = host.opts.clock.now();
    this.collectTimer.at(now + host.opts.behaviour.flowlogIntervalMs);
    for (const src of host.flowSources()) {
      const msg = buildFlowMessage(src.scope, { flows: src.flowsPerMessage, windowStart: this.windowStart, windowEnd: now }, host.opts.rng);
      const entry = { bytes: exactBytes(Msg.FlowMessage.encode(msg)), flows: msg.flows?.length ?? 0, dns: msg.dnsReqs?.length ?? 0 };
      if (this.pending.length >= FLOWLOG_QUEUE_LIMIT) {
        host.tally.addUndelivered('flowlog', 1);
        host.counters.recordFlowlog({ delivered: false, flows: entry.flows, dnsRequests: entry.dns, dropped: true });
        continue;
      }
      this.pending.push(entry);
    }
    this.windowStart = now;
    this.settleBacklog();
    if (!this.sending && this.sendTimer === undefined && this.pending.length > 0) host.guard(() => this.sendHead(dueAt));
  }

  /** Sends the oldest message; on success goes straight on with the next one. */
  private sendHead(dueAt: Millis): Promise<void> | undefined {
    this.sending = true;
    return this.sendNext(dueAt, this.host.generation);
  }

  // A chain of then() rather than an async loop: while the head's request waits seconds for an
  // in-flight slot, the send holds only what its next step needs, not a suspended frame.
  private sendNext(dueAt: Millis, gen: number): Promise<void> | undefined {
    const host = this.host;
    if (this.pending.length === 0) {
      this.sendEnded(gen);
      return undefined;
    }
    const head = this.pending[0]!;
    let sent: Promise<Answer>;
    try {
      sent = host.sender.post('flowlog', v2Path('flowlog', host.uuid), head.bytes, dueAt);
    } catch (err) {
      this.sendEnded(gen);
      throw err;
    }
    return sent.then(
      (answer) => {
        if (gen !== host.generation) return undefined;
        let delivered: boolean;
        try {
          delivered = this.onAnswer(head, answer);
        } catch (err) {
          this.sendEnded(gen);
          throw err;
        }
        if (!delivered) {
          this.sendEnded(gen);
          return undefined;
        }
        return this.sendNext(host.opts.clock.now(), gen);
      },
      (err: unknown) => {
        this.sendEnded(gen);
        throw err;
      },
    );
  }

  /** Counts the head's answer: true when it was delivered (and left the queue), else a resend is armed. */
  private onAnswer(head: PendingFlowMessage, answer: Answer): boolean {
    const host = this.host;
    const now = host.opts.clock.now();
    if (answer !== undefined && isSuccess(answer.status)) {
      this.pending.shift();
      this.settleBacklog();
      this.failures = 0;
      host.counters.recordFlowlog({ delivered: true, flows: head.flows, dnsRequests: head.dns });
      return true;
    }
    this.failures++;
    host.counters.recordFlowlog({ delivered: false, flows: head.flows, dnsRequests: head.dns });
    this.armSend(now + flowlogRetryDelayMs(this.failures));
    return false;
  }

  /** The send has ended (unless the device rebooted meanwhile, which ended it already). */
  private sendEnded(gen: number): void {
    if (gen === this.host.generation) this.sending = false;
  }
}
