// Simulated time that runs `speed` times faster than real time, and a pump that drives a real
// HeapScheduler from it (runDue, as the scheduler's own tests do), so real I/O (HTTPS to a test
// server) and minutes of EVE timers fit into a few seconds of a test.

import type { Clock, Millis } from '../../src/device/ports.js';
import type { HeapScheduler } from '../../src/fleet/heap-scheduler.js';

export class FastClock implements Clock {
  private readonly realStart = performance.now();

  constructor(
    readonly speed: number,
    readonly start: Millis = Date.now(),
  ) {}

  now(): Millis {
    return this.start + (performance.now() - this.realStart) * this.speed;
  }
}

/** Fires the scheduler's due wake-ups every millisecond of real time; returns a stop function. */
export function pumpScheduler(scheduler: HeapScheduler, clock: Clock): () => void {
  const timer = setInterval(() => scheduler.runDue(clock.now(), 20), 1);
  return () => clearInterval(timer);
}
