// What ties a virtual device to its local profile server and its radios: the LpsAgent (EVE's LPS
// client, lps-agent.ts) with the device as its view and host, the cellular modems and GNSS
// receiver, the device commands (device-power.ts), the restarts and purges the LPS asks for, and
// the ZiLocation the device sends its controller every timer.location.cloud.interval.
//
// Reboots: halt() keeps what EVE keeps in /persist (agent.snapshot()) and drops the rest; onBoot()
// puts it back (agent.restore()) and starts again the app commands a reboot interrupted, so a
// command accepted before the reboot completes after it.
//
// App commands complete as EVE's ProcessAppCommandStatus sees it: once the restart (or purge) that
// began after the command was accepted is no longer in progress, i.e. the app is back at rest.

import { info, type profile, type metrics } from '../../gen/eve-types.js';
import type { AppInstance } from '../config/app-instance.js';
import type { CellularRadios } from '../radio/cellular-model.js';
import type { DeviceConfigState } from '../config/config-apply.js';
import type { DeviceBehaviour, DeviceFinding, DeviceOptions } from '../device-options.js';
import { LocalDeviceCommands, type DevicePowerHost } from './device-power.js';
import {
  addRadiosToDeviceInfo,
  createCellular,
  createGnss,
  radioGaugeState,
  type GnssGaugeState,
  type RadioGaugeState,
} from '../radio/device-radios.js';
import type { CellularSpec, GnssSpec } from '../radio/radio-specs.js';
import { DeviceTimer } from '../core/device-timer.js';
import { locationDelayMs, type DeviceTimers } from '../core/eve-timers.js';
import type { GnssReceiver } from '../radio/gnss-model.js';
import { toTimestamp } from '../telemetry/info-builders.js';
import {
  LpsAgent,
  type LpsAgentHost,
  type LpsAppCommandKind,
  type LpsAppView,
  type LpsDeviceCommand,
  type LpsDeviceView,
  type LpsPersistedState,
  type LpsTimers,
} from './lps-agent.js';
import type { DeviceLpsPorts } from './lps-ports.js';
import type { Millis, Rng } from '../ports.js';
import { SmallMap } from '../../memory/small-map.js';

/** The radio and GNSS parts of a device's behaviour (DeviceBehaviour.cellular / .gnss). */
export interface DeviceRadioBehaviour {
  cellular?: CellularSpec;
  gnss?: GnssSpec;
}

/** What the wiring needs from its device (VirtualDevice implements it). */
export interface DeviceLpsHost {
  readonly opts: DeviceOptions;
  readonly uuid: string;
  readonly configState: DeviceConfigState;
  readonly tally: { findings: number; internalErrors: number };
  /** ZInfoDevice.state now. */
  readonly deviceState: info.ZDeviceState;
  readonly bootedAt: Millis;
  readonly bootReason: info.BootReason;
  setDeviceState(state: info.ZDeviceState, now: Millis): void;
  /** Something in ZInfoDevice changed (local profile, radios): publish it. */
  onDeviceInfoChanged(now: Millis): void;
  /** Queues a ZiLocation best-effort (discarded on failure) under its key. */
  enqueueLocation(key: string, msg: info.ZInfoMsg, now: Millis): void;
  powerOff(now: Millis): void;
  rebootForCommand(now: Millis): void;
  /** Something the device keeps on disk changed. */
  onDiskStateChanged?(): void;
  guard(fn: () => void): void;
}

const S = info.ZSwState;

interface AppOp {
  kind: LpsAppCommandKind;
  /** 'accepted': waiting to begin (restart waits for the app to run); 'running': walking its path. */
  phase: 'accepted' | 'running';
}

export class DeviceLps implements LpsDeviceView, LpsAgentHost, DevicePowerHost {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onPickupTimer = (l: DeviceLps, dueAt: Millis): void => l.host.guard(() => l.pickup(dueAt));
  private static readonly onLocationTimer = (l: DeviceLps, dueAt: Millis): void => l.host.guard(() => l.locationTick(dueAt));

  readonly cellular: CellularRadios | undefined;
  readonly gnss: GnssReceiver | undefined;
  /** Made when an LPS is first configured: most devices of most fleets never have one. */
  private agentObj: LpsAgent | undefined;
  private commandsObj: LocalDeviceCommands | undefined;
  private readonly ports: DeviceLpsPorts;
  private readonly appOps = new SmallMap<string, AppOp>();
  /** zedmanager picks up a bumped local counter at its next step. */
  private readonly pickupTimer: DeviceTimer;
  private readonly locationTimer: DeviceTimer;
  /** What survives a reboot (EVE's /persist files), taken when the device went down. */
  private persisted: LpsPersistedState | undefined;
  private readonly rng: Rng;
  /** False while the device is down (powered off, rebooting, stopped): no gauges then. */
  private up = true;

  constructor(
    private readonly host: DeviceLpsHost,
    ports: DeviceLpsPorts,
  ) {
    const o = host.opts;
    const b = o.behaviour as DeviceBehaviour & DeviceRadioBehaviour;
    this.ports = ports;
    this.rng = ports.rng;
    this.cellular = createCellular(b.cellular, ports.seed, o.index);
    this.gnss = createGnss(b.gnss, ports.seed, o.index, o.clock.now());
    this.pickupTimer = new DeviceTimer(o.scheduler, this, DeviceLps.onPickupTimer);
    this.locationTimer = new DeviceTimer(o.scheduler, this, DeviceLps.onLocationTimer);
  }

  /** The device's LPS agent (created on first use). */
  get agent(): LpsAgent {
    if (this.agentObj === undefined) {
      const o = this.host.opts;
      const p = this.ports;
      this.agentObj = new LpsAgent({
        deviceIndex: o.index,
        clock: o.clock,
        scheduler: o.scheduler,
        rng: p.rng,
        transportFor: p.transportFor,
        view: this,
        host: this,
        stats: p.stats,
        ...(p.throttleRule !== undefined ? { throttleRule: p.throttleRule } : {}),
        ...(p.radioTiming !== undefined ? { radio: p.radioTiming } : {}),
      });
      const fails = (o.behaviour as DeviceBehaviour & DeviceRadioBehaviour).cellular?.radioSilenceFails;
      if (fails !== undefined) this.agentObj.setRadioFailure(fails);
    }
    return this.agentObj;
  }

  private get commands(): LocalDeviceCommands {
    return (this.commandsObj ??= new LocalDeviceCommands(this));
  }

  // ---------------------------------------------------------------------------------------------
  // Device lifecycle

  /** A configuration was applied: the LPS address, token and timers (agent.configure). */
  configure(address: string, token: string, timers: DeviceTimers): void {
    const t: LpsTimers = {
      lpsProfileIntervalS: timers.lpsProfileIntervalS,
      lpsRadioIntervalS: timers.lpsRadioIntervalS,
      lpsAppInfoIntervalS: timers.lpsAppInfoIntervalS,
      lpsDevInfoIntervalS: timers.lpsDevInfoIntervalS,
      lpsNetworkIntervalS: timers.lpsNetworkIntervalS,
      lpsAppBootInfoIntervalS: timers.lpsAppBootInfoIntervalS,
      locationAppIntervalS: timers.locationAppIntervalS,
    };
    // A device that never had an LPS and is given none needs no agent at all.
    if (this.agentObj !== undefined || address.trim() !== '' || this.persisted !== undefined) this.agent.configure(address, token, t);
    // A shorter timer.location.cloud.interval pulls in a ZiLocation planned by a longer one.
    if (this.locationTimer.armed) {
      const now = this.host.opts.clock.now();
      if (this.locationTimer.dueAt > now + timers.locationCloudIntervalS * 1000) this.locationTimer.at(now + locationDelayMs(this.rng, timers.locationCloudIntervalS));
    }
  }

  /** The device's services start (after boot and onboarding): location reporting begins. */
  start(now: Millis): void {
    if (this.gnss !== undefined) this.locationTimer.at(now);
  }

  /** The device goes down (reboot, power off, stop): only the persisted state survives. */
  halt(): void {
    this.up = false;
    if (this.agentObj !== undefined) {
      this.persisted = this.agentObj.snapshot();
      this.agentObj.halt();
    }
    this.appOps.clear();
    this.pickupTimer.cancel();
    this.locationTimer.cancel();
    this.commandsObj?.reset();
  }

  /** What survives a power cut now (EVE's /persist files as they are at this moment). */
  diskState(): LpsPersistedState | undefined {
    return this.agentObj !== undefined ? this.agentObj.snapshot() : this.persisted;
  }

  /** Before the first boot of a device brought back from disk: its /persist state, restored at boot. */
  resumeFrom(state: LpsPersistedState): void {
    this.persisted = state;
  }

  /** The agent persisted something: the device writes its disk state. */
  onPersistedStateChange(): void {
    this.host.onDiskStateChanged?.();
  }

  /** A new boot: the radios start on, the persisted state comes back, interrupted commands resume. */
  onBoot(now: Millis): void {
    this.up = true;
    this.cellular?.setRadioSilence(false, now);
    if (this.persisted === undefined) return;
    this.agent.restore(this.persisted);
    this.persisted = undefined;
    this.agent.resumeInterruptedCommands();
  }

  onAppStateChange(app: AppInstance, now: Millis): void {
    const op = this.appOps.get(app.uuid);
    if (op === undefined) return;
    if (op.phase === 'accepted') {
      if (app.state === S.RUNNING) this.pickupTimer.atOrSooner(now + this.appStepMs);
      return;
    }
    if (!app.settled) return;
    this.appOps.delete(app.uuid);
    this.agentObj?.appCommandDone(app.uuid);
  }

  /** EVE pushes device state changes to the LPS as well as to the controller (§11.3). */
  onDeviceStateChanged(): void {
    this.agentObj?.trigger('lps.devinfo');
  }

  onAppRemoved(appUuid: string): void {
    this.appOps.delete(appUuid);
    this.agentObj?.forgetApp(appUuid);
  }

  // ---------------------------------------------------------------------------------------------
  // Reporting

  /** Modems, SIMs and the wwan ports in ZInfoDevice. */
  decorateDeviceInfo(dinfo: info.ZInfoDevice, now: Millis): void {
    if (this.cellular !== undefined) addRadiosToDeviceInfo(dinfo, this.cellular, this.host.opts.index, now);
  }

  /** ZMetricMsg dm.cellular (field 20). */
  cellularMetrics(now: Millis): metrics.CellularMetric[] | undefined {
    return this.cellular?.cellularMetrics(now);
  }

  /** Gauge state of the radios, undefined without a modem. */
  radioGauge(now: Millis): RadioGaugeState | undefined {
    return this.cellular === undefined || !this.up ? undefined : radioGaugeState(this.cellular, this.agentObj?.radioSilence.phase ?? 'idle', now);
  }

  /** Gauge state of the GNSS fix, undefined without a receiver. */
  gnssGauge(now: Millis): GnssGaugeState | undefined {
    return this.up ? this.gnss?.fixAt(now).quality : undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // LpsDeviceView

  get deviceUuid(): string {
    return this.host.uuid;
  }

  apps(): LpsAppView[] {
    const out: LpsAppView[] = [];
    for (const a of this.host.configState.apps.values()) out.push({ id: a.uuid, name: a.config.displayName, version: a.config.version, state: a.state });
    return out;
  }

  deviceState(): info.ZDeviceState {
    return this.host.deviceState;
  }

  bootTime(): Millis {
    return this.host.bootedAt;
  }

  lastBootReason(): info.BootReason {
    return this.host.bootReason;
  }

  radioStatus(now: Millis): { cellular_status?: profile.CellularStatus[]; cellular_metrics?: metrics.CellularMetric[] } | undefined {
    return this.cellular?.radioStatus(now) ?? {};
  }

  location(now: Millis): info.ZInfoLocation | undefined {
    return this.gnss?.locationAt(now);
  }

  // ---------------------------------------------------------------------------------------------
  // LpsAgentHost

  onLocalProfile(localProfile: string): void {
    const now = this.host.opts.clock.now();
    this.host.configState.setLocalProfile(localProfile, now);
    this.host.onDeviceInfoChanged(now);
  }

  onAppCommand(appId: string, kind: LpsAppCommandKind, _timestamp: number): void {
    const now = this.host.opts.clock.now();
    this.appOps.set(appId, { kind, phase: 'accepted' });
    const app = this.host.configState.apps.get(appId);
    if (kind === 'purge' || app?.state === S.RUNNING) this.pickupTimer.atOrSooner(now + this.appStepMs);
  }

  onDeviceCommand(command: LpsDeviceCommand, _timestamp: number): boolean {
    return this.commands.apply(command, this.host.opts.clock.now());
  }

  onRadioSilence(imposed: boolean): void {
    const now = this.host.opts.clock.now();
    this.cellular?.setRadioSilence(imposed, now);
    this.host.onDeviceInfoChanged(now);
  }

  onFinding(f: DeviceFinding): void {
    this.host.tally.findings++;
    try {
      this.host.opts.onFinding?.(f);
    } catch {
      this.host.tally.internalErrors++;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // DevicePowerHost

  get scheduler() {
    return this.host.opts.scheduler;
  }
  get appStepMs(): number {
    return this.host.opts.behaviour.appStepMs;
  }
  haltAllApps(now: Millis): void {
    this.host.configState.haltAllApps(now);
  }
  allAppsHalted(): boolean {
    for (const a of this.host.configState.apps.values()) if (!(a.settled && a.state === S.HALTED)) return false;
    return true;
  }
  setDeviceState(state: info.ZDeviceState, now: Millis): void {
    this.host.setDeviceState(state, now);
  }
  powerOff(now: Millis): void {
    this.host.powerOff(now);
  }
  rebootForCommand(now: Millis): void {
    this.host.rebootForCommand(now);
  }
  guard(fn: () => void): void {
    this.host.guard(fn);
  }

  // ---------------------------------------------------------------------------------------------
  // Internals

  /** Starts the accepted restarts and purges that can start now. */
  private pickup(now: Millis): void {
    for (const [id, op] of this.appOps) {
      if (op.phase !== 'accepted') continue;
      const app = this.host.configState.apps.get(id);
      if (app === undefined) continue;
      if (op.kind === 'restart' && app.state !== S.RUNNING) continue; // EVE restarts only a running app
      op.phase = 'running';
      app.localCommand(op.kind, now);
    }
  }

  /** ZiLocation to the controller: with a fix every [0.3×, 1.0×] timer.location.cloud.interval. */
  private locationTick(now: Millis): void {
    const timers = this.host.configState.timers;
    const loc = this.gnss?.locationAt(now);
    const uuid = this.host.uuid;
    if (loc === undefined || uuid === '') {
      // No fix (or not onboarded yet): look again when the receiver next reports.
      this.locationTimer.at(now + locationDelayMs(this.rng, timers.locationAppIntervalS));
      return;
    }
    this.host.enqueueLocation(`location:${uuid}`, { ztype: info.ZInfoTypes.ZiLocation, devId: uuid, locinfo: loc, atTimeStamp: toTimestamp(now) }, now);
    this.locationTimer.at(now + locationDelayMs(this.rng, timers.locationCloudIntervalS));
  }
}
