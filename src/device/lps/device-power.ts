// Device commands from a local profile server (LocalDevCmd, eve-wire-facts §11.3) as EVE carries
// them out: every app instance is halted first, the device state says what is going on
// (zedagent getState: REBOOTING; PREPARING_POWEROFF until all apps halted, then PREPARED_POWEROFF
// for a shutdown or POWERING_OFF for a graceful poweroff), and only then does the device reboot or
// power off. collect-info is acknowledged and does nothing here. The device does the actual
// reboot and power-off (virtual-device.ts); this object only sequences them.

import { info } from '../../gen/eve-types.js';
import { DeviceTimer } from '../core/device-timer.js';
import type { Millis, Scheduler } from '../ports.js';

export type LocalDeviceCommand = 'shutdown' | 'poweroff' | 'reboot' | 'collect-info';

const ST = info.ZDeviceState;

/** The longest a device waits for its apps to halt before it goes on anyway. */
export const APP_HALT_TIMEOUT_MS = 60_000;
/** Between POWERING_OFF being reported and the power going off. */
export const POWEROFF_GRACE_MS = 5_000;

export interface DevicePowerHost {
  readonly scheduler: Scheduler;
  /** How often the device looks whether its apps have halted. */
  readonly appStepMs: number;
  /** Every app instance stops and stays stopped until the next boot. */
  haltAllApps(now: Millis): void;
  allAppsHalted(): boolean;
  /** ZInfoDevice.state / LocalDevInfo.state changed: report it. */
  setDeviceState(state: info.ZDeviceState, now: Millis): void;
  /** Apps halted after a graceful poweroff: the power goes off until someone powers it on. */
  powerOff(now: Millis): void;
  /** Apps halted after a graceful reboot: reboot now (next boot reason REBOOT_CMD). */
  rebootForCommand(now: Millis): void;
  guard(fn: () => void): void;
}

type Phase = 'halting' | 'prepared' | 'powering-off';

export class LocalDeviceCommands {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onTimer = (p: LocalDeviceCommands, dueAt: Millis): void => p.host.guard(() => p.step(dueAt));

  private op: Exclude<LocalDeviceCommand, 'collect-info'> | undefined;
  private phase: Phase | undefined;
  private since: Millis = 0;
  private readonly timer: DeviceTimer;

  constructor(private readonly host: DevicePowerHost) {
    this.timer = new DeviceTimer(host.scheduler, this, LocalDeviceCommands.onTimer);
  }

  /** The command being carried out, if any. */
  get current(): LocalDeviceCommand | undefined {
    return this.op;
  }

  /**
   * A new device command. Returns false when the device will not take it now (it is already going
   * down for a reboot or poweroff): the LPS keeps sending it and it is applied after the boot.
   */
  apply(command: LocalDeviceCommand, now: Millis): boolean {
    if (command === 'collect-info') return true;
    if (this.op === 'reboot' || this.op === 'poweroff') return false;
    this.op = command;
    this.phase = 'halting';
    this.since = now;
    this.host.haltAllApps(now);
    this.host.setDeviceState(command === 'reboot' ? ST.ZDEVICE_STATE_REBOOTING : ST.ZDEVICE_STATE_PREPARING_POWEROFF, now);
    this.timer.at(now + this.host.appStepMs);
    return true;
  }

  /** The device went down (reboot, power loss): whatever was in progress is over. */
  reset(): void {
    this.timer.cancel();
    this.op = undefined;
    this.phase = undefined;
  }

  private step(now: Millis): void {
    const h = this.host;
    if (this.phase === 'halting') {
      if (!h.allAppsHalted() && now - this.since < APP_HALT_TIMEOUT_MS) {
        this.timer.at(now + h.appStepMs);
        return;
      }
      switch (this.op) {
        case 'shutdown':
          this.phase = 'prepared';
          h.setDeviceState(ST.ZDEVICE_STATE_PREPARED_POWEROFF, now);
          return;
        case 'poweroff':
          this.phase = 'powering-off';
          h.setDeviceState(ST.ZDEVICE_STATE_POWERING_OFF, now);
          this.timer.at(now + POWEROFF_GRACE_MS);
          return;
        case 'reboot':
          h.rebootForCommand(now);
          return;
      }
      return;
    }
    if (this.phase === 'powering-off') h.powerOff(now);
  }
}
