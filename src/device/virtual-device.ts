// One virtual EVE device: a state machine driven only by the Clock, Scheduler, Transport and Rng it
// is given (ports.ts). It onboards (§2.2), attests (§5), polls its configuration and runs the apps
// it asks for (§3), and streams info (§6), metrics (§7), logs (§8) and flow logs (§9) on EVE's
// timers and retry rules (eve-wire-facts §14 is the outline).
//
// The device object is the host of its parts (onboarding, attestation, config, info, metrics,
// logs, flow logs): they reach shared state through it, so each part is a small object without
// closures of its own. Answers to requests sent before a reboot or stop are recognised by the
// generation number and ignored. Nothing thrown inside a scheduler callback escapes: it is
// caught, counted as an internal error and the device carries on.

import { info, type config } from '../gen/eve-types.js';
import type { EndpointKey } from '../protocol/endpoints.js';
import type { AppInstance } from './config/app-instance.js';
import { Attestation } from './lifecycle/attestation.js';
import { ConfigFetcher } from './config/config-fetcher.js';
import { DeviceConfigState } from './config/config-apply.js';
import { ControllerTrust } from './lifecycle/controller-trust.js';
import type { AppSpec, DeviceBehaviour, DeviceFinding, DeviceLifecycle, DeviceOptions } from './device-options.js';
import { DeviceSender, type FindingAbout } from './sender/device-sender.js';
import { DeviceStats, type DeviceStatsSnapshot, type ReliableKind } from './sender/device-stats.js';
import { DeviceTimer, armed, disarmed } from './core/device-timer.js';
import { flatString } from './core/flat-string.js';
import { deviceInfoDelayMs, type DeviceTimers } from './core/eve-timers.js';
import { FlowlogSender, type FlowSource } from './telemetry/flowlog-sender.js';
import { buildAppInfo, buildDeviceInfo } from './telemetry/info-builders.js';
import { InfoPublisher } from './telemetry/info-publisher.js';
import type { InfoQueueKind } from './telemetry/info-queue.js';
import { LogGenerator } from './telemetry/log-generator.js';
import { LogUploader, type LogApp } from './telemetry/log-uploader.js';
import { DeviceCounters, type MetricsAppInput, type MetricsInput } from './telemetry/metrics-builder.js';
import { MetricsReporter } from './telemetry/metrics-reporter.js';
import { Onboarding } from './lifecycle/onboarding.js';
import type { Millis } from './ports.js';
import { DeviceLps } from './lps/lps-wiring.js';
import type { DeviceDiskState } from './lifecycle/device-disk-state.js';
import { Msg } from '../protocol/messages.js';

/** After a reboot command EVE reports REBOOTING and gives its agents a moment before going down. */
export const REBOOT_GRACE_MS = 5_000;
/** How long a rebooting device is gone (EVE takes one to two minutes; scaled down). */
export const REBOOT_DOWNTIME_MS = 30_000;
/** App defaults when the behaviour carries no AppSpec for an app's display name. */
const DEFAULT_APP_SPEC: Omit<AppSpec, 'name'> = { logLinesPerSec: 0.2, flowsPerMessage: 4 };
/** Memory reported for an app without fixed resources, MB. */
const APP_MEMORY_MB = 512;

/** Why the device is booting (ZInfoDevice.last_boot_reason). */
export type RebootCause = 'reboot-cmd' | 'power-fail' | 'poweroff-cmd';

/** Pending reliable messages, by kind (for the fleet's backlog view). */
export type DeviceBacklog = Record<ReliableKind, number>;

export class VirtualDevice {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onDeviceInfoTimer = (d: VirtualDevice): void => d.guard(() => d.periodicDeviceInfo());
  private static readonly onRebootTimer = (d: VirtualDevice): void => {
    d.rebootTimer = undefined;
    d.guard(() => d.rebootStep());
  };

  readonly opts: DeviceOptions;
  readonly tally: DeviceStats;
  counters: DeviceCounters;
  generator: LogGenerator;
  readonly sender: DeviceSender;
  readonly trust: ControllerTrust;
  /** Device UUID from POST /uuid ('' until onboarded); persisted across reboots. */
  private deviceUuid = '';
  /** Bumped whenever in-flight answers must be ignored (reboot, stop). */
  generation = 0;

  private state: DeviceLifecycle = 'idle';
  private up = false;
  private onboarded = false;
  /** While startServices runs: device info is published once at its end, not per step (each
   *  publish would replace the one before in the queue unsent, so the wire is the same). */
  private holdDeviceInfo = false;
  private bootTime: Millis = 0;
  private restartCounter = 0;
  private lastBootReason: info.BootReason = info.BootReason.BOOT_REASON_FIRST;
  private lastRebootReason: string | undefined;
  private lastRebootTime: Millis | undefined;
  private rebooting: RebootCause | undefined;
  /** The run is over and the device delivers what it has queued (drain()). */
  private draining = false;
  private lastReceivedConfig: Millis | undefined;
  private lastProcessedConfig: Millis | undefined;
  /** ZInfoDevice.state (and LocalDevInfo.state): ONLINE unless a command is being carried out. */
  private devState: info.ZDeviceState = info.ZDeviceState.ZDEVICE_STATE_ONLINE;
  /** Powered off by an LPS command: stays off until powerOn(). */
  private poweredOff = false;
  /** Local profile server client and radios; undefined when the fleet gave no LPS ports. */
  readonly lps: DeviceLps | undefined;

  private readonly onboarding: Onboarding;
  private readonly attestation: Attestation;
  private readonly info: InfoPublisher;
  readonly configState: DeviceConfigState;
  private readonly configFetcher: ConfigFetcher;
  private readonly metrics: MetricsReporter;
  private readonly logs: LogUploader;
  private readonly flowlog: FlowlogSender;
  private readonly deviceInfoTimer: DeviceTimer;
  /** Reboot steps: going down after the grace period, coming back after the downtime; only while one is due (core/device-timer.ts). */
  private rebootTimer: DeviceTimer | undefined;

  constructor(opts: DeviceOptions) {
    this.opts = opts;
    this.tally = new DeviceStats(opts.backlog);
    const now = opts.clock.now();
    this.counters = new DeviceCounters(opts.rng, opts.behaviour.hardware, now);
    this.generator = new LogGenerator(opts.index, opts.behaviour.eveVersion, now);
    this.sender = new DeviceSender(this);
    this.trust = new ControllerTrust(this);
    this.onboarding = new Onboarding(this);
    this.attestation = new Attestation(this);
    this.info = new InfoPublisher(this);
    this.configState = new DeviceConfigState(this);
    this.configFetcher = new ConfigFetcher(this);
    this.metrics = new MetricsReporter(this);
    this.logs = new LogUploader(this);
    this.flowlog = new FlowlogSender(this);
    this.deviceInfoTimer = new DeviceTimer(opts.scheduler, this, VirtualDevice.onDeviceInfoTimer);
    this.lps = opts.lps ? new DeviceLps(this, opts.lps) : undefined;
    if (opts.resume) {
      this.resumeFrom(opts.resume);
      // Read once: kept in the options, every resumed device's disk record stayed in memory all run.
      delete opts.resume;
    }
  }

  /**
   * Brought back from disk after the generator was cut off (SIGKILL, crash): the device was
   * onboarded and lost power. It keeps what EVE keeps in /persist and boots with POWER_FAIL.
   */
  private resumeFrom(r: DeviceDiskState): void {
    this.deviceUuid = flatString(r.uuid);
    this.restartCounter = r.restartCounter;
    this.rebooting = 'power-fail';
    // Nothing was recorded before the power went: EVE synthesizes "device powered off" (§13.5).
    this.lastRebootReason = 'Power failure (simulated)';
    this.lastRebootTime = r.lastRebootTime;
    this.configState.rebootCounter = r.rebootCounter;
    this.configState.shutdownCounter = r.shutdownCounter;
    if (r.lps) this.lps?.resumeFrom(r.lps);
  }

  /** What the device keeps on disk now (undefined before it has a UUID: nothing to come back to). */
  diskState(): DeviceDiskState | undefined {
    if (this.deviceUuid === '') return undefined;
    const cs = this.configState;
    const lps = this.lps?.diskState();
    const apps = this.appStates();
    return {
      v: 1,
      uuid: this.deviceUuid,
      restartCounter: this.restartCounter,
      ...(this.lastRebootReason !== undefined ? { lastRebootReason: this.lastRebootReason } : {}),
      ...(this.lastRebootTime !== undefined ? { lastRebootTime: this.lastRebootTime } : {}),
      ...(cs.rebootCounter !== undefined ? { rebootCounter: cs.rebootCounter } : {}),
      ...(cs.shutdownCounter !== undefined ? { shutdownCounter: cs.shutdownCounter } : {}),
      ...(lps ? { lps } : {}),
      ...(apps.length > 0 ? { apps } : {}),
    };
  }

  /** Something kept on disk changed: hand the new state to the fleet (it writes it). */
  onDiskStateChanged(): void {
    const cb = this.opts.onDiskStateChange;
    if (!cb) return;
    const state = this.diskState();
    if (!state) return;
    try {
      cb(state, this.opts.index);
    } catch {
      this.tally.internalErrors++;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Public API

  /** The UUID the controller gave this device ('' until /uuid answered). */
  get uuid(): string {
    return this.deviceUuid;
  }

  get lifecycle(): DeviceLifecycle {
    return this.state;
  }

  /**
   * Powers the device on: onboarding starts now (or, once onboarded, the normal services).
   * `dueAt` is when the arrival schedule wanted it on; a generator that starts it late does not
   * hide that: its first requests count their latency from `dueAt` (open model).
   */
  start(dueAt?: Millis): void {
    if (this.up || this.state === 'stopped' || this.rebootTimer !== undefined) return;
    const now = this.opts.clock.now();
    this.guard(() => this.boot(now, Math.min(dueAt ?? now, now)));
  }

  /**
   * Graceful stop at the end of a run — a simulator action, not EVE behaviour (core/graceful-drain.ts):
   * the device stops producing (no new log lines, metrics, periodic device info, flow windows,
   * config polls or onboarding rounds; a pending reboot is called off); from `deliverFrom` (its
   * seeded start in the graceful-stop window) it closes its open log files as of now and delivers
   * what it holds by EVE's own sending and retry rules, until stop().
   */
  drain(deliverFrom?: Millis): void {
    if (this.draining || this.state === 'stopped') return;
    this.draining = true;
    const now = this.opts.clock.now();
    this.guard(() => {
      this.rebootTimer = disarmed(this.rebootTimer);
      this.lps?.halt();
      this.onboarding.stop();
      this.configFetcher.stop();
      this.metrics.stop();
      this.deviceInfoTimer.cancel();
      if (!this.up || this.uuid === '') return; // nothing it could deliver now
      const from = Math.max(now, deliverFrom ?? now);
      this.flowlog.drain(now, from);
      this.logs.drain(now, from);
      this.info.drain(now, from);
    });
  }

  /** Draining and nothing left that it can deliver (a device that is down delivers nothing). */
  get drained(): boolean {
    if (!this.draining) return false;
    if (!this.up || this.uuid === '') return true;
    if (this.logs.linesToClose) return false;
    const b = this.backlog();
    return b.info + b.logs + b.flowlog === 0;
  }

  /** Stops the device for good; everything reliable still waiting is counted as undelivered. */
  stop(): void {
    if (this.state === 'stopped') return;
    const now = this.opts.clock.now();
    this.guard(() => {
      this.goDown();
      this.logs.stop(now);
    });
    this.rebootTimer = disarmed(this.rebootTimer);
    this.setLifecycle('stopped');
  }

  private armReboot(at: Millis): void {
    this.rebootTimer = armed(this.rebootTimer, at, this.opts.scheduler, this, VirtualDevice.onRebootTimer);
  }

  /**
   * The fleet timeline's reboot (and the power-loss fault): the device loses power and comes back
   * after `downtimeMs` (last_boot_reason POWER_FAIL; nothing is sent before it goes down). What EVE
   * keeps only in memory is lost (queued info, flow logs, attestation); what it keeps on disk stays
   * (UUID, log files, config checkpoint). False when it was not up (stopped, or down already).
   */
  rebootNow(cause: RebootCause = 'power-fail', downtimeMs: number = REBOOT_DOWNTIME_MS): boolean {
    if (this.state === 'stopped' || !this.up) return false;
    this.guard(() => {
      const now = this.opts.clock.now();
      this.rebooting = cause;
      this.lastRebootReason = cause === 'power-fail' ? 'Power failure (simulated)' : 'Reboot from controller';
      this.lastRebootTime = now;
      this.goDown();
      this.logs.closeForReboot(now);
      this.setLifecycle('idle');
      this.armReboot(now + downtimeMs);
    });
    return true;
  }

  /**
   * The tpm-reset fault: the TPM's PCRs and reset counters go back to their power-on values while
   * the device runs on; it attests again, so the controller sees the reset TPM's quote. No TPM: no-op.
   */
  tpmReset(): boolean {
    if (this.state === 'stopped' || !this.up || !this.attestation.hasTpm) return false;
    this.guard(() => this.attestation.onTpmReset(this.opts.clock.now()));
    return true;
  }

  /** Per-endpoint counts and undelivered reliable messages (pending ones included only after stop). */
  stats(): DeviceStatsSnapshot {
    return this.tally.snapshot();
  }

  /** Its queues move opts.backlog as they change: the fleet need not ask backlog() and tally each second. */
  get reportsBacklog(): boolean {
    return this.opts.backlog !== undefined;
  }

  /** Reliable messages waiting to be sent now, by kind. */
  backlog(): DeviceBacklog {
    return { info: this.info.pendingInfo, logs: this.logs.pendingFiles, flowlog: this.flowlog.queued };
  }

  /** The log files waiting for upload: bytes kept (what EVE's quota counts) and bytes of them held in memory. */
  logKeeping(): { keptBytes: number; memoryBytes: number } {
    return { keptBytes: this.logs.pendingBytes, memoryBytes: this.logs.memoryBytes };
  }

  /** Hash of the configuration last accepted ('' before the first one and after a reboot). */
  get configHash(): string {
    return this.configFetcher.configHash;
  }

  get attestationState(): info.AttestationState {
    return this.attestation.state;
  }

  /** Apps as the device currently reports them. */
  appStates(): { uuid: string; name: string; state: info.ZSwState }[] {
    return [...this.configState.apps.values()].map((a) => ({ uuid: a.uuid, name: a.config.displayName, state: a.state }));
  }

  // ---------------------------------------------------------------------------------------------
  // Shared with the parts (host interfaces)

  get certIntervalS(): number {
    return this.configState.timers.certIntervalS;
  }
  get configIntervalS(): number {
    return this.configState.timers.configIntervalS;
  }
  get sendTimeoutS(): number {
    return this.configState.timers.sendTimeoutS;
  }
  get fastUpload(): boolean {
    return this.configState.timers.newlogAllowFastUpload;
  }
  get integrityToken(): Uint8Array | undefined {
    return this.attestation.token;
  }

  finding(endpoint: EndpointKey, kind: DeviceFinding['kind'], detail: string, about?: FindingAbout): void {
    this.tally.findings++;
    const cb = this.opts.onFinding;
    if (!cb) return;
    try {
      cb({ deviceIndex: this.opts.index, endpoint, kind, detail, ...about });
    } catch {
      this.tally.internalErrors++;
    }
  }

  /** Runs a callback so that nothing it throws (or rejects with) escapes into the scheduler. */
  guard(fn: () => Promise<void> | void): void {
    try {
      const r = fn();
      if (r) r.catch(() => this.tally.internalErrors++);
    } catch {
      this.tally.internalErrors++;
    }
  }

  setLifecycle(to: DeviceLifecycle): void {
    const from = this.state;
    if (from === to || from === 'stopped') return;
    this.state = to;
    const cb = this.opts.onStateChange;
    if (!cb) return;
    try {
      cb(from, to, this.opts.index);
    } catch {
      this.tally.internalErrors++;
    }
  }

  /** /uuid answered: the normal services start (§14 step 4) — unless the run is draining. */
  onOnboarded(uuid: string, now: Millis): void {
    this.deviceUuid = uuid;
    this.onDiskStateChanged(); // /persist/status/uuid
    if (this.draining) return;
    this.trust.scheduleRefresh(now);
    this.startServices(now);
  }

  onTrustChanged(_now: Millis): void {
    // A new signing certificate is picked up by the next verification; nothing else to do.
  }

  enqueueAttestCerts(bytes: Uint8Array, now: Millis): void {
    this.info.enqueue(`attest:${this.uuid}`, 'attest', bytes, now, true);
  }

  onAttestCertsOutcome(delivered: boolean, now: Millis): void {
    this.attestation.onCertsOutcome(delivered, now);
  }

  onAttestationChange(now: Millis): void {
    if (this.attestation.complete) this.markOnboarded();
    this.publishDeviceInfo(now);
  }

  onConfigReceived(now: Millis): void {
    this.lastReceivedConfig = now;
    this.markOnboarded();
  }

  applyConfig(cfg: config.EdgeDevConfig, now: Millis): void {
    const cs = this.configState;
    const counters = [cs.rebootCounter, cs.shutdownCounter];
    cs.apply(cfg, now);
    if (counters[0] !== cs.rebootCounter || counters[1] !== cs.shutdownCounter) this.onDiskStateChanged();
    this.lastProcessedConfig = now;
    if (this.up && !this.draining) this.lps?.configure(cfg.local_profile_server ?? '', cfg.profile_server_token ?? '', this.configState.timers);
  }

  onForbidden(now: Millis): void {
    this.attestation.restartAfterForbidden(now);
  }

  onConfigFromUuidLookup(resp: config.ConfigResponse, now: Millis): void {
    this.configFetcher.takeFromUuidLookup(resp, now);
  }

  async relookupUuid(now: Millis): Promise<void> {
    const gen = this.generation;
    const uuid = await this.onboarding.fetchUuid(now);
    if (gen !== this.generation || uuid === undefined || uuid === this.uuid) return;
    this.finding('uuid', 'conformance', `controller now names this device ${uuid} (was ${this.uuid})`);
    this.deviceUuid = uuid;
    this.onDiskStateChanged();
    this.republishAll(this.opts.clock.now());
  }

  publishInfo(key: string, kind: InfoQueueKind, msg: info.ZInfoMsg, now: Millis): void {
    this.info.publish(key, kind, msg, now);
  }

  onAppStateChange(app: AppInstance, previous: info.ZSwState, now: Millis): void {
    this.publishAppInfo(app, now);
    this.onDiskStateChanged();
    if (previous === info.ZSwState.RUNNING && app.state !== info.ZSwState.RUNNING) {
      this.logs.closeApp(this.logAppOf(app, now), now);
    }
    this.lps?.onAppStateChange(app, now);
  }

  onAppRemoved(app: AppInstance, now: Millis): void {
    if (app.running) this.logs.closeApp(this.logAppOf(app, now), now);
    this.counters.removeApp(app.uuid);
    this.generator.removeApp(app.uuid);
    this.lps?.onAppRemoved(app.uuid);
  }

  onTimersChanged(prev: DeviceTimers, next: DeviceTimers, now: Millis): void {
    if (prev.configIntervalS !== next.configIntervalS) this.configFetcher.reschedule(now);
    this.metrics.configure(next.metricIntervalS, now);
    if (prev.deviceInfoIntervalS !== next.deviceInfoIntervalS && this.deviceInfoTimer.armed) this.armDeviceInfo(now);
    if (prev.certIntervalS !== next.certIntervalS) this.trust.scheduleRefresh(now);
    if (prev.newlogAllowFastUpload !== next.newlogAllowFastUpload) this.logs.setFastUpload(next.newlogAllowFastUpload, now);
  }

  onEpochChanged(now: Millis): void {
    this.republishAll(now);
  }

  onCertConfigHashChanged(now: Millis): void {
    this.trust.refetchNow(now);
  }

  onRebootCommand(now: Millis): void {
    // §3.5: report REBOOTING, then go down; the next boot reports REBOOT_CMD.
    this.rebooting = 'reboot-cmd';
    this.lastRebootReason = 'Reboot from controller';
    this.setDeviceState(info.ZDeviceState.ZDEVICE_STATE_REBOOTING, now);
    this.armReboot(now + REBOOT_GRACE_MS);
  }

  onDeviceInfoChanged(now: Millis): void {
    this.publishDeviceInfo(now);
  }

  // ---- local profile server (lps/lps-wiring.ts) ----

  get deviceState(): info.ZDeviceState {
    return this.devState;
  }
  get bootedAt(): Millis {
    return this.bootTime;
  }
  get bootReason(): info.BootReason {
    return this.lastBootReason;
  }
  /** A device state change, reported to the controller (ZInfoDevice.state) and the LPS (devinfo). */
  setDeviceState(state: info.ZDeviceState, now: Millis): void {
    if (state === this.devState) return;
    this.devState = state;
    this.publishDeviceInfo(now);
    this.lps?.onDeviceStateChanged();
  }
  enqueueLocation(key: string, msg: info.ZInfoMsg, now: Millis): void {
    // Periodic location is best effort: discarded on failure, the next one follows (§6.5).
    this.info.enqueue(key, 'location', Msg.ZInfoMsg.encode(msg), now, true);
  }
  /**
   * Down because its power failed (the timeline's reboot, the power-loss fault), not by a command:
   * its kernel died without closing anything, so its connections get no FIN (the transport's
   * deviceDown is told so).
   */
  get lostPower(): boolean {
    return !this.up && this.rebooting === 'power-fail';
  }

  /** Graceful reboot from the LPS, apps already halted: down after the grace period (REBOOT_CMD). */
  rebootForCommand(now: Millis): void {
    this.rebooting = 'reboot-cmd';
    this.lastRebootReason = 'Reboot from local profile server';
    this.armReboot(now + REBOOT_GRACE_MS);
  }
  /** Graceful poweroff from the LPS: the device is off until powerOn() (next boot POWEROFF_CMD). */
  powerOff(now: Millis): void {
    if (!this.up) return;
    this.rebooting = 'poweroff-cmd';
    this.lastRebootReason = 'Power off from local profile server';
    this.lastRebootTime = now;
    this.goDown();
    this.logs.closeForReboot(now);
    this.setLifecycle('idle');
    this.poweredOff = true;
  }
  /** The scenario's power-on: a device powered off by command boots again. */
  powerOn(): void {
    if (!this.poweredOff || this.state === 'stopped' || this.draining) return;
    this.poweredOff = false;
    this.guard(() => this.boot(this.opts.clock.now()));
  }
  get isPoweredOff(): boolean {
    return this.poweredOff;
  }

  metricsInput(): MetricsInput {
    const apps: MetricsAppInput[] = [];
    let appNum = 0;
    for (const a of this.configState.apps.values()) {
      appNum++;
      const m: MetricsAppInput = {
        uuid: a.uuid,
        name: a.config.displayName,
        version: a.config.version,
        running: a.running,
        allocatedMB: APP_MEMORY_MB,
        vifNames: a.config.networks.map((ni, i) => `nbu${this.bridgeNumOf(ni)}x${appNum}.${i + 1}`),
        volumes: a.config.volumeRefs.map((uuid) => ({
          uuid,
          provisionedMB: Math.max(1, Math.floor((this.configState.volumes.get(uuid)?.sizeBytes ?? 0) / 1048576)),
          diskType: 'QCOW2',
        })),
      };
      if (a.running) m.bootTime = a.bootTime;
      apps.push(m);
    }
    const input: MetricsInput = {
      devId: this.uuid,
      deviceIndex: this.opts.index,
      hardware: this.opts.behaviour.hardware,
      bootTime: this.bootTime,
      apps,
      api: this.sender.api,
    };
    if (this.opts.server !== undefined) input.server = this.opts.server;
    const cellular = this.lps?.cellularMetrics(this.opts.clock.now());
    if (cellular !== undefined && cellular.length > 0) input.cellular = cellular;
    if (this.lastReceivedConfig !== undefined) input.lastReceivedConfig = this.lastReceivedConfig;
    if (this.lastProcessedConfig !== undefined) input.lastProcessedConfig = this.lastProcessedConfig;
    return input;
  }

  runningLogApps(): LogApp[] {
    const out: LogApp[] = [];
    for (const a of this.configState.apps.values()) if (a.running) out.push(this.logAppOf(a, a.bootTime));
    return out;
  }

  flowSources(): FlowSource[] {
    const out: FlowSource[] = [];
    let appNum = 0;
    for (const a of this.configState.apps.values()) {
      appNum++;
      if (!a.running) continue;
      const spec = this.appSpec(a.config.displayName);
      a.config.networks.forEach((ni, i) => {
        if (ni === '' || this.configState.flowlogDisabled(ni)) return;
        const bridge = this.bridgeNumOf(ni);
        out.push({
          scope: {
            devId: this.uuid,
            appUuid: a.uuid,
            intf: `eth${i}`,
            localIntf: `nbu${bridge}x${appNum}.${i + 1}`,
            netInstUuid: ni,
            appIp: `10.1.${bridge}.${1 + appNum}`,
          },
          flowsPerMessage: spec.flowsPerMessage,
        });
      });
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Boot, services, reboot

  /** `dueAt` (≤ now): when the boot was due; the first onboarding requests count from it. */
  private boot(now: Millis, dueAt: Millis = now): void {
    this.generation++;
    this.up = true;
    this.bootTime = now;
    this.attestation.powerOn(now); // a TPM resets at every boot (new reset count, boot PCRs)
    if (this.rebooting !== undefined) {
      this.restartCounter++;
      this.lastBootReason =
        this.rebooting === 'reboot-cmd'
          ? info.BootReason.BOOT_REASON_REBOOT_CMD
          : this.rebooting === 'poweroff-cmd'
            ? info.BootReason.BOOT_REASON_POWEROFF_CMD
            : info.BootReason.BOOT_REASON_POWER_FAIL;
      this.rebooting = undefined;
      this.onDiskStateChanged(); // the restart counter
      this.devState = info.ZDeviceState.ZDEVICE_STATE_ONLINE;
      this.counters.retire();
      this.counters = new DeviceCounters(this.opts.rng, this.opts.behaviour.hardware, now);
      this.generator.restart(now);
      this.configState.onBoot(now);
      this.lps?.onBoot(now);
    }
    if (this.uuid === '') {
      this.onboarding.start(dueAt);
      return;
    }
    // Known UUID (persisted): certificates are fetched at boot, then everything starts (§4.3).
    this.guard(() => this.trust.fetchAndReschedule(now));
    this.startServices(now);
  }

  private startServices(now: Millis): void {
    this.setLifecycle('attesting');
    this.holdDeviceInfo = true;
    try {
      this.attestation.start(now);
      this.configFetcher.start(now);
      this.metrics.start(now);
    } finally {
      this.holdDeviceInfo = false;
    }
    this.publishDeviceInfo(now);
    this.armDeviceInfo(now);
    this.logs.start(now);
    this.flowlog.start(now);
    this.lps?.start(now);
  }

  /** Everything in memory stops; answers still on their way are ignored. */
  private goDown(): void {
    this.generation++;
    this.up = false;
    this.onboarded = false;
    this.onboarding.stop();
    this.trust.stop();
    this.attestation.reset();
    this.configFetcher.reset();
    this.metrics.stop();
    this.deviceInfoTimer.cancel();
    this.lps?.halt();
    this.info.discardAll();
    this.flowlog.discardAll();
    this.configState.dispose();
  }

  private rebootStep(): void {
    const now = this.opts.clock.now();
    if (this.up) {
      // Grace period after a reboot command is over: go down.
      this.lastRebootTime = now;
      this.goDown();
      this.logs.closeForReboot(now);
      this.setLifecycle('idle');
      this.armReboot(now + REBOOT_DOWNTIME_MS);
      return;
    }
    this.boot(now);
  }

  private markOnboarded(): void {
    if (this.onboarded) return;
    this.onboarded = true;
    this.setLifecycle('onboarded');
  }

  private republishAll(now: Millis): void {
    this.publishDeviceInfo(now);
    for (const app of this.configState.apps.values()) this.publishAppInfo(app, now);
    this.configState.republishObjects(now);
  }

  private armDeviceInfo(now: Millis): void {
    this.deviceInfoTimer.at(now + deviceInfoDelayMs(this.opts.rng, this.configState.timers.deviceInfoIntervalS));
  }

  private periodicDeviceInfo(): void {
    const now = this.opts.clock.now();
    this.publishDeviceInfo(now);
    this.armDeviceInfo(now);
  }

  private publishDeviceInfo(now: Millis, state?: info.ZDeviceState): void {
    if (this.uuid === '' || this.holdDeviceInfo) return;
    const cs = this.configState;
    const msg = buildDeviceInfo(
      {
        devId: this.uuid,
        deviceIndex: this.opts.index,
        serial: this.opts.identity.serial,
        behaviour: this.opts.behaviour,
        hasTpm: this.attestation.hasTpm,
        bootTime: this.bootTime,
        ...(this.lastRebootReason !== undefined ? { lastRebootReason: this.lastRebootReason } : {}),
        ...(this.lastRebootTime !== undefined ? { lastRebootTime: this.lastRebootTime } : {}),
        lastBootReason: this.lastBootReason,
        restartCounter: this.restartCounter,
        rebootConfigCounter: cs.rebootConfigCounter,
        shutdownConfigCounter: cs.shutdownConfigCounter,
        state: state ?? this.devState,
        ...(cs.configItemStatus ? { configItemStatus: cs.configItemStatus } : {}),
        appInstances: [...cs.apps.values()].map((a) => ({ uuid: a.uuid, name: a.config.displayName, domainName: domainNameOf(a) })),
        attestationState: this.attestation.state,
        ...(this.attestation.lastError ? { attestationError: this.attestation.lastError } : {}),
        deviceName: cs.deviceName,
        enterpriseName: cs.enterpriseName,
        enterpriseId: cs.enterpriseId,
        projectName: cs.projectName,
        projectId: cs.projectId,
        ...(cs.localProfile !== '' && cs.localProfile !== cs.globalProfile ? { localProfile: cs.localProfile } : {}),
      },
      now,
    );
    if (msg.dinfo) this.lps?.decorateDeviceInfo(msg.dinfo, now);
    this.info.publish(this.uuid, 'device', msg, now);
  }

  private publishAppInfo(app: AppInstance, now: Millis): void {
    const msg = buildAppInfo(
      this.uuid,
      {
        uuid: app.uuid,
        name: app.config.displayName,
        version: app.config.version,
        state: app.state,
        ...(app.running ? { bootTime: app.bootTime } : {}),
        volumeRefs: app.config.volumeRefs,
      },
      now,
    );
    this.info.publish(app.uuid, 'app', msg, now);
  }

  private appSpec(name: string): Omit<AppSpec, 'name'> {
    const specs = this.opts.behaviour.apps;
    return specs?.find((s) => s.name === name) ?? DEFAULT_APP_SPEC;
  }

  private logAppOf(app: AppInstance, runningSince: Millis): LogApp {
    return {
      uuid: app.uuid,
      name: app.config.displayName,
      domainName: domainNameOf(app),
      linesPerSec: this.appSpec(app.config.displayName).logLinesPerSec,
      runningSince,
    };
  }

  private bridgeNumOf(niUuid: string): number {
    let n = 0;
    for (const uuid of this.configState.networkInstances.keys()) {
      n++;
      if (uuid === niUuid) return n;
    }
    return 1;
  }
}

/** EVE's domain name for an app instance: "<uuid>.<version>.<n>". */
function domainNameOf(app: AppInstance): string {
  return `${app.uuid}.${app.config.version || '1'}.1`;
}
