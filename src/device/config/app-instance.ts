// One app instance on a virtual device: the ZSwState path EVE reports while it prepares, boots,
// halts, restarts and purges an app (wire facts §3.4, §6.3). Every state change goes to the host,
// which queues a ZiApp info (keyed by app UUID) and starts or stops the app's logs and flow logs.

import { info } from '../../gen/eve-types.js';
import { armed, disarmed, type DeviceTimer } from '../core/device-timer.js';
import { APP_PURGE_PATH, APP_RESTART_PATH, APP_START_PATH, nextSwState } from '../telemetry/info-builders.js';
import type { Millis, Scheduler } from '../ports.js';

const S = info.ZSwState;

/** What an app instance needs from its device. */
export interface AppHost {
  readonly scheduler: Scheduler;
  /** Milliseconds per ZSwState step. */
  readonly appStepMs: number;
  onAppStateChange(app: AppInstance, previous: info.ZSwState, at: Millis): void;
  /** Runs a scheduler callback so that nothing it throws escapes (counted by the device). */
  guard(fn: () => void): void;
}

/** The parts of an AppInstanceConfig (§3.4) the simulation acts on. */
export interface AppConfigView {
  uuid: string;
  version: string;
  displayName: string;
  activate: boolean;
  profiles: readonly string[];
  restartCounter: number;
  purgeCounter: number;
  volumeRefs: readonly string[];
  /** Network instance UUID of each interface, in order. */
  networks: readonly string[];
}

/**
 * Effective activation (§3.4, zedmanager): the current profile is the local profile if set, else
 * the global one. No current profile, or an app without a profile list, or a profile in the list
 * → `activate`; otherwise the app is stopped.
 */
export function effectiveActivation(
  activate: boolean,
  profiles: readonly string[],
  globalProfile: string,
  localProfile: string,
): boolean {
  const current = localProfile !== '' ? localProfile : globalProfile;
  if (current === '' || profiles.length === 0) return activate;
  return profiles.includes(current) ? activate : false;
}

export class AppInstance {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onTimer = (a: AppInstance, dueAt: Millis): void => {
    a.timer = undefined;
    a.host.guard(() => a.step(dueAt));
  };

  config: AppConfigView;
  state: info.ZSwState = S.INVALID;
  /** Whether the app should be running now (activation, profiles, shutdown all folded in). */
  private wantRunning: boolean;
  /** The start/restart/purge path being walked (shared data from info-builders), or undefined. */
  private path: readonly info.ZSwState[] | undefined;
  /** When the app last reached RUNNING (0 when not running). */
  bootTime: Millis = 0;
  /** The next step of a walk, only while one is due (core/device-timer.ts): a settled app holds none. */
  private timer: DeviceTimer | undefined;

  constructor(
    private readonly host: AppHost,
    config: AppConfigView,
    wantRunning: boolean,
    now: Millis,
  ) {
    this.config = config;
    this.wantRunning = wantRunning;
    this.walk(APP_START_PATH, now);
  }

  get uuid(): string {
    return this.config.uuid;
  }

  get running(): boolean {
    return this.state === S.RUNNING;
  }

  /** Whether the app rests in the state it should (RUNNING or HALTED) with nothing left to do. */
  get settled(): boolean {
    return this.path === undefined && this.timer === undefined && this.state === (this.wantRunning ? S.RUNNING : S.HALTED);
  }

  /**
   * Applies a new configuration of the same app. Restart and purge act only when their counter
   * changes against the previous configuration (the first value is only recorded).
   */
  update(config: AppConfigView, wantRunning: boolean, now: Millis): void {
    const prev = this.config;
    this.config = config;
    this.wantRunning = wantRunning;
    if (config.purgeCounter !== prev.purgeCounter) {
      this.walk(APP_PURGE_PATH, now);
      return;
    }
    if (config.restartCounter !== prev.restartCounter && this.state === S.RUNNING && wantRunning) {
      this.walk(APP_RESTART_PATH, now);
      return;
    }
    this.kick(now);
  }

  /** Changes whether the app should run (deactivate, profile switch, shutdown command). */
  setWantRunning(wantRunning: boolean, now: Millis): void {
    if (wantRunning === this.wantRunning) return;
    this.wantRunning = wantRunning;
    this.kick(now);
  }

  /**
   * A restart or purge a local profile server asked for (EVE bumps a local counter, §11.3): the
   * same paths as the controller's counters. A purge of an app that should not run ends HALTED.
   */
  localCommand(kind: 'restart' | 'purge', now: Millis): void {
    this.walk(kind === 'purge' ? APP_PURGE_PATH : APP_RESTART_PATH, now);
  }

  /** Device rebooted: the app comes back from its installed volumes, as zedmanager does at boot. */
  rebootReset(wantRunning: boolean, now: Millis): void {
    this.timer = disarmed(this.timer);
    this.wantRunning = wantRunning;
    this.path = undefined;
    this.moveTo(S.INSTALLED, now);
    this.arm(now + this.host.appStepMs);
  }

  /** The app was removed from the configuration (or the device stops): no more wake-ups. */
  dispose(): void {
    this.timer = disarmed(this.timer);
    this.path = undefined;
  }

  private arm(at: Millis): void {
    this.timer = armed(this.timer, at, this.host.scheduler, this, AppInstance.onTimer);
  }

  /** From a resting state EVE reacts at once (HALTING / BOOTING reported promptly); a walk in
   *  progress picks the new target up at its next step. */
  private kick(now: Millis): void {
    if (this.timer === undefined) this.step(now);
  }

  private walk(path: readonly info.ZSwState[], now: Millis): void {
    this.timer = disarmed(this.timer);
    this.path = path;
    this.moveTo(path[0]!, now);
    this.arm(now + this.host.appStepMs);
  }

  /** One step towards the wanted resting state; re-arms itself until it gets there. */
  private step(now: Millis): void {
    const next = this.nextState();
    if (next === undefined) return;
    this.moveTo(next, now);
    if (this.nextState() !== undefined) this.arm(now + this.host.appStepMs);
  }

  private nextState(): info.ZSwState | undefined {
    if (this.path !== undefined) {
      const next = nextSwState(this.path, this.state);
      // An app that should not run stops short of booting and rests HALTED (§3.4 activate=false).
      if (next === S.BOOTING && !this.wantRunning) return S.HALTED;
      if (next === S.RUNNING && !this.wantRunning) return S.HALTING;
      if (next !== undefined) return next;
    }
    switch (this.state) {
      case S.RUNNING:
        return this.wantRunning ? undefined : S.HALTING;
      case S.HALTED:
        return this.wantRunning ? S.BOOTING : undefined;
      case S.BOOTING:
        return this.wantRunning ? S.RUNNING : S.HALTING;
      case S.HALTING:
        return S.HALTED;
      default:
        return this.wantRunning ? S.BOOTING : S.HALTED;
    }
  }

  private moveTo(next: info.ZSwState, now: Millis): void {
    if (this.path !== undefined && this.path.indexOf(next) < 0) this.path = undefined;
    const previous = this.state;
    this.state = next;
    if (next === S.RUNNING) {
      this.bootTime = now;
      this.path = undefined;
    } else if (previous === S.RUNNING) this.bootTime = 0;
    if (previous !== next) this.host.onAppStateChange(this, previous, now);
  }
}
