// Simulated time for benches that drive devices on the fleet's own HeapScheduler: time jumps from
// one wake-up to the next once what the current instant set off (answers, uploads) has settled, so
// minutes of a fleet's life take seconds and CPU figures are not diluted by waiting.

import type { Millis } from '../src/device/ports.js';
import { HeapScheduler } from '../src/fleet/heap-scheduler.js';

export class SimTime {
  t: Millis;
  now = (): Millis => this.t;
  readonly scheduler: HeapScheduler;

  constructor(startMs: Millis = Math.floor(Date.now() / 1000) * 1000) {
    this.t = startMs;
    this.scheduler = new HeapScheduler(this, {
      onError: (e) => {
        throw e;
      },
    });
  }

  /** Runs the wake-ups due up to `until`, in time order; the answers of each instant settle first, as they may arm earlier wake-ups. */
  async runUntil(until: Millis): Promise<void> {
    for (;;) {
      await settle();
      const next = this.scheduler.nextDueAt();
      if (next > until) break;
      if (next > this.t) this.t = next;
      this.scheduler.runDue(this.t);
    }
    this.t = Math.max(this.t, until);
  }
}

/** Lets promise chains started by the current instant (in-process answers, spill reads) move on. */
async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise<void>((r) => setImmediate(r));
}
