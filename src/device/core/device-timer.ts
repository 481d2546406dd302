// One re-armable wake-up of a device, on the scheduler it was given. The timer itself is what the
// scheduler wakes (WakeTarget), so re-arming allocates nothing and a timer costs no closure of its
// own: a worker holds ten to twenty of them for each of its thousands of devices.

import type { Millis, Scheduler, TimerHandle } from '../ports.js';

export class DeviceTimer {
  private handle: TimerHandle | undefined;
  /** When the armed wake-up is due, or NaN when idle. */
  private due = Number.NaN;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly onFire: (dueAt: Millis) => void,
  ) {}

  /** Called by the scheduler when the armed wake-up is due. */
  wake(dueAt: Millis): void {
    this.handle = undefined;
    this.due = Number.NaN;
    this.onFire(dueAt);
  }

  /** Arms (or re-arms) the timer for `at`; an earlier pending wake-up is cancelled. */
  at(at: Millis): void {
    if (this.handle !== undefined) this.scheduler.cancel(this.handle);
    this.due = at;
    this.handle = this.scheduler.at(at, this);
  }

  /** Arms the timer only if it is idle or due later than `at` (keeps the earliest wake-up). */
  atOrSooner(at: Millis): void {
    if (this.handle === undefined || at < this.due) this.at(at);
  }

  cancel(): void {
    if (this.handle !== undefined) this.scheduler.cancel(this.handle);
    this.handle = undefined;
    this.due = Number.NaN;
  }

  get armed(): boolean {
    return this.handle !== undefined;
  }

  /** Due time of the armed wake-up (NaN when idle). */
  get dueAt(): Millis {
    return this.due;
  }
}
