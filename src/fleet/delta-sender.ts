// Posts a FleetDelta to the main thread every interval over a MessagePort. The timer is unref'd:
// it must never be what keeps a finished worker alive.

import type { MessagePort } from 'node:worker_threads';
import type { FleetDelta } from './fleet-delta.js';

/** What travels on the port: deltas, and nothing else, so the main side can check the tag. */
export interface DeltaMessage {
  type: 'delta';
  delta: FleetDelta;
}

export class DeltaSender {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly port: Pick<MessagePort, 'postMessage'>,
    private readonly take: (final: boolean) => FleetDelta,
    private readonly intervalMs = 1000,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.send(false), this.intervalMs);
    this.timer.unref();
  }

  /** Sends one delta now (the last one with final = true). */
  send(final: boolean): void {
    try {
      const msg: DeltaMessage = { type: 'delta', delta: this.take(final) };
      this.port.postMessage(msg);
    } catch (err) {
      this.onError(err);
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
