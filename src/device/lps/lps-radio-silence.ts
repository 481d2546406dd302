// Radio silence as EVE applies it (eve-wire-facts §11.3, pkg/pillar/localcommand radio.go): a
// RadioConfig whose radio_silence differs from the last accepted one starts a change that takes a
// while (modems switch to RADIO_OFF or back, Wi-Fi is turned off or on); until it has finished the
// device posts no radio status. A change that cannot be applied ends, after EVE gave up retrying,
// with `config_error` set and the radios left as they were.

import { DeviceTimer } from '../core/device-timer.js';
import type { Millis, Rng, Scheduler } from '../ports.js';

export interface RadioSilenceTiming {
  /** A successful change takes uniform [min, max] ms. Default [2000, 8000]: modem power-state switches. */
  applyDelayMs?: readonly [number, number];
  /** A failing change reports config_error after this many ms of retries. Default 30 000. */
  failAfterMs?: number;
}

export type RadioSilencePhase = 'idle' | 'applying' | 'failed';

export class LpsRadioSilence {
  // Timer callback: one function for every device (see DeviceTimer).
  private static readonly onTimer = (r: LpsRadioSilence, dueAt: Millis): void => r.settle(dueAt);

  /** radio_silence of the last accepted RadioConfig (EVE persists it as lastradioconfig). */
  intent = false;
  /** What the radios actually do now (RadioStatus.radio_silence). */
  imposed = false;
  /** A change is in progress: radio status is not posted. */
  inProgress = false;
  /** RadioStatus.config_error: why the last change failed ('' after a success). */
  configError = '';
  /** While set, every change fails with this message (scenario failure mode). */
  failureMessage: string | undefined;
  private readonly timer: DeviceTimer;
  private readonly delay: readonly [number, number];
  private readonly failAfterMs: number;

  constructor(
    scheduler: Scheduler,
    private readonly rng: Rng,
    timing: RadioSilenceTiming,
    /** Called when a change ended; `imposedChanged` when the radios really switched. */
    private readonly onSettled: (imposed: boolean, imposedChanged: boolean, at: Millis) => void,
  ) {
    this.delay = timing.applyDelayMs ?? [2000, 8000];
    this.failAfterMs = timing.failAfterMs ?? 30_000;
    if (!(this.delay[0] >= 0 && this.delay[1] >= this.delay[0])) {
      throw new Error(`radio silence: applyDelayMs must be [min, max] with 0 <= min <= max, got [${this.delay.join(', ')}]`);
    }
    if (!(this.failAfterMs >= 0)) throw new Error(`radio silence: failAfterMs must be >= 0, got ${this.failAfterMs}`);
    this.timer = new DeviceTimer(scheduler, this, LpsRadioSilence.onTimer);
  }

  get phase(): RadioSilencePhase {
    if (this.inProgress) return 'applying';
    return this.configError !== '' ? 'failed' : 'idle';
  }

  /**
   * A verified RadioConfig (or EVE's default `false` when no LPS is configured). Same value as the
   * accepted one → nothing. Returns true when a change started.
   */
  request(desired: boolean, now: Millis): boolean {
    if (desired === this.intent) return false;
    this.intent = desired;
    this.begin(now);
    return true;
  }

  /** At boot EVE re-applies the saved radio config: radios start on, the saved silence is imposed again. */
  restore(intent: boolean, now: Millis): void {
    this.timer.cancel();
    this.intent = intent;
    this.imposed = false;
    this.configError = '';
    this.inProgress = false;
    if (intent) this.begin(now);
  }

  /** The device stops (power off, reboot): a change in progress is abandoned. */
  halt(): void {
    this.timer.cancel();
    this.inProgress = false;
  }

  private begin(now: Millis): void {
    this.inProgress = true;
    const ms = this.failureMessage !== undefined ? this.failAfterMs : Math.round(this.rng.range(this.delay[0], this.delay[1]));
    this.timer.at(now + ms);
  }

  private settle(at: Millis): void {
    this.inProgress = false;
    if (this.failureMessage !== undefined) {
      this.configError = this.failureMessage;
      this.onSettled(this.imposed, false, at);
      return;
    }
    this.configError = '';
    const changed = this.imposed !== this.intent;
    this.imposed = this.intent;
    this.onSettled(this.imposed, changed, at);
  }
}
