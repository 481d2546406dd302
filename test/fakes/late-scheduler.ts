// A Scheduler that fires every wake-up `lagMs` late on a FakeTime and still hands the callback the
// time it was due — what a busy generator's scheduler does. Tests use it to check that lateness
// shows up as latency instead of disappearing.

import { wake, type Millis, type Scheduler, type TimerHandle, type WakeTarget } from '../../src/device/ports.js';
import type { FakeTime } from '../device-harness.js';

export class LateScheduler implements Scheduler {
  constructor(
    private readonly time: FakeTime,
    private readonly lagMs: Millis,
  ) {}

  at(at: Millis, target: WakeTarget): TimerHandle {
    return this.time.at(at + this.lagMs, () => wake(target, at));
  }

  cancel(handle: TimerHandle): void {
    this.time.cancel(handle);
  }
}
