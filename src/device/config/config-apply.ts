// What a device makes of an EdgeDevConfig it accepted (§3): global config items → timers, app
// instances (create / update / delete, effective activation with profiles, restart and purge
// counters), network instances, volumes and content trees (info for each, deletion info when
// removed), reboot and shutdown commands with EVE's first-seen rule (§3.5), controller_epoch and
// controllercert_confighash changes, and the names echoed in ZInfoDevice.

import { info, type config } from '../../gen/eve-types.js';
import type { DeviceOptions } from '../device-options.js';
import { AppInstance, effectiveActivation, type AppConfigView, type AppHost } from './app-instance.js';
import { armed, disarmed, type DeviceTimer } from '../core/device-timer.js';
import { DEFAULT_DEVICE_TIMERS, type ConfigItemStatusReport, type DeviceTimers } from '../core/eve-timers.js';
import {
  buildContentTreeInfo,
  buildDeletedInfo,
  buildNetworkInstanceInfo,
  buildVolumeInfo,
  CONTENT_TREE_PATH,
  nextSwState,
  progressFor,
  VOLUME_CREATE_PATH,
} from '../telemetry/info-builders.js';
import type { InfoQueueKind } from '../telemetry/info-queue.js';
import type { Millis } from '../ports.js';
import { sharedRecord, sharedString } from './shared-config-values.js';
import { sharedConfigItems } from './parsed-config-items.js';
import { SmallMap } from '../../memory/small-map.js';

const S = info.ZSwState;

export interface ConfigApplyHost {
  readonly opts: DeviceOptions;
  readonly uuid: string;
  publishInfo(key: string, kind: InfoQueueKind, msg: info.ZInfoMsg, now: Millis): void;
  onAppStateChange(app: AppInstance, previous: info.ZSwState, now: Millis): void;
  onAppRemoved(app: AppInstance, now: Millis): void;
  onTimersChanged(previous: DeviceTimers, next: DeviceTimers, now: Millis): void;
  /** controller_epoch changed: every info message is published again (§6.5). */
  onEpochChanged(now: Millis): void;
  /** controllercert_confighash changed: GET /certs again (§4.3). */
  onCertConfigHashChanged(now: Millis): void;
  /** A reboot DeviceOpsCmd whose counter changed after the first one seen (§3.5). */
  onRebootCommand(now: Millis): void;
  /** Something reported in ZInfoDevice changed. */
  onDeviceInfoChanged(now: Millis): void;
  guard(fn: () => void): void;
}

interface NetworkInstanceState {
  version: string;
  displayName: string;
  instType: number;
  activated: boolean;
  disableFlowlog: boolean;
  bridgeNum: number;
  upTime: Millis;
}

interface StoredObjectState {
  displayName: string;
  generation: number;
  sizeBytes: number;
  sha256: string;
  createTime: Millis;
  state: info.ZSwState;
}

export class DeviceConfigState implements AppHost {
  // Timer callbacks: one function for every device (see DeviceTimer).
  private static readonly onObjectTimer = (c: DeviceConfigState, dueAt: Millis): void => {
    c.objectTimer = undefined;
    c.host.guard(() => c.stepObjects(dueAt));
  };

  // Timers, item status, and the names and hashes kept of objects and apps are
  // shared-config-values.ts's copies, one per worker thread for every device that was sent the
  // same: replaced, never edited. UUIDs are each device's own and are not shared.
  timers: Readonly<DeviceTimers> = DEFAULT_DEVICE_TIMERS;
  configItemStatus: Readonly<ConfigItemStatusReport> | undefined;
  deviceName = '';
  enterpriseName = '';
  enterpriseId = '';
  projectName = '';
  projectId = '';
  globalProfile = '';
  /** Profile set by a local profile server ('' = none); changed through setLocalProfile(). */
  localProfile = '';
  /** Last reboot / shutdown counters seen; persisted across reboots (undefined: never seen). */
  rebootCounter: number | undefined;
  shutdownCounter: number | undefined;
  /** A shutdown command halted all apps until the next boot. */
  shutdownActive = false;
  /** In memory: lost at reboot. */
  controllerEpoch: number | undefined;
  certConfigHash = '';
  // SmallMaps (memory/small-map.ts): a device keeps a handful of each, and a Map costs 184 B even then.
  readonly apps = new SmallMap<string, AppInstance>();
  readonly networkInstances = new SmallMap<string, NetworkInstanceState>();
  readonly volumes = new SmallMap<string, StoredObjectState>();
  readonly contentTrees = new SmallMap<string, StoredObjectState>();
  /** The next step of volumes and content trees being made, only while one is due (core/device-timer.ts). */
  private objectTimer: DeviceTimer | undefined;

  constructor(private readonly host: ConfigApplyHost) {}

  // AppHost
  get scheduler() {
    return this.host.opts.scheduler;
  }
  get appStepMs(): number {
    return this.host.opts.behaviour.appStepMs;
  }
  onAppStateChange(app: AppInstance, previous: info.ZSwState, at: Millis): void {
    this.host.onAppStateChange(app, previous, at);
  }
  guard(fn: () => void): void {
    this.host.guard(fn);
  }

  /** The reported reboot / shutdown counters (the ones acted on, or first recorded). */
  get rebootConfigCounter(): number {
    return this.rebootCounter ?? 0;
  }
  get shutdownConfigCounter(): number {
    return this.shutdownCounter ?? 0;
  }

  /** Applies a new configuration (its hash differed from the last one accepted). */
  apply(cfg: config.EdgeDevConfig, now: Millis): void {
    const host = this.host;
    const items = sharedConfigItems(cfg.configItems ?? []);
    const previousTimers = this.timers;
    this.timers = items.timers;
    this.configItemStatus = items.status;
    host.onTimersChanged(previousTimers, this.timers, now);

    // The device's own name is its own; the rest is the same for a whole project. An equal name
    // keeps the string already held, so an item-only change leaves no old copy behind (sameAppView).
    const deviceName = cfg.device_name ?? '';
    if (deviceName !== this.deviceName) this.deviceName = deviceName;
    this.enterpriseName = sharedString(cfg.enterprise_name ?? '');
    this.enterpriseId = sharedString(cfg.enterprise_id ?? '');
    this.projectName = sharedString(cfg.project_name ?? '');
    this.projectId = sharedString(cfg.project_id ?? '');
    this.globalProfile = sharedString(cfg.global_profile ?? '');

    const certHash = cfg.controllercert_confighash ?? '';
    if (certHash !== this.certConfigHash) {
      this.certConfigHash = certHash;
      host.onCertConfigHashChanged(now);
    }

    this.applyObjects(cfg, now);
    this.applyApps(cfg.apps ?? [], now);

    const shutdown = cfg.shutdown ? (cfg.shutdown.counter ?? 0) : undefined;
    if (shutdown !== undefined && shutdown !== this.shutdownCounter) {
      const firstSeen = this.shutdownCounter === undefined;
      this.shutdownCounter = shutdown;
      if (!firstSeen) this.shutdownAllApps(now);
    }

    // §3.5: the first reboot counter ever seen is only recorded (and reported); a later change reboots.
    const reboot = cfg.reboot ? (cfg.reboot.counter ?? 0) : undefined;
    let rebootRequested = false;
    if (reboot !== undefined && reboot !== this.rebootCounter) {
      rebootRequested = this.rebootCounter !== undefined;
      this.rebootCounter = reboot;
    }

    host.onDeviceInfoChanged(now);

    const epoch = cfg.controller_epoch ?? 0;
    if (this.controllerEpoch !== undefined && epoch !== this.controllerEpoch) {
      this.controllerEpoch = epoch;
      host.onEpochChanged(now);
    } else this.controllerEpoch = epoch;

    // Last: a reboot ends this boot.
    if (rebootRequested) host.onRebootCommand(now);
  }

  /** Publishes info for every configured object again (controller_epoch change, §6.5). */
  republishObjects(now: Millis): void {
    for (const uuid of this.networkInstances.keys()) this.publishNetworkInstance(uuid, now);
    for (const uuid of this.volumes.keys()) this.publishVolume(uuid, now);
    for (const uuid of this.contentTrees.keys()) this.publishContentTree(uuid, now);
  }

  /** Whether a network instance has flow logging turned off. */
  flowlogDisabled(niUuid: string): boolean {
    return this.networkInstances.get(niUuid)?.disableFlowlog ?? false;
  }

  /** New boot: in-memory state is gone, persisted counters stay, apps come back from their volumes. */
  onBoot(now: Millis): void {
    this.controllerEpoch = undefined;
    this.certConfigHash = '';
    this.shutdownActive = false;
    for (const app of this.apps.values()) app.rebootReset(this.wantRunning(app.config), now);
  }

  /** Stops every wake-up (device stops or goes down). */
  dispose(): void {
    this.objectTimer = disarmed(this.objectTimer);
    for (const app of this.apps.values()) app.dispose();
  }

  /** The local profile from an LPS changed ('' = none): every app's activation is re-evaluated (§3.4). */
  setLocalProfile(value: string, now: Millis): void {
    if (value === this.localProfile) return;
    this.localProfile = value;
    for (const app of this.apps.values()) app.setWantRunning(this.wantRunning(app.config), now);
  }

  /** An LPS device command (shutdown, poweroff, reboot): every app halts until the next boot. */
  haltAllApps(now: Millis): void {
    this.shutdownAllApps(now);
  }

  private wantRunning(view: AppConfigView): boolean {
    return !this.shutdownActive && effectiveActivation(view.activate, view.profiles, this.globalProfile, this.localProfile);
  }

  private applyApps(apps: readonly config.AppInstanceConfig[], now: Millis): void {
    const seen = new Set<string>();
    for (const a of apps) {
      const view = appView(a, this.volumes, this.networkInstances);
      if (view.uuid === '' || seen.has(view.uuid)) continue;
      seen.add(view.uuid);
      const existing = this.apps.get(view.uuid);
      // The UUID text the device already holds (as the map's key), not a second copy of it.
      if (existing) view.uuid = existing.config.uuid;
      if (existing) {
        const renamed = existing.config.displayName !== view.displayName || existing.config.version !== view.version;
        // An app the new config does not change keeps the view it holds (see sameAppView).
        existing.update(sameAppView(existing.config, view) ? existing.config : view, this.wantRunning(view), now);
        if (renamed) this.host.onAppStateChange(existing, existing.state, now);
      } else {
        this.apps.set(view.uuid, new AppInstance(this, view, this.wantRunning(view), now));
      }
    }
    for (const [uuid, app] of this.apps) {
      if (seen.has(uuid)) continue;
      this.apps.delete(uuid);
      app.dispose();
      this.host.onAppRemoved(app, now);
      this.host.publishInfo(uuid, 'app', buildDeletedInfo('app', this.host.uuid, uuid, now), now);
    }
  }

  private shutdownAllApps(now: Millis): void {
    this.shutdownActive = true;
    for (const app of this.apps.values()) app.setWantRunning(false, now);
  }

  private applyObjects(cfg: config.EdgeDevConfig, now: Millis): void {
    const host = this.host;
    // Network instances: online at once (no DHCP or bridge setup is simulated).
    const nis = new Set<string>();
    (cfg.networkInstances ?? []).forEach((n, i) => {
      const uuid = n.uuidandversion?.uuid ?? '';
      if (uuid === '' || nis.has(uuid)) return;
      nis.add(uuid);
      const next: NetworkInstanceState = {
        version: sharedString(n.uuidandversion?.version ?? ''),
        displayName: sharedString(n.displayname ?? ''),
        instType: n.instType ?? 0,
        activated: n.activate ?? false,
        disableFlowlog: n.disable_flowlog ?? false,
        bridgeNum: i + 1,
        upTime: now,
      };
      const prev = this.networkInstances.get(uuid);
      if (prev) next.upTime = prev.upTime;
      if (!prev || prev.version !== next.version || prev.displayName !== next.displayName || prev.activated !== next.activated || prev.instType !== next.instType) {
        this.networkInstances.set(uuid, next);
        this.publishNetworkInstance(uuid, now);
      } else if (prev.disableFlowlog !== next.disableFlowlog || prev.bridgeNum !== next.bridgeNum) {
        this.networkInstances.set(uuid, next);
      }
      // Unchanged: the state it holds stays (a config change elsewhere replaces nothing here).
    });
    this.removeMissing(this.networkInstances, nis, 'network-instance', now);

    // Content trees and volumes walk their ZSwState paths, one step per appStepMs.
    const trees = new Set<string>();
    for (const c of cfg.contentInfo ?? []) {
      const uuid = c.uuid ?? '';
      if (uuid === '' || trees.has(uuid)) continue;
      trees.add(uuid);
      const prev = this.contentTrees.get(uuid);
      const generation = c.generation_count ?? 0;
      if (prev && prev.generation === generation && prev.displayName === (c.displayName ?? '')) continue;
      this.contentTrees.set(uuid, {
        displayName: sharedString(c.displayName ?? ''),
        generation,
        sizeBytes: c.maxSizeBytes ?? 0,
        sha256: sharedString(c.sha256 ?? ''),
        createTime: prev?.createTime ?? now,
        state: prev && prev.generation === generation ? prev.state : CONTENT_TREE_PATH[0]!,
      });
      this.publishContentTree(uuid, now);
    }
    this.removeMissing(this.contentTrees, trees, 'content-tree', now);

    const vols = new Set<string>();
    for (const v of cfg.volumes ?? []) {
      const uuid = v.uuid ?? '';
      if (uuid === '' || vols.has(uuid)) continue;
      vols.add(uuid);
      const prev = this.volumes.get(uuid);
      const generation = v.generationCount ?? 0;
      if (prev && prev.generation === generation && prev.displayName === (v.displayName ?? '')) continue;
      this.volumes.set(uuid, {
        displayName: sharedString(v.displayName ?? ''),
        generation,
        sizeBytes: v.maxsizebytes ?? 0,
        sha256: '',
        createTime: prev?.createTime ?? now,
        state: prev && prev.generation === generation ? prev.state : VOLUME_CREATE_PATH[0]!,
      });
      this.publishVolume(uuid, now);
    }
    this.removeMissing(this.volumes, vols, 'volume', now);
    this.armObjects(now);
  }

  private removeMissing<V>(map: SmallMap<string, V>, keep: Set<string>, kind: 'network-instance' | 'volume' | 'content-tree', now: Millis): void {
    for (const uuid of [...map.keys()]) {
      if (keep.has(uuid)) continue;
      map.delete(uuid);
      this.host.publishInfo(uuid, kind, buildDeletedInfo(kind, this.host.uuid, uuid, now), now);
    }
  }

  private armObjects(now: Millis): void {
    const pending = (m: SmallMap<string, StoredObjectState>, path: readonly info.ZSwState[]) => {
      for (const o of m.values()) if (nextSwState(path, o.state) !== undefined) return true;
      return false;
    };
    if (pending(this.contentTrees, CONTENT_TREE_PATH) || pending(this.volumes, VOLUME_CREATE_PATH)) {
      this.objectTimer ??= armed(undefined, now + this.host.opts.behaviour.appStepMs, this.host.opts.scheduler, this, DeviceConfigState.onObjectTimer);
    }
  }

  private stepObjects(now: Millis): void {
    for (const [uuid, c] of this.contentTrees) {
      const next = nextSwState(CONTENT_TREE_PATH, c.state);
      if (next === undefined) continue;
      c.state = next;
      this.publishContentTree(uuid, now);
    }
    for (const [uuid, v] of this.volumes) {
      const next = nextSwState(VOLUME_CREATE_PATH, v.state);
      if (next === undefined) continue;
      v.state = next;
      this.publishVolume(uuid, now);
    }
    this.armObjects(now);
  }

  private publishNetworkInstance(uuid: string, now: Millis): void {
    const n = this.networkInstances.get(uuid)!;
    const msg = buildNetworkInstanceInfo(
      this.host.uuid,
      {
        uuid,
        version: n.version,
        displayName: n.displayName,
        instType: n.instType,
        activated: n.activated,
        state: n.activated ? info.ZNetworkInstanceState.ZNETINST_STATE_ONLINE : info.ZNetworkInstanceState.ZNETINST_STATE_INIT,
        upTime: n.upTime,
        ports: ['eth0'],
        bridgeNum: n.bridgeNum,
        bridgeIp: `10.1.${n.bridgeNum}.1`,
      },
      now,
    );
    this.host.publishInfo(uuid, 'network-instance', msg, now);
  }

  private refCount(volumeUuid: string): number {
    let n = 0;
    for (const app of this.apps.values()) if (app.config.volumeRefs.includes(volumeUuid)) n++;
    return n;
  }

  private publishVolume(uuid: string, now: Millis): void {
    const v = this.volumes.get(uuid)!;
    const done = v.state === S.CREATED_VOLUME;
    const msg = buildVolumeInfo(
      this.host.uuid,
      {
        uuid,
        displayName: v.displayName,
        state: v.state,
        progressPercentage: done ? 100 : v.state === S.CREATING_VOLUME ? 50 : 0,
        maxSizeBytes: v.sizeBytes,
        curSizeBytes: done ? Math.floor(v.sizeBytes / 4) : 0,
        createTime: v.createTime,
        refCount: this.refCount(uuid),
        generationCount: v.generation,
      },
      now,
    );
    this.host.publishInfo(uuid, 'volume', msg, now);
  }

  private publishContentTree(uuid: string, now: Millis): void {
    const c = this.contentTrees.get(uuid)!;
    const msg = buildContentTreeInfo(
      this.host.uuid,
      {
        uuid,
        displayName: c.displayName,
        sha256: c.sha256,
        state: c.state,
        progressPercentage: progressFor(c.state),
        curSizeBytes: progressFor(c.state) === 100 ? c.sizeBytes : 0,
        createTime: c.createTime,
        refCount: 1,
        generationCount: c.generation,
      },
      now,
    );
    this.host.publishInfo(uuid, 'content-tree', msg, now);
  }
}

/**
 * The parts of an AppInstanceConfig the simulation uses. UUIDs are the device's own (a controller
 * makes app instances, volumes and network instances per device); names, versions and profile
 * lists are the thread's shared copies. Volume and network instance UUIDs are the strings the
 * device's volume and network instance maps already hold as keys (applied just before the apps),
 * not copies of their own: each copy was another 56-byte string per reference and device.
 */
function appView(a: config.AppInstanceConfig, volumes: ReadonlyMap<string, unknown>, networkInstances: ReadonlyMap<string, unknown>): AppConfigView {
  return {
    uuid: a.uuidandversion?.uuid ?? '',
    version: sharedString(a.uuidandversion?.version ?? ''),
    displayName: sharedString(a.displayname ?? ''),
    activate: a.activate ?? false,
    profiles: sharedRecord('profiles', a.profile_list ?? []),
    restartCounter: a.restart?.counter ?? 0,
    purgeCounter: a.purge?.counter ?? 0,
    volumeRefs: (a.volumeRefList ?? []).map((v) => keyText(volumes, v.uuid ?? '')),
    networks: (a.interfaces ?? []).map((i) => keyText(networkInstances, i.networkId ?? '')),
  };
}

/**
 * Whether a new view says what the held one says. Then the device keeps the one it holds: a
 * fleet-wide change of one config item makes every device apply a whole new config within a minute,
 * and replacing every unchanged app's view and network instance state (about 0.5 KiB a device,
 * long-lived, so in the old generation) turned it all into old-generation garbage at once, in the
 * minute the workers' mark-compacts already came four times as often.
 */
function sameAppView(held: AppConfigView, next: AppConfigView): boolean {
  return (
    held.uuid === next.uuid &&
    held.version === next.version &&
    held.displayName === next.displayName &&
    held.activate === next.activate &&
    held.profiles === next.profiles && // shared records: equal lists are one object
    held.restartCounter === next.restartCounter &&
    held.purgeCounter === next.purgeCounter &&
    sameStrings(held.volumeRefs, next.volumeRefs) &&
    sameStrings(held.networks, next.networks)
  );
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The key of `map` equal to `text` (the string object it holds), or `text` itself. A device has a handful of keys. */
function keyText(map: ReadonlyMap<string, unknown>, text: string): string {
  for (const k of map.keys()) if (k === text) return k;
  return text;
}
