// One re-armable wake-up of a device, on the scheduler it was given. The timer itself is what the
// scheduler wakes (WakeTarget), so re-arming allocates nothing. A worker holds ten to twenty timers
// for each of its thousands of devices, so a timer holds no closure of its own either: it calls a
// function shared by every device (a static of the owning class) with its owner.

import type { Millis, Scheduler, TimerHandle } from '../ports.js';

// `DeviceTimer` (Owner = never) holds a timer of any owner: only the constructor ties the two.
export class DeviceTimer<Owner = never> {
  private handle: TimerHandle | undefined;
  /** When the armed wake-up is due, or NaN when idle. */
  private due = Number.NaN;
  private readonly owner: unknown;
  private readonly onFire: (owner: Owner, dueAt: Millis) => void;

  /** `onFire` is called with `owner` when a wake-up is due: one function for every device, not a closure per device. */
  constructor(
    private readonly scheduler: Scheduler,
    owner: Owner,
    onFire: (owner: Owner, dueAt: Millis) => void,
  ) {
    this.owner = owner;
    this.onFire = onFire;
  }

  /** Called by the scheduler when the armed wake-up is due. */
  wake(dueAt: Millis): void {
    this.handle = undefined;
    this.due = Number.NaN;
    this.onFire(this.owner as Owner, dueAt);
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

/**
 * For wake-ups a device seldom has pending (onboarding and attestation retries, reboots, app and
 * volume steps, a flow-log resend): the owner holds its timer only while it is armed, because most
 * of the fleet's devices have none of these pending at any moment and an idle timer still costs
 * about 80 bytes. `armed(timer, …)` arms the given timer or a new one and returns it; the owner's
 * `onFire` forgets its timer before acting (the wake-up has fired), and `disarmed(timer)` cancels
 * and returns undefined to store.
 */
export function armed<Owner>(
  timer: DeviceTimer | undefined,
  at: Millis,
  scheduler: Scheduler,
  owner: Owner,
  onFire: (owner: Owner, dueAt: Millis) => void,
): DeviceTimer {
  const t: DeviceTimer = timer ?? new DeviceTimer(scheduler, owner, onFire);
  t.at(at);
  return t;
}

/** Cancels `timer` (if any); the value to store in its place. */
export function disarmed(timer: DeviceTimer | undefined): undefined {
  timer?.cancel();
  return undefined;
}
