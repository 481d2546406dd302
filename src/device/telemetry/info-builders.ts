// Builders for the ZInfoMsg payloads a simulated EVE node sends (wire facts §6): ZiDevice, ZiApp,
// ZiNetworkInstance, ZiVolume, ZiContentTree and the identifier-only deletion messages. Pure
// functions of their inputs; atTimeStamp is the enqueue time the caller passes in (EVE marshals
// the message once, when it queues it). Also the ZSwState paths an app, volume and content tree
// take, as data the device core walks through.

import { info } from '../../gen/eve-types.js';
import type { DeviceBehaviour } from '../device-options.js';
import type { ConfigItemStatusReport } from '../core/eve-timers.js';
import type { Millis } from '../ports.js';

// ---------------------------------------------------------------------------------------------
// Small shared helpers

export interface ProtoTimestamp {
  seconds: number;
  nanos: number;
}

/** Clock ms → google.protobuf.Timestamp. */
export function toTimestamp(ms: Millis): ProtoTimestamp {
  const ts: ProtoTimestamp = { seconds: 0, nanos: 0 };
  setTimestamp(ts, ms);
  return ts;
}

/** toTimestamp into an existing Timestamp (a reused one: log generation's scratch entry). */
export function setTimestamp(ts: ProtoTimestamp, ms: Millis): void {
  const seconds = Math.floor(ms / 1000);
  ts.seconds = seconds;
  ts.nanos = Math.round((ms - seconds * 1000) * 1e6);
}

/** A duration as a Timestamp whose seconds are the duration (EVE's "1970" uptime quirk, §7.2). */
export function durationAsTimestamp(ms: Millis): ProtoTimestamp {
  return toTimestamp(Math.max(0, ms));
}

/** One management port of a simulated device. */
export interface ManagementPort {
  ifname: 'eth0' | 'eth1';
  /** Logical label used by the controller's device model. */
  label: string;
  mac: string;
  ipv4: string;
  gateway: string;
  subnet: string;
  ipv6LinkLocal: string;
}

/**
 * The two management ports, derived from the fleet index so every device gets distinct, stable
 * addresses without storing them: eth0 in 10.0.0.0/8 and eth1 in 100.64.0.0/10, 250 devices per
 * /24, MACs under the 52:54:00 (QEMU) prefix.
 */
export function managementPorts(deviceIndex: number): ManagementPort[] {
  const host = 2 + (deviceIndex % 250);
  const net = Math.floor(deviceIndex / 250);
  const b2 = net % 256;
  const b1 = Math.floor(net / 256) % 256;
  const m1 = (deviceIndex >>> 16) & 0xff;
  const m2 = (deviceIndex >>> 8) & 0xff;
  const m3 = deviceIndex & 0xff;
  const port = (i: 0 | 1): ManagementPort => {
    const macBytes = [0x52, 0x54, i, m1, m2, m3];
    const first = i === 0 ? `10.${b1}.${b2}` : `100.${64 + (b1 % 64)}.${b2}`;
    return {
      ifname: i === 0 ? 'eth0' : 'eth1',
      label: i === 0 ? 'WAN' : 'LAN',
      mac: macBytes.map(hex2).join(':'),
      ipv4: `${first}.${host}`,
      gateway: `${first}.1`,
      subnet: `${first}.0/24`,
      ipv6LinkLocal: linkLocalFromMac(macBytes),
    };
  };
  return [port(0), port(1)];
}

function hex2(b: number): string {
  return b.toString(16).padStart(2, '0');
}

/** fe80:: address from a MAC by modified EUI-64, as the kernel assigns it. */
function linkLocalFromMac(m: number[]): string {
  const g = [((m[0]! ^ 0x02) << 8) | m[1]!, (m[2]! << 8) | 0xff, 0xfe00 | m[3]!, (m[4]! << 8) | m[5]!];
  return `fe80::${g.map((x) => x.toString(16)).join(':')}`;
}

/** EVE build string → uname machine: "14.5.2-kvm-amd64" → "x86_64". */
export function machineArchOf(eveVersion: string): string {
  const arch = eveVersion.split('-').pop() ?? '';
  switch (arch) {
    case 'amd64':
      return 'x86_64';
    case 'arm64':
      return 'aarch64';
    case 'riscv64':
      return 'riscv64';
    default:
      return 'x86_64';
  }
}

/** SMBIOS-style system UUID derived from the device index (stable, not the controller UUID). */
function smbiosUuid(deviceIndex: number): string {
  const h = (deviceIndex >>> 0).toString(16).padStart(8, '0');
  return `${h}-0200-0400-0500-${(Math.imul(deviceIndex, 0x9e3779b1) >>> 0).toString(16).padStart(8, '0')}0006`;
}

// ---------------------------------------------------------------------------------------------
// ZiDevice

export interface DeviceInfoInput {
  devId: string;
  deviceIndex: number;
  serial: string;
  behaviour: Pick<DeviceBehaviour, 'eveVersion' | 'hardware'>;
  hasTpm: boolean;
  bootTime: Millis;
  /** Why and when the device last rebooted (first boot: omit). */
  lastRebootReason?: string;
  lastRebootTime?: Millis;
  lastBootReason?: info.BootReason;
  restartCounter: number;
  rebootConfigCounter: number;
  shutdownConfigCounter: number;
  baseosUpdateCounter?: number;
  state?: info.ZDeviceState;
  configItemStatus?: ConfigItemStatusReport;
  appInstances?: ReadonlyArray<{ uuid: string; name: string; domainName: string }>;
  attestationState: info.AttestationState;
  /** Set when the last attestation step failed. */
  attestationError?: string;
  maintenanceMode?: boolean;
  maintenanceReasons?: info.MaintenanceModeReason[];
  /** Echoed from config. */
  deviceName?: string;
  enterpriseName?: string;
  enterpriseId?: string;
  projectName?: string;
  projectId?: string;
  /** Only when the effective profile differs from the global one (§6.2). */
  localProfile?: string;
}

/** Highest EdgeDevConfig feature level current EVE announces (§6.2, newer API). */
export const EVE_API_CAPABILITY = info.APICapability.API_CAPABILITY_APP_INSTANCE_NET_INTERFACE_CHANGE;

const PERSIST_SHARE = 0.92;

export function buildDeviceInfo(d: DeviceInfoInput, now: Millis): info.ZInfoMsg {
  const hw = d.behaviour.hardware;
  const arch = machineArchOf(d.behaviour.eveVersion);
  const ports = managementPorts(d.deviceIndex);
  const dinfo: info.ZInfoDevice = {
    machineArch: arch,
    cpuArch: arch,
    platform: arch,
    ncpu: hw.ncpu,
    memory: hw.memoryMB,
    storage: hw.storageMB,
    minfo: {
      manufacturer: hw.manufacturer,
      productName: hw.model,
      version: '1.0',
      serialNumber: d.serial,
      UUID: smbiosUuid(d.deviceIndex),
      compatible: arch,
      biosVendor: 'evesim',
      biosVersion: '1.0',
      biosReleaseDate: '01/01/2025',
    },
    network: ports.map((p) => ({
      macAddr: p.mac,
      devName: p.ifname,
      alias: p.label,
      IPAddrs: [p.ipv4, p.ipv6LinkLocal],
      defaultRouters: [p.gateway],
      dns: { DNSservers: [p.gateway] },
      ipv4_up: true,
      uplink: true,
      localName: p.ifname,
      ntp_servers: [p.gateway],
    })),
    dns: { DNSservers: [ports[0]!.gateway] },
    storageList: [
      { device: '/dev/sda9', mountPath: '/persist', total: Math.floor(hw.storageMB * PERSIST_SHARE), storageLocation: true },
    ],
    bootTime: toTimestamp(d.bootTime),
    swList: [
      {
        activated: true,
        partitionLabel: 'IMGA',
        partitionDevice: '/dev/sda2',
        partitionState: 'active',
        status: info.ZSwState.INSTALLED,
        shortVersion: d.behaviour.eveVersion,
        longVersion: d.behaviour.eveVersion,
        userStatus: info.BaseOsStatus.UPDATED,
      },
      {
        activated: false,
        partitionLabel: 'IMGB',
        partitionDevice: '/dev/sda3',
        partitionState: 'unused',
        status: info.ZSwState.INITIAL,
      },
    ],
    HostName: d.devId,
    restartCounter: d.restartCounter,
    HSMStatus: d.hasTpm ? info.HwSecurityModuleStatus.ENABLED : info.HwSecurityModuleStatus.NOTFOUND,
    dataSecAtRestInfo: d.hasTpm
      ? {
          status: info.DataSecAtRestStatus.DATASEC_AT_REST_ENABLED,
          info: 'Using TPM-sealed key',
          vaultList: [{ name: 'Application Data Store', status: info.DataSecAtRestStatus.DATASEC_AT_REST_ENABLED, pcrStatus: info.PCRStatus.PCR_ENABLED }],
        }
      : {
          status: info.DataSecAtRestStatus.DATASEC_AT_REST_DISABLED,
          info: 'TPM is either absent or not in use',
        },
    rebootConfigCounter: d.rebootConfigCounter,
    last_boot_reason: d.lastBootReason ?? info.BootReason.BOOT_REASON_FIRST,
    hardware_watchdog_present: true,
    capabilities: { HWAssistedVirtualization: true, IOVirtualization: true },
    state: d.state ?? info.ZDeviceState.ZDEVICE_STATE_ONLINE,
    shutdown_config_counter: d.shutdownConfigCounter,
    attestation_info: {
      state: d.attestationState,
      ...(d.attestationError
        ? { error: { description: d.attestationError, timestamp: toTimestamp(now), severity: info.Severity.SEVERITY_ERROR } }
        : {}),
    },
    api_capability: EVE_API_CAPABILITY,
  };
  if (d.hasTpm) dinfo.HSMInfo = 'Simulated TPM 2.0 (evesim)';
  if (d.lastRebootReason !== undefined) dinfo.lastRebootReason = d.lastRebootReason;
  if (d.lastRebootTime !== undefined) dinfo.lastRebootTime = toTimestamp(d.lastRebootTime);
  if (d.baseosUpdateCounter !== undefined) dinfo.baseos_update_counter = d.baseosUpdateCounter;
  if (d.configItemStatus) dinfo.configItemStatus = d.configItemStatus;
  if (d.appInstances?.length) dinfo.appInstances = d.appInstances.map((a) => ({ uuid: a.uuid, name: a.name, domainName: a.domainName }));
  if (d.maintenanceMode) {
    dinfo.maintenance_mode = true;
    dinfo.maintenance_mode_reasons = d.maintenanceReasons ?? [info.MaintenanceModeReason.MAINTENANCE_MODE_REASON_USER_REQUESTED];
  }
  if (d.localProfile) dinfo.local_profile = d.localProfile;
  if (d.deviceName) dinfo.device_name = d.deviceName;
  if (d.enterpriseName) dinfo.enterprise_name = d.enterpriseName;
  if (d.enterpriseId) dinfo.enterprise_id = d.enterpriseId;
  if (d.projectName) dinfo.project_name = d.projectName;
  if (d.projectId) dinfo.project_id = d.projectId;
  return { ztype: info.ZInfoTypes.ZiDevice, devId: d.devId, dinfo, atTimeStamp: toTimestamp(now) };
}

// ---------------------------------------------------------------------------------------------
// ZiApp

export interface AppInterfaceInput {
  /** VIF name on the host, e.g. "nbu1x1.1". */
  vifName: string;
  mac: string;
  ip?: string;
  gateway?: string;
  /** Interface name inside the app, e.g. "eth0". */
  localName?: string;
}

export interface AppInfoInput {
  uuid: string;
  name: string;
  version: string;
  state: info.ZSwState;
  /** When the app last booted (only reported once it did). */
  bootTime?: Millis;
  volumeRefs?: readonly string[];
  interfaces?: readonly AppInterfaceInput[];
  /** Human-readable error, reported as appErr. */
  error?: { description: string; at: Millis };
}

export function buildAppInfo(devId: string, a: AppInfoInput, now: Millis): info.ZInfoMsg {
  const ainfo: info.ZInfoApp = {
    AppID: a.uuid,
    appVersion: a.version,
    systemApp: false,
    AppName: a.name,
    state: a.state,
  };
  if (a.bootTime !== undefined) ainfo.bootTime = toTimestamp(a.bootTime);
  if (a.volumeRefs?.length) ainfo.volumeRefs = [...a.volumeRefs];
  if (a.interfaces?.length) {
    ainfo.network = a.interfaces.map((i) => {
      const n: info.ZInfoNetwork = { macAddr: i.mac, devName: i.vifName, localName: i.localName ?? 'eth0' };
      if (i.ip) {
        n.IPAddrs = [i.ip];
        n.ipv4_up = true;
      }
      if (i.gateway) n.defaultRouters = [i.gateway];
      return n;
    });
  }
  if (a.error) {
    ainfo.appErr = [
      {
        description: a.error.description,
        timestamp: toTimestamp(a.error.at),
        severity: info.Severity.SEVERITY_ERROR,
        entities: [{ entity: info.Entity.ENTITY_APP_INSTANCE, entity_id: a.uuid, entity_name: a.name }],
      },
    ];
  }
  return { ztype: info.ZInfoTypes.ZiApp, devId, ainfo, atTimeStamp: toTimestamp(now) };
}

// ---------------------------------------------------------------------------------------------
// ZiNetworkInstance

export interface NetworkInstanceInput {
  uuid: string;
  version: string;
  displayName: string;
  /** config ZNetworkInstType value (1 switch, 2 local, …). */
  instType: number;
  activated: boolean;
  state: info.ZNetworkInstanceState;
  upTime?: Millis;
  /** Uplink ports, e.g. ["eth0"]. */
  ports: readonly string[];
  bridgeNum: number;
  bridgeIp?: string;
  mtu?: number;
  vifs?: ReadonlyArray<{ vifName: string; mac: string; appId: string; ip?: string }>;
}

export function buildNetworkInstanceInfo(devId: string, ni: NetworkInstanceInput, now: Millis): info.ZInfoMsg {
  const niinfo: info.ZInfoNetworkInstance = {
    networkID: ni.uuid,
    networkVersion: ni.version,
    instType: ni.instType,
    displayname: ni.displayName,
    activated: ni.activated,
    ports: [...ni.ports],
    bridgeNum: ni.bridgeNum,
    bridgeName: `bn${ni.bridgeNum}`,
    state: ni.state,
    mtu: ni.mtu ?? 1500,
  };
  if (ni.upTime !== undefined) niinfo.upTimeStamp = toTimestamp(ni.upTime);
  if (ni.ports[0]) niinfo.CurrentUplinkIntf = ni.ports[0];
  if (ni.bridgeIp) niinfo.bridgeIPAddr = ni.bridgeIp;
  if (ni.vifs?.length) {
    niinfo.vifs = ni.vifs.map((v) => ({ vifName: v.vifName, macAddress: v.mac, appID: v.appId }));
    const assigned = ni.vifs.filter((v) => v.ip);
    if (assigned.length) niinfo.ipAssignments = assigned.map((v) => ({ macAddress: v.mac, ipAddress: [v.ip!] }));
  }
  if (ni.bridgeIp && ni.ports[0]) {
    niinfo.ip_routes = [{ destination_network: '0.0.0.0/0', port: ni.ports[0] }];
  }
  return { ztype: info.ZInfoTypes.ZiNetworkInstance, devId, niinfo, atTimeStamp: toTimestamp(now) };
}

// ---------------------------------------------------------------------------------------------
// ZiVolume / ZiContentTree

export interface VolumeInput {
  uuid: string;
  displayName: string;
  state: info.ZSwState;
  progressPercentage: number;
  maxSizeBytes: number;
  curSizeBytes: number;
  createTime: Millis;
  refCount: number;
  lastRefcountChangeTime?: Millis;
  generationCount: number;
}

export function buildVolumeInfo(devId: string, v: VolumeInput, now: Millis): info.ZInfoMsg {
  const vinfo: info.ZInfoVolume = {
    uuid: v.uuid,
    displayName: v.displayName,
    usage: {
      createTime: toTimestamp(v.createTime),
      refCount: v.refCount,
      ...(v.lastRefcountChangeTime !== undefined ? { lastRefcountChangeTime: toTimestamp(v.lastRefcountChangeTime) } : {}),
    },
    resources: { maxSizeBytes: v.maxSizeBytes, curSizeBytes: v.curSizeBytes },
    state: v.state,
    progressPercentage: v.progressPercentage,
    generation_count: v.generationCount,
  };
  return { ztype: info.ZInfoTypes.ZiVolume, devId, vinfo, atTimeStamp: toTimestamp(now) };
}

export interface ContentTreeInput {
  uuid: string;
  displayName: string;
  sha256: string;
  state: info.ZSwState;
  progressPercentage: number;
  curSizeBytes: number;
  createTime: Millis;
  refCount: number;
  generationCount: number;
}

export function buildContentTreeInfo(devId: string, c: ContentTreeInput, now: Millis): info.ZInfoMsg {
  const cinfo: info.ZInfoContentTree = {
    uuid: c.uuid,
    displayName: c.displayName,
    sha256: c.sha256,
    resources: { curSizeBytes: c.curSizeBytes },
    usage: { createTime: toTimestamp(c.createTime), refCount: c.refCount },
    state: c.state,
    progressPercentage: c.progressPercentage,
    componentShaList: [c.sha256],
    generation_count: c.generationCount,
  };
  return { ztype: info.ZInfoTypes.ZiContentTree, devId, cinfo, atTimeStamp: toTimestamp(now) };
}

// ---------------------------------------------------------------------------------------------
// Deletions: the info message with only the identifier set (§6.4)

export type DeletableInfoKind = 'app' | 'network-instance' | 'volume' | 'content-tree';

export function buildDeletedInfo(kind: DeletableInfoKind, devId: string, id: string, now: Millis): info.ZInfoMsg {
  const atTimeStamp = toTimestamp(now);
  switch (kind) {
    case 'app':
      return { ztype: info.ZInfoTypes.ZiApp, devId, ainfo: { AppID: id }, atTimeStamp };
    case 'network-instance':
      return { ztype: info.ZInfoTypes.ZiNetworkInstance, devId, niinfo: { networkID: id }, atTimeStamp };
    case 'volume':
      return { ztype: info.ZInfoTypes.ZiVolume, devId, vinfo: { uuid: id }, atTimeStamp };
    case 'content-tree':
      return { ztype: info.ZInfoTypes.ZiContentTree, devId, cinfo: { uuid: id }, atTimeStamp };
  }
}

// ---------------------------------------------------------------------------------------------
// ZSwState paths

const S = info.ZSwState;

/** States an app instance reports on its way from new config to RUNNING. */
export const APP_START_PATH: readonly info.ZSwState[] = [
  S.INITIAL,
  S.DOWNLOAD_STARTED,
  S.DOWNLOADED,
  S.VERIFIED,
  S.LOADED,
  S.CREATED_VOLUME,
  S.INSTALLED,
  S.BOOTING,
  S.RUNNING,
];
/** Deactivation (activate=false). */
export const APP_HALT_PATH: readonly info.ZSwState[] = [S.HALTING, S.HALTED];
/** Restart command (restart counter bumped): back to RUNNING without re-download. */
export const APP_RESTART_PATH: readonly info.ZSwState[] = [S.RESTARTING, S.BOOTING, S.RUNNING];
/** Purge command: volumes re-created from the images. */
export const APP_PURGE_PATH: readonly info.ZSwState[] = [S.PURGING, S.CREATED_VOLUME, S.INSTALLED, S.BOOTING, S.RUNNING];
/** A volume created from a content tree. */
export const VOLUME_CREATE_PATH: readonly info.ZSwState[] = [S.INITIAL, S.CREATING_VOLUME, S.CREATED_VOLUME];
/** A content tree (image) being fetched. */
export const CONTENT_TREE_PATH: readonly info.ZSwState[] = [
  S.INITIAL,
  S.DOWNLOAD_STARTED,
  S.DOWNLOADED,
  S.VERIFYING,
  S.VERIFIED,
  S.LOADING,
  S.LOADED,
];

/** The state after `current` on `path`, or undefined at (or off) its end. */
export function nextSwState(path: readonly info.ZSwState[], current: info.ZSwState): info.ZSwState | undefined {
  const i = path.indexOf(current);
  return i >= 0 && i + 1 < path.length ? path[i + 1] : undefined;
}

/** Download progress EVE reports for a state on the start path (percent). */
export function progressFor(state: info.ZSwState): number {
  switch (state) {
    case S.INITIAL:
      return 0;
    case S.DOWNLOAD_STARTED:
      return 10;
    default:
      return 100;
  }
}
