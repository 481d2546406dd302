// Metrics as EVE sends them (§7.4): the first POST right after start, then every uniform
// [0.3×, 1.0×] timer.metric.interval; sent directly, never queued or retried: a failure is only
// counted. A tick that finds the previous POST still running is skipped, as EVE's single
// publisher goroutine would.

import { v2Path, type EndpointKey } from '../../protocol/endpoints.js';
import { Msg } from '../../protocol/messages.js';
import type { DeviceFinding, DeviceOptions } from '../device-options.js';
import { isSuccess, type Answer, type DeviceSender } from '../sender/device-sender.js';
import { DeviceTimer } from '../core/device-timer.js';
import { metricsDelayMs, MetricsInterval } from '../core/eve-timers.js';
import type { DeviceCounters, MetricsInput } from './metrics-builder.js';
import type { Millis } from '../ports.js';

export interface MetricsHost {
  readonly opts: DeviceOptions;
  readonly sender: DeviceSender;
  readonly counters: DeviceCounters;
  readonly uuid: string;
  readonly generation: number;
  metricsInput(): MetricsInput;
  finding(endpoint: EndpointKey, kind: DeviceFinding['kind'], detail: string): void;
  guard(fn: () => Promise<void> | void): void;
}

export class MetricsReporter {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onTimer = (r: MetricsReporter, dueAt: Millis): void => r.host.guard(() => r.tick(dueAt));

  readonly interval = new MetricsInterval();
  private readonly timer: DeviceTimer;
  private inFlight = false;
  /** POSTs that got no success answer (lost: metrics are not reliable). */
  failed = 0;

  constructor(private readonly host: MetricsHost) {
    this.timer = new DeviceTimer(host.opts.scheduler, this, MetricsReporter.onTimer);
  }

  start(now: Millis): void {
    this.inFlight = false;
    this.timer.at(now);
  }

  stop(): void {
    this.timer.cancel();
  }

  /** timer.metric.interval from config: a shorter value applies now, a longer one after one success. */
  configure(metricIntervalS: number, now: Millis): void {
    // A shorter interval pulls in a wake-up that lies beyond its range (never delays an earlier one).
    if (this.interval.configure(metricIntervalS) && this.timer.armed && this.timer.dueAt > now + this.interval.seconds * 1000) this.rearm(now);
  }

  private rearm(now: Millis): void {
    this.timer.at(now + metricsDelayMs(this.host.opts.rng, this.interval.seconds));
  }

  // A chain of then() rather than an async function: a tick whose POST waits seconds for an
  // in-flight slot holds only what its handler needs, not a suspended frame with every local.
  private tick(dueAt: Millis): Promise<void> | undefined {
    const host = this.host;
    const now = host.opts.clock.now();
    this.rearm(now);
    if (this.inFlight) return undefined;
    this.inFlight = true;
    const gen = host.generation;
    let sent: Promise<Answer>;
    try {
      const bytes = Msg.ZMetricMsg.encode(host.counters.build(host.metricsInput(), now, host.opts.rng));
      sent = host.sender.post('metrics', v2Path('metrics', host.uuid), bytes, dueAt);
    } catch (err) {
      this.postEnded(gen);
      throw err;
    }
    return sent.then(
      (answer) => {
        this.postEnded(gen);
        if (gen === host.generation) this.onAnswer(answer);
      },
      (err: unknown) => {
        this.postEnded(gen);
        throw err;
      },
    );
  }

  /** The POST has ended: the next tick may send again (unless the device rebooted meanwhile). */
  private postEnded(gen: number): void {
    if (gen === this.host.generation) this.inFlight = false;
  }

  private onAnswer(answer: Answer): void {
    if (answer !== undefined && isSuccess(answer.status)) {
      if (this.interval.onSendSuccess()) this.rearm(this.host.opts.clock.now());
      return;
    }
    this.failed++;
  }
}
