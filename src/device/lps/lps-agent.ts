// EVE's local profile server client (pkg/pillar/localcommand; docs/interfaces.md;
// eve-wire-facts §11) as a state machine on the device ports: no timers or sockets of its own.
//
// - configure(address, token, timers) on every configuration change. A new non-empty address
//   (port 8888 when none) starts or moves the agent and triggers every endpoint at once; an empty
//   one stops it, forgets the local profile and lifts radio silence (EVE's default without an LPS).
// - Periodic tasks: GET local_profile, POST radio, appinfo, devinfo, appbootinfo, network, each at
//   its timer.lps.*.interval with EVE's jitter [0.88×, 1.1×]; POST location at
//   timer.location.app.interval with [0.3×, 1.0×]. One request per endpoint at a time.
// - Every answer that carries a body must carry the device's profile_server_token, or it is
//   ignored and counted (appinfo: only when it lists commands, as EVE checks).
// - 404: with throttleRule 'eve' (default) only location throttles (one POST per 5 min), as real
//   EVE does (§11.2 caveat, §15.2 #8); with 'spec' appinfo and devinfo also slow down to once an
//   hour until a success, as the interface document says.
//
// The device hands the agent a small view (LpsDeviceView) and callbacks (LpsAgentHost); the agent
// never reaches into the device. What EVE keeps in /persist (last device command timestamp, app
// command records, saved radio config, last local profile) comes out of snapshot() and goes back
// in with restore() after a reboot.

import { isDocumentedStatus, undocumentedStatusDetail } from '../../protocol/documented-statuses.js';
import { info, profile, type metrics } from '../../gen/eve-types.js';
import { Msg } from '../../protocol/messages.js';
import type { DeviceFinding } from '../device-options.js';
import { DeviceTimer } from '../core/device-timer.js';
import { jitteredMs, locationDelayMs, type DeviceTimers } from '../core/eve-timers.js';
import { parseLpsAddress, type LpsAddress } from './lps-address.js';
import type { LpsPersistedState } from './lps-persisted-state.js';
import { LpsAppCommands, type LpsAppCommandKind, type LpsAppCommandRecord, type LpsAppView } from './lps-app-commands.js';
import { LPS_ENDPOINT_KEYS, LPS_PATHS, LpsAgentStats, PROTO_MIME, type LpsEndpointKey } from './lps-endpoints.js';
import type { LpsThrottleRule } from './lps-ports.js';
import { LpsRadioSilence, type RadioSilencePhase, type RadioSilenceTiming } from './lps-radio-silence.js';
import type { Clock, Millis, Rng, Scheduler, Transport, TransportResponse } from '../ports.js';

export type { LpsAppView, LpsAppCommandKind, LpsAppCommandRecord } from './lps-app-commands.js';
export type { LpsEndpointKey } from './lps-endpoints.js';

/** The timers the agent uses (parsed config items, core/eve-timers.ts). */
export type LpsTimers = Pick<
  DeviceTimers,
  | 'lpsProfileIntervalS'
  | 'lpsRadioIntervalS'
  | 'lpsAppInfoIntervalS'
  | 'lpsDevInfoIntervalS'
  | 'lpsNetworkIntervalS'
  | 'lpsAppBootInfoIntervalS'
  | 'locationAppIntervalS'
>;

export type LpsDeviceCommand = 'shutdown' | 'poweroff' | 'reboot' | 'collect-info';

/** What the agent reads from its device. Called when a message is built, never cached. */
export interface LpsDeviceView {
  readonly deviceUuid: string;
  /** Configured app instances (commands are matched against these). */
  apps(): readonly LpsAppView[];
  deviceState(): info.ZDeviceState;
  maintenanceModeReasons?(): readonly info.MaintenanceModeReason[];
  /** When the device (host) booted, clock ms. */
  bootTime(): Millis;
  lastBootReason(): info.BootReason;
  /** Wireless adapters for RadioStatus; undefined while not known yet (EVE then skips the POST). */
  radioStatus(now: Millis): { cellular_status?: profile.CellularStatus[]; cellular_metrics?: metrics.CellularMetric[] } | undefined;
  /** Current GNSS fix; undefined without a fix or a GNSS receiver (no location POST). */
  location(now: Millis): info.ZInfoLocation | undefined;
  /** AppBootInfo entries; without this method no appbootinfo POSTs are made. */
  appBootInfo?(): profile.AppBootInfo[];
  /** NetworkInfo; without this method no network POSTs are made. */
  networkInfo?(): profile.NetworkInfo;
}

/** What the agent asks of its device. */
export interface LpsAgentHost {
  /** The local profile changed ('' = reset: the global profile applies again). */
  onLocalProfile(localProfile: string): void;
  /**
   * Restart or purge an app instance. Call agent.appCommandDone(appId) when the operation has
   * finished; that sets last_cmd_timestamp. Also called after a restore for commands a reboot interrupted.
   */
  onAppCommand(appId: string, kind: LpsAppCommandKind, timestamp: number): void;
  /**
   * Apply a device command. Return false when it cannot be taken now (EVE defers commands while a
   * base-OS update is tested): it is then not recorded and will be applied when the LPS sends it again.
   */
  onDeviceCommand(command: LpsDeviceCommand, timestamp: number): boolean;
  /** The radios really switched: true = everything wireless off (modems RADIO_OFF). */
  onRadioSilence(imposed: boolean): void;
  onAppBootConfig?(configs: profile.AppBootConfig[]): void;
  onLocalNetworkConfig?(config: profile.LocalNetworkConfig): void;
  /** Something in snapshot() changed: the device may persist it now. */
  onPersistedStateChange?(): void;
  /** Problems worth counting beyond the stats (bad address, undecodable bodies). */
  onFinding?(f: DeviceFinding): void;
}

export interface LpsAgentOptions {
  /** Fleet index, for TransportRequest and findings. */
  deviceIndex: number;
  clock: Clock;
  scheduler: Scheduler;
  /** Better a stream of its own (SeededRng.create(seed, index, 'lps')) so other streams do not shift. */
  rng: Rng;
  /** The transport that reaches this LPS address (the runner maps addresses to real sockets). */
  transportFor(address: LpsAddress): Transport;
  view: LpsDeviceView;
  host: LpsAgentHost;
  throttleRule?: LpsThrottleRule;
  radio?: RadioSilenceTiming;
  /** Counters; pass one object to every agent of a worker to aggregate. */
  stats?: LpsAgentStats;
}

/** What EVE persists across reboots (lastdevcmdtimestamp, appCommands, lastradioconfig, lastlocalprofile). */
export type { LpsPersistedState } from './lps-persisted-state.js';

/** Location POSTs while the LPS throttles: at most one per 5 minutes (EVE lpsLocationThrottledInterval). */
export const LOCATION_THROTTLED_MS = 5 * 60_000;
/** 'spec' throttling of appinfo and devinfo: EVE's coded throttled interval, 1 h. */
export const STREAM_THROTTLED_S = 3600;

const DEV_CMD: Record<number, LpsDeviceCommand> = {
  [profile.LocalDevCmd.Command.COMMAND_SHUTDOWN]: 'shutdown',
  [profile.LocalDevCmd.Command.COMMAND_GRACEFUL_POWEROFF]: 'poweroff',
  [profile.LocalDevCmd.Command.COMMAND_GRACEFUL_REBOOT]: 'reboot',
  [profile.LocalDevCmd.Command.COMMAND_COLLECT_INFO]: 'collect-info',
};

/** One periodic endpoint: its wake-up, the request in flight and its throttle state. */
class LpsTask {
  readonly timer: DeviceTimer;
  /** Generation of the request in flight, 0 when none. */
  inFlight = 0;
  /** A tick came while a request was in flight: run once more when it ends. */
  again = false;
  /** 'spec' throttling after a 404. */
  throttled = false;

  constructor(
    readonly key: LpsEndpointKey,
    scheduler: Scheduler,
    fire: (t: LpsTask, at: Millis) => void,
  ) {
    this.timer = new DeviceTimer(scheduler, this, fire);
  }
}

export class LpsAgent {
  readonly stats: LpsAgentStats;
  /** In LPS_ENDPOINT_KEYS order. */
  private readonly tasks: LpsTask[];
  private readonly appCommands = new LpsAppCommands();
  private readonly radio: LpsRadioSilence;
  private readonly throttleRule: LpsThrottleRule;
  private rawAddress = '';
  private addr: LpsAddress | undefined;
  private transport: Transport | undefined;
  private token = '';
  private timers: LpsTimers | undefined;
  /** Bumped whenever the LPS changes or the agent halts: answers from before are stale. */
  private generation = 1;
  private profileValue = '';
  private lastDevCmd = 0;
  private locationThrottled = false;
  private lastLocationPostAt = -Infinity;

  constructor(private readonly o: LpsAgentOptions) {
    this.stats = o.stats ?? new LpsAgentStats();
    this.throttleRule = o.throttleRule ?? 'eve';
    if (this.throttleRule !== 'eve' && this.throttleRule !== 'spec') {
      throw new Error(`LPS agent of device ${o.deviceIndex}: throttleRule must be 'eve' or 'spec', got ${JSON.stringify(this.throttleRule)}`);
    }
    const fire = (t: LpsTask, at: Millis) => this.fire(t, at);
    this.tasks = LPS_ENDPOINT_KEYS.map((key) => new LpsTask(key, o.scheduler, fire));
    this.radio = new LpsRadioSilence(o.scheduler, o.rng, o.radio ?? {}, (imposed, changed) => this.radioSettled(imposed, changed));
  }

  // ---------------------------------------------------------------------------------------------
  // Configuration and lifecycle

  /**
   * Called on every configuration change with `local_profile_server`, `profile_server_token` and
   * the parsed timers. Only an address change restarts the tasks; a token or timer change applies
   * to the next request / tick. A bad address is reported and the previous one kept (as EVE does).
   */
  configure(address: string, token: string, timers: LpsTimers): void {
    this.token = token;
    const previous = this.timers;
    this.timers = timers;
    const value = address.trim();
    if (value === '') {
      // Also after a restore: a device that boots without an LPS forgets the saved profile.
      if (this.addr !== undefined || this.profileValue !== '' || this.radio.intent) this.clear();
      return;
    }
    if (value === this.rawAddress) {
      if (this.addr !== undefined && previous !== undefined) this.rescheduleChanged(previous, timers);
      return;
    }
    let parsed: LpsAddress;
    try {
      parsed = parseLpsAddress(value);
    } catch (e) {
      this.o.host.onFinding?.({ deviceIndex: this.o.deviceIndex, endpoint: 'lps', kind: 'conformance', detail: (e as Error).message });
      return;
    }
    this.rawAddress = value;
    this.addr = parsed;
    this.transport = this.o.transportFor(parsed);
    this.generation++;
    this.locationThrottled = false;
    const now = this.o.clock.now();
    for (const t of this.tasks) {
      t.inFlight = 0;
      t.again = false;
      t.throttled = false;
      t.timer.at(now);
    }
  }

  /** The device powers off or reboots: no more requests, in-flight answers dropped, state kept. */
  halt(): void {
    this.generation++;
    this.rawAddress = '';
    this.addr = undefined;
    this.transport = undefined;
    for (const t of this.tasks) {
      t.timer.cancel();
      t.inFlight = 0;
      t.again = false;
    }
    this.radio.halt();
  }

  /** What EVE keeps in /persist. */
  snapshot(): LpsPersistedState {
    return {
      lastDevCmdTimestamp: this.lastDevCmd,
      localProfile: this.profileValue,
      radioSilence: this.radio.intent,
      appCommands: this.appCommands.snapshot(),
    };
  }

  /**
   * After a reboot, before configure(): brings back what EVE persisted. The saved radio silence is
   * imposed again (the radios start on; onRadioSilence(true) follows after the apply delay);
   * commands a reboot interrupted are started again once their app is present
   * (resumeInterruptedCommands(), also tried before every appinfo POST). No other callbacks: the
   * device reads `localProfile` itself.
   */
  restore(state: LpsPersistedState): void {
    this.lastDevCmd = state.lastDevCmdTimestamp;
    this.profileValue = state.localProfile;
    this.appCommands.restore(state.appCommands);
    this.radio.restore(state.radioSilence, this.o.clock.now());
  }

  /** Runs an endpoint now (EVE's Trigger*POST, e.g. devinfo on a device state change). Not while throttled. */
  trigger(key: LpsEndpointKey): void {
    const t = this.task(key);
    if (this.addr === undefined || t.throttled) return;
    t.timer.at(this.o.clock.now());
  }

  // ---------------------------------------------------------------------------------------------
  // Device → agent

  /** The restart/purge started for an app's command has finished: last_cmd_timestamp = its timestamp. */
  appCommandDone(appId: string): void {
    if (this.appCommands.complete(appId)) {
      this.stats.appCommandsCompleted++;
      this.o.host.onPersistedStateChange?.();
    }
  }

  /** The app was removed from the configuration: its command state goes too. */
  forgetApp(appId: string): void {
    if (this.appCommands.forget(appId)) this.o.host.onPersistedStateChange?.();
  }

  /** Starts again the commands a reboot interrupted whose apps are present. */
  resumeInterruptedCommands(): void {
    for (const a of this.appCommands.interrupted(this.o.view.apps())) this.o.host.onAppCommand(a.appId, a.kind, a.timestamp);
  }

  /** Failure mode: while set, radio-silence changes fail with this config_error. undefined = work. */
  setRadioFailure(message: string | undefined): void {
    this.radio.failureMessage = message;
  }

  // ---------------------------------------------------------------------------------------------
  // State for the device and metrics

  get running(): boolean {
    return this.addr !== undefined;
  }
  get address(): LpsAddress | undefined {
    return this.addr;
  }
  /** Local profile from the LPS ('' when none). */
  get localProfile(): string {
    return this.profileValue;
  }
  get lastDeviceCommandTimestamp(): number {
    return this.lastDevCmd;
  }
  get radioSilence(): { intent: boolean; imposed: boolean; phase: RadioSilencePhase; configError: string } {
    const r = this.radio;
    return { intent: r.intent, imposed: r.imposed, phase: r.phase, configError: r.configError };
  }
  appCommand(appId: string): Readonly<LpsAppCommandRecord> | undefined {
    return this.appCommands.get(appId);
  }
  /** Whether the LPS throttles the location stream now. */
  get locationIsThrottled(): boolean {
    return this.locationThrottled;
  }
  isThrottled(key: LpsEndpointKey): boolean {
    return key === 'lps.location' ? this.locationThrottled : this.task(key).throttled;
  }

  // ---------------------------------------------------------------------------------------------
  // Internals

  private task(key: LpsEndpointKey): LpsTask {
    return this.tasks[LPS_ENDPOINT_KEYS.indexOf(key)]!;
  }

  private clear(): void {
    this.halt();
    let changed = false;
    if (this.profileValue !== '') {
      this.profileValue = '';
      changed = true;
      this.o.host.onLocalProfile('');
    }
    // Without LPS (and LOC) EVE applies radio_silence=false.
    if (this.radio.request(false, this.o.clock.now())) {
      this.stats.radioChangesStarted++;
      changed = true;
    }
    if (changed) this.o.host.onPersistedStateChange?.();
  }

  private intervalS(key: LpsEndpointKey, timers: LpsTimers): number {
    switch (key) {
      case 'lps.local_profile':
        return timers.lpsProfileIntervalS;
      case 'lps.radio':
        return timers.lpsRadioIntervalS;
      case 'lps.appinfo':
        return timers.lpsAppInfoIntervalS;
      case 'lps.devinfo':
        return timers.lpsDevInfoIntervalS;
      case 'lps.appbootinfo':
        return timers.lpsAppBootInfoIntervalS;
      case 'lps.network':
        return timers.lpsNetworkIntervalS;
      case 'lps.location':
        return timers.locationAppIntervalS;
    }
  }

  private nextDelay(t: LpsTask): Millis {
    const timers = this.timers!;
    if (t.key === 'lps.location') return locationDelayMs(this.o.rng, timers.locationAppIntervalS);
    return jitteredMs(this.o.rng, t.throttled ? STREAM_THROTTLED_S : this.intervalS(t.key, timers), 0.88, 1.1);
  }

  private rescheduleChanged(before: LpsTimers, after: LpsTimers): void {
    const now = this.o.clock.now();
    for (const t of this.tasks) {
      if (t.throttled || !t.timer.armed) continue;
      if (this.intervalS(t.key, before) !== this.intervalS(t.key, after)) t.timer.at(now + this.nextDelay(t));
    }
  }

  private fire(t: LpsTask, dueAt: Millis): void {
    if (this.addr === undefined) return;
    t.timer.at(dueAt + this.nextDelay(t));
    if (t.inFlight !== 0) {
      t.again = true;
      return;
    }
    this.run(t, dueAt);
  }

  private run(t: LpsTask, dueAt: Millis): void {
    const v = this.o.view;
    const now = this.o.clock.now();
    switch (t.key) {
      case 'lps.local_profile':
        this.send(t, undefined, dueAt);
        return;
      case 'lps.radio': {
        if (this.radio.inProgress) {
          this.stats.radioPostsSuppressed++;
          return;
        }
        const cell = v.radioStatus(now);
        if (cell === undefined) return;
        const msg: profile.RadioStatus = {
          radio_silence: this.radio.imposed,
          config_error: this.radio.configError,
          cellular_status: cell.cellular_status ?? [],
          cellular_metrics: cell.cellular_metrics ?? [],
        };
        this.send(t, Msg.RadioStatus.encode(msg), dueAt);
        return;
      }
      case 'lps.appinfo': {
        this.resumeInterruptedCommands();
        const apps_info: profile.LocalAppInfo[] = v.apps().map((a) => ({
          id: a.id,
          version: a.version ?? '',
          name: a.name,
          state: a.state,
          err: a.error ? { description: a.error } : null,
          last_cmd_timestamp: this.appCommands.lastCompleted(a.id),
        }));
        this.send(t, Msg.LocalAppInfoList.encode({ apps_info }), dueAt);
        return;
      }
      case 'lps.devinfo': {
        const bootMs = v.bootTime();
        const msg: profile.LocalDevInfo = {
          device_uuid: v.deviceUuid,
          state: v.deviceState(),
          maintenance_mode_reasons: [...(v.maintenanceModeReasons?.() ?? [])],
          boot_time: { seconds: Math.floor(bootMs / 1000), nanos: 0 },
          last_boot_reason: v.lastBootReason(),
          last_cmd_timestamp: this.lastDevCmd,
        };
        this.send(t, Msg.LocalDevInfo.encode(msg), dueAt);
        return;
      }
      case 'lps.location': {
        if (this.locationThrottled && now - this.lastLocationPostAt < LOCATION_THROTTLED_MS) {
          this.stats.locationPostsThrottled++;
          return;
        }
        const loc = v.location(now);
        if (loc === undefined) return;
        this.lastLocationPostAt = now;
        this.send(t, Msg.ZInfoLocation.encode(loc), dueAt);
        return;
      }
      case 'lps.appbootinfo': {
        if (v.appBootInfo === undefined) return;
        this.send(t, Msg.AppBootInfoList.encode({ apps_boot_info: v.appBootInfo() }), dueAt);
        return;
      }
      case 'lps.network': {
        if (v.networkInfo === undefined) return;
        this.send(t, Msg.NetworkInfo.encode(v.networkInfo()), dueAt);
        return;
      }
    }
  }

  private send(t: LpsTask, body: Uint8Array | undefined, dueAt: Millis): void {
    const transport = this.transport!;
    const gen = this.generation;
    const headers: Record<string, string> = {
      host: this.addr!.hostPort,
      'user-agent': 'Go-http-client/1.1',
      'x-request-id': this.o.rng.uuid(),
    };
    if (body !== undefined) headers['content-type'] = PROTO_MIME;
    t.inFlight = gen;
    this.stats.endpoints[t.key].sent++;
    transport
      .request({
        endpoint: t.key,
        method: body === undefined ? 'GET' : 'POST',
        path: LPS_PATHS[t.key],
        headers,
        body,
        dueAt,
        deviceIndex: this.o.deviceIndex,
      })
      .then(
        (res) => this.settle(t, gen, res, headers['x-request-id']!),
        () => this.settle(t, gen, undefined, headers['x-request-id']!),
      );
  }

  private settle(t: LpsTask, gen: number, res: TransportResponse | undefined, requestId: string): void {
    const c = this.stats.endpoints[t.key];
    if (t.inFlight === gen) t.inFlight = 0;
    if (gen !== this.generation) {
      c.stale++;
      return;
    }
    try {
      if (res === undefined) c.transportErrors++;
      else {
        this.judgeStatus(t, res.status, requestId);
        this.handle(t, res);
      }
    } finally {
      if (t.again && t.inFlight === 0 && this.addr !== undefined) {
        t.again = false;
        this.run(t, this.o.clock.now());
      }
    }
  }

  /** A status local-profile-server-v1 does not list for the endpoint is a finding (documented-statuses.ts). */
  private judgeStatus(t: LpsTask, status: number, requestId: string): void {
    if (isDocumentedStatus('lps', t.key, status)) return;
    const method = t.key === 'lps.local_profile' ? 'GET' : 'POST';
    const detail = undocumentedStatusDetail('lps', t.key, status, method, LPS_PATHS[t.key]);
    this.o.host.onFinding?.({ deviceIndex: this.o.deviceIndex, endpoint: t.key, kind: 'undocumented-status', detail, status, requestId });
  }

  private handle(t: LpsTask, res: TransportResponse): void {
    const c = this.stats.endpoints[t.key];
    const s = res.status;
    if (s === 404) {
      c.notFound++;
      this.onNotFound(t);
      return;
    }
    if (s === 204 || s === 304) {
      c.noContent++;
      this.onStreamSuccess(t);
      return;
    }
    if (s !== 200 && s !== 201) {
      c.otherStatus++; // EVE: an error, logged; the interval stays
      return;
    }
    c.ok++;
    this.onStreamSuccess(t);
    if (t.key === 'lps.location') return; // no body expected
    if (res.body.length > 0 && !isProtoMime(res.headers['content-type'])) {
      c.badContentType++;
      return;
    }
    const now = this.o.clock.now();
    try {
      switch (t.key) {
        case 'lps.local_profile': {
          const m = Msg.LocalProfile.decode(res.body);
          if (!this.tokenOk(t, m.server_token)) return;
          this.applyLocalProfile(m.local_profile ?? '');
          return;
        }
        case 'lps.radio': {
          const m = Msg.RadioConfig.decode(res.body);
          if (!this.tokenOk(t, m.server_token)) return;
          if (this.radio.request(m.radio_silence ?? false, now)) {
            this.stats.radioChangesStarted++;
            this.o.host.onPersistedStateChange?.();
          }
          return;
        }
        case 'lps.appinfo': {
          const m = Msg.LocalAppCmdList.decode(res.body);
          const list = m.app_commands ?? [];
          if (list.length === 0) return; // EVE: nothing to do, no token check
          if (!this.tokenOk(t, m.server_token)) return;
          this.applyAppCommands(list, now);
          return;
        }
        case 'lps.devinfo': {
          const m = Msg.LocalDevCmd.decode(res.body);
          if (!this.tokenOk(t, m.server_token)) return;
          this.applyDeviceCommand(m);
          return;
        }
        case 'lps.appbootinfo': {
          const m = Msg.AppBootConfigList.decode(res.body);
          if (!this.tokenOk(t, m.server_token)) return;
          this.o.host.onAppBootConfig?.(m.app_configs ?? []);
          return;
        }
        case 'lps.network': {
          const m = Msg.LocalNetworkConfig.decode(res.body);
          if (!this.tokenOk(t, m.server_token)) return;
          this.o.host.onLocalNetworkConfig?.(m);
          return;
        }
      }
    } catch (e) {
      c.undecodable++;
      const detail = `answer to ${LPS_PATHS[t.key]} (${res.body.length} bytes) does not decode: ${(e as Error).message}`;
      this.o.host.onFinding?.({ deviceIndex: this.o.deviceIndex, endpoint: t.key, kind: 'undecodable-body', detail, status: res.status });
    }
  }

  private tokenOk(t: LpsTask, got: string | undefined): boolean {
    if ((got ?? '') === this.token) return true;
    this.stats.endpoints[t.key].tokenRejected++;
    return false;
  }

  private onNotFound(t: LpsTask): void {
    if (t.key === 'lps.location') {
      this.locationThrottled = true;
      return;
    }
    if (this.throttleRule === 'spec' && (t.key === 'lps.appinfo' || t.key === 'lps.devinfo') && !t.throttled) {
      t.throttled = true;
      t.timer.at(this.o.clock.now() + this.nextDelay(t));
    }
  }

  private onStreamSuccess(t: LpsTask): void {
    if (t.key === 'lps.location') {
      this.locationThrottled = false;
      return;
    }
    if (t.throttled) {
      t.throttled = false;
      t.timer.at(this.o.clock.now() + this.nextDelay(t));
    }
  }

  private applyLocalProfile(value: string): void {
    if (value === this.profileValue) return;
    this.profileValue = value;
    this.o.host.onLocalProfile(value);
    this.o.host.onPersistedStateChange?.();
  }

  private applyAppCommands(list: readonly profile.AppCommand[], now: Millis): void {
    const out = this.appCommands.apply(list, this.o.view.apps(), now);
    this.stats.appCommandsSkipped += out.skipped;
    this.stats.appCommandsAccepted += out.actions.length;
    if (out.changed) this.o.host.onPersistedStateChange?.();
    for (const a of out.actions) this.o.host.onAppCommand(a.appId, a.kind, a.timestamp);
  }

  private applyDeviceCommand(m: profile.LocalDevCmd): void {
    const ts = m.timestamp ?? 0;
    if (ts === this.lastDevCmd) {
      if (m.command !== undefined && m.command !== 0) this.stats.deviceCommandsRepeated++;
      return;
    }
    const command = DEV_CMD[m.command ?? 0];
    if (command === undefined) {
      this.stats.deviceCommandsRefused++;
      return;
    }
    // Recorded before the device acts, as EVE persists it before the command completes: a reboot
    // command must not run again after the reboot it causes.
    const before = this.lastDevCmd;
    this.lastDevCmd = ts;
    if (this.o.host.onDeviceCommand(command, ts) === false) {
      this.lastDevCmd = before;
      this.stats.deviceCommandsRefused++;
      return;
    }
    this.stats.deviceCommandsAccepted++;
    this.o.host.onPersistedStateChange?.();
  }

  private radioSettled(imposed: boolean, changed: boolean): void {
    if (this.radio.configError !== '') this.stats.radioChangesFailed++;
    else this.stats.radioChangesApplied++;
    if (changed) this.o.host.onRadioSilence(imposed);
  }
}

function isProtoMime(v: string | string[] | undefined): boolean {
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined) return false;
  return s.split(';')[0]!.trim().toLowerCase() === PROTO_MIME;
}
