// The state of one embedded LPS: a site, that is a group of devices. Site-wide defaults (local
// profile, radio silence, 404 throttling) with per-device overrides, the app and device commands
// issued to each device with their issue and completion times, and a record of what each device
// posted. No I/O: the server feeds requests in, the admin API changes it, the state file persists
// toJSON().
//
// How the LPS tells devices apart. The protocol carries a device id in one place only
// (LocalDevInfo.device_uuid); GET local_profile, radio, appinfo and location carry none, and EVE's
// X-Request-Id is a fresh random UUID per request (eve-wire-facts §11.2, §15.2 #17). In EVE every
// device talks to its own LPS (an app instance on it), so a real LPS never has to. An embedded LPS
// serves many devices, so it identifies a device by its peer: the Host header (the
// local_profile_server address the device was given) plus the connection's source address. The
// first devinfo from a peer binds that peer to the device UUID it reports (EVE triggers devinfo
// together with every other endpoint when it learns the address, so this happens at once); until
// then the peer's posts are kept under 'peer:<host>|<addr>' and merged into the device on binding.
// When the Host name's first label is a UUID (e.g. '<uuid>.lps.invalid:8888', see
// deviceLpsAddress()), that UUID is the device from the first request on.

import { profile } from '../../gen/eve-types.js';
import { LPS_ENDPOINT_INDEX, LPS_SERVED_ENDPOINTS, type LpsServedEndpoint } from './lps-endpoints.js';

export type LpsAppCommandName = 'restart' | 'purge';
export type LpsDeviceCommandName = 'shutdown' | 'poweroff' | 'reboot' | 'collect-info';

export const LPS_APP_COMMANDS: readonly LpsAppCommandName[] = ['restart', 'purge'];
export const LPS_DEVICE_COMMANDS: readonly LpsDeviceCommandName[] = ['shutdown', 'poweroff', 'reboot', 'collect-info'];

const APP_CMD_CODE: Record<LpsAppCommandName, profile.AppCommand.Command> = {
  restart: profile.AppCommand.Command.COMMAND_RESTART,
  purge: profile.AppCommand.Command.COMMAND_PURGE,
};
export const DEVICE_CMD_CODE: Record<LpsDeviceCommandName, profile.LocalDevCmd.Command> = {
  shutdown: profile.LocalDevCmd.Command.COMMAND_SHUTDOWN,
  poweroff: profile.LocalDevCmd.Command.COMMAND_GRACEFUL_POWEROFF,
  reboot: profile.LocalDevCmd.Command.COMMAND_GRACEFUL_REBOOT,
  'collect-info': profile.LocalDevCmd.Command.COMMAND_COLLECT_INFO,
};

/** App selector of an app command: id and/or display name (both must match when both are given). */
export interface LpsAppTarget {
  id?: string;
  name?: string;
}

export interface AppCommandRecord {
  target: LpsAppTarget;
  command: LpsAppCommandName;
  timestamp: number;
  /** Server clock ms when issued. */
  issuedAt: number;
  /** Server clock ms when the device first reported last_cmd_timestamp = timestamp. */
  completedAt?: number;
}

export interface DeviceCommandRecord {
  command: LpsDeviceCommandName;
  timestamp: number;
  issuedAt: number;
  completedAt?: number;
}

/** Most commands kept per device (completed ones go first). */
const MAX_APP_COMMANDS = 64;
const MAX_DEVICE_COMMANDS = 16;
const N_ENDPOINTS = LPS_SERVED_ENDPOINTS.length;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class LpsDevice {
  uuid: string | undefined;
  // Admin overrides (undefined = the site default).
  profile: string | undefined;
  radioSilence: boolean | undefined;
  throttle: number | undefined;
  appCommands: AppCommandRecord[] = [];
  deviceCommands: DeviceCommandRecord[] = [];
  // What the device sent (not persisted).
  readonly posts = new Uint32Array(N_ENDPOINTS);
  readonly lastAt = new Float64Array(N_ENDPOINTS);
  readonly lastBody: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(N_ENDPOINTS);
  /** Bodies that did not decode. */
  badBodies = 0;
  lastPeer = '';

  constructor(public key: string) {
    if (UUID_RE.test(key)) this.uuid = key.toLowerCase();
  }

  /** Whether admin state makes this device worth persisting. */
  get hasAdminState(): boolean {
    return this.profile !== undefined || this.radioSilence !== undefined || this.throttle !== undefined || this.appCommands.length > 0 || this.deviceCommands.length > 0;
  }

  /** The device command served now (the latest issued). */
  get currentDeviceCommand(): DeviceCommandRecord | undefined {
    return this.deviceCommands[this.deviceCommands.length - 1];
  }
}

export interface LpsSiteDefaults {
  profile?: string;
  radioSilence?: boolean;
  throttle?: readonly LpsServedEndpoint[];
}

/** What changed, so the server knows how urgently to persist. */
export type LpsMutation = 'command' | 'config' | 'completion' | 'binding';

/** JSON form of the persisted state (the state file). */
export interface LpsSiteJson {
  version: 1;
  token: string;
  lastTimestamp: number;
  site: { profile: string; radioSilence: boolean | null; throttle: LpsServedEndpoint[] };
  devices: {
    key: string;
    profile?: string;
    radioSilence?: boolean;
    throttle?: LpsServedEndpoint[];
    appCommands: AppCommandRecord[];
    deviceCommands: DeviceCommandRecord[];
  }[];
  peers: [string, string][];
}

export class LpsSite {
  readonly devices = new Map<string, LpsDevice>();
  /** peer ('host|addr') → device UUID learned from devinfo. */
  private readonly peers = new Map<string, string>();
  profile: string;
  radioSilence: boolean | undefined;
  throttle: number;
  private lastTimestamp = 0;
  onMutation: (kind: LpsMutation) => void = () => {};

  constructor(
    readonly token: string,
    private readonly now: () => number,
    defaults: LpsSiteDefaults = {},
  ) {
    this.profile = defaults.profile ?? '';
    this.radioSilence = defaults.radioSilence;
    this.throttle = maskOf(defaults.throttle ?? []);
  }

  // ---------------------------------------------------------------------------------------------
  // Device identification

  /** The device a request comes from (created on first contact). */
  resolve(hostHeader: string, remoteAddress: string): LpsDevice {
    const fromHost = uuidFromHost(hostHeader);
    if (fromHost !== undefined) return this.getOrCreate(fromHost);
    const peer = `${hostHeader}|${remoteAddress}`;
    const bound = this.peers.get(peer);
    const d = bound !== undefined ? this.getOrCreate(bound) : this.getOrCreate(`peer:${peer}`);
    d.lastPeer = peer;
    return d;
  }

  /** A devinfo from `peer` says it is `uuid`: bind, and fold the peer's record into the device. */
  bind(d: LpsDevice, hostHeader: string, remoteAddress: string, uuid: string): LpsDevice {
    if (!UUID_RE.test(uuid)) return d;
    const id = uuid.toLowerCase();
    if (d.uuid === id) return d;
    if (uuidFromHost(hostHeader) !== undefined) return d; // the Host already names the device
    const peer = `${hostHeader}|${remoteAddress}`;
    this.peers.set(peer, id);
    const target = this.getOrCreate(id);
    target.lastPeer = peer;
    if (d !== target && d.uuid === undefined) {
      merge(d, target);
      this.devices.delete(d.key);
    }
    this.onMutation('binding');
    return target;
  }

  /** A device by UUID or key; `create` makes UUID-named devices that never called yet. */
  find(keyOrUuid: string, create: boolean): LpsDevice | undefined {
    const k = UUID_RE.test(keyOrUuid) ? keyOrUuid.toLowerCase() : keyOrUuid;
    const d = this.devices.get(k);
    if (d !== undefined || !create || !UUID_RE.test(k)) return d;
    return this.getOrCreate(k);
  }

  /** Devices that identified themselves (have a UUID). */
  knownDevices(): LpsDevice[] {
    return [...this.devices.values()].filter((d) => d.uuid !== undefined);
  }

  private getOrCreate(key: string): LpsDevice {
    let d = this.devices.get(key);
    if (d === undefined) {
      d = new LpsDevice(key);
      this.devices.set(key, d);
    }
    return d;
  }

  // ---------------------------------------------------------------------------------------------
  // What a device is served

  effectiveProfile(d: LpsDevice): string {
    return d.profile ?? this.profile;
  }

  /** Radio silence to serve, or undefined when no radio configuration was ever set (answer 204). */
  effectiveRadioSilence(d: LpsDevice): boolean | undefined {
    return d.radioSilence ?? this.radioSilence;
  }

  isThrottled(d: LpsDevice, ep: LpsServedEndpoint): boolean {
    const mask = d.throttle ?? this.throttle;
    return (mask & (1 << LPS_ENDPOINT_INDEX[ep])) !== 0;
  }

  /** The latest command per app target (the LPS keeps sending them; EVE ignores handled ones). */
  servedAppCommands(d: LpsDevice): profile.AppCommand[] {
    const latest = new Map<string, AppCommandRecord>();
    for (const c of d.appCommands) latest.set(targetKey(c.target), c); // issue order: later wins
    return [...latest.values()].map((c) => ({
      id: c.target.id ?? '',
      displayname: c.target.name ?? '',
      timestamp: c.timestamp,
      command: APP_CMD_CODE[c.command],
    }));
  }

  // ---------------------------------------------------------------------------------------------
  // What a device reports

  /** Records a request and its body (counts, time, last body). */
  record(d: LpsDevice, ep: LpsServedEndpoint, body: Uint8Array | undefined, at: number): void {
    const i = LPS_ENDPOINT_INDEX[ep];
    d.posts[i]!++;
    d.lastAt[i] = at;
    if (body !== undefined && body.length > 0) d.lastBody[i] = body;
  }

  /** appinfo: an app command is complete when a matching app reports its timestamp. */
  noteAppInfo(d: LpsDevice, apps: readonly profile.LocalAppInfo[]): void {
    let changed = false;
    const at = this.now();
    for (const c of d.appCommands) {
      if (c.completedAt !== undefined) continue;
      const done = apps.some((a) => matches(c.target, a.id ?? '', a.name ?? '') && (a.last_cmd_timestamp ?? 0) === c.timestamp);
      if (done) {
        c.completedAt = at;
        changed = true;
      }
    }
    if (changed) this.onMutation('completion');
  }

  /** devinfo: a device command is complete when last_cmd_timestamp equals its timestamp. */
  noteDevInfo(d: LpsDevice, m: profile.LocalDevInfo): void {
    const ts = m.last_cmd_timestamp ?? 0;
    if (ts === 0) return;
    let changed = false;
    for (const c of d.deviceCommands) {
      if (c.completedAt === undefined && c.timestamp === ts) {
        c.completedAt = this.now();
        changed = true;
      }
    }
    if (changed) this.onMutation('completion');
  }

  // ---------------------------------------------------------------------------------------------
  // Admin changes

  /** A fresh command timestamp: epoch ms, strictly increasing, also across restarts (persisted). */
  nextTimestamp(): number {
    const t = Math.max(Math.floor(this.now()), this.lastTimestamp + 1);
    this.lastTimestamp = t;
    return t;
  }

  issueAppCommand(devices: readonly LpsDevice[], target: LpsAppTarget, command: LpsAppCommandName): AppCommandRecord[] {
    const issuedAt = this.now();
    const out: AppCommandRecord[] = [];
    for (const d of devices) {
      const rec: AppCommandRecord = { target: { ...target }, command, timestamp: this.nextTimestamp(), issuedAt };
      d.appCommands.push(rec);
      trim(d.appCommands, MAX_APP_COMMANDS);
      out.push(rec);
    }
    this.onMutation('command');
    return out;
  }

  issueDeviceCommand(devices: readonly LpsDevice[], command: LpsDeviceCommandName): DeviceCommandRecord[] {
    const issuedAt = this.now();
    const out: DeviceCommandRecord[] = [];
    for (const d of devices) {
      const rec: DeviceCommandRecord = { command, timestamp: this.nextTimestamp(), issuedAt };
      d.deviceCommands.push(rec);
      trim(d.deviceCommands, MAX_DEVICE_COMMANDS);
      out.push(rec);
    }
    this.onMutation('command');
    return out;
  }

  setProfile(value: string | null, devices?: readonly LpsDevice[]): void {
    if (devices === undefined) this.profile = value ?? '';
    else for (const d of devices) d.profile = value ?? undefined;
    this.onMutation('config');
  }

  setRadioSilence(value: boolean | null, devices?: readonly LpsDevice[]): void {
    if (devices === undefined) this.radioSilence = value ?? undefined;
    else for (const d of devices) d.radioSilence = value ?? undefined;
    this.onMutation('config');
  }

  setThrottle(endpoints: readonly LpsServedEndpoint[] | null, devices?: readonly LpsDevice[]): void {
    if (devices === undefined) this.throttle = maskOf(endpoints ?? []);
    else for (const d of devices) d.throttle = endpoints === null ? undefined : maskOf(endpoints);
    this.onMutation('config');
  }

  throttledEndpoints(d?: LpsDevice): LpsServedEndpoint[] {
    return endpointsOf(d?.throttle ?? this.throttle);
  }

  // ---------------------------------------------------------------------------------------------
  // Persistence

  toJSON(): LpsSiteJson {
    const devices: LpsSiteJson['devices'] = [];
    for (const d of this.devices.values()) {
      if (!d.hasAdminState) continue;
      devices.push({
        key: d.key,
        ...(d.profile !== undefined ? { profile: d.profile } : {}),
        ...(d.radioSilence !== undefined ? { radioSilence: d.radioSilence } : {}),
        ...(d.throttle !== undefined ? { throttle: endpointsOf(d.throttle) } : {}),
        appCommands: d.appCommands,
        deviceCommands: d.deviceCommands,
      });
    }
    return {
      version: 1,
      token: this.token,
      lastTimestamp: this.lastTimestamp,
      site: { profile: this.profile, radioSilence: this.radioSilence ?? null, throttle: endpointsOf(this.throttle) },
      devices,
      peers: [...this.peers.entries()],
    };
  }

  /** Loads a state file's content; throws naming the field that is wrong. */
  static fromJSON(raw: unknown, now: () => number, where: string, tokenOverride?: string): LpsSite {
    const j = raw as Partial<LpsSiteJson>;
    const bad = (field: string, why: string): never => {
      throw new Error(`${where}: ${field} ${why}`);
    };
    if (typeof j !== 'object' || j === null) bad('(top level)', 'must be a JSON object');
    if (j.version !== 1) bad('version', `must be 1, got ${JSON.stringify(j.version)}`);
    if (typeof j.token !== 'string') bad('token', 'must be a string');
    if (typeof j.lastTimestamp !== 'number') bad('lastTimestamp', 'must be a number');
    const s = j.site ?? bad('site', 'is missing');
    const site = new LpsSite(tokenOverride ?? j.token!, now, {
      profile: typeof s.profile === 'string' ? s.profile : bad('site.profile', 'must be a string'),
      radioSilence: s.radioSilence === null ? undefined : typeof s.radioSilence === 'boolean' ? s.radioSilence : bad('site.radioSilence', 'must be true, false or null'),
      throttle: checkEndpoints(s.throttle, 'site.throttle', bad),
    });
    site.lastTimestamp = j.lastTimestamp!;
    if (!Array.isArray(j.devices)) bad('devices', 'must be an array');
    j.devices!.forEach((e, i) => {
      const f = `devices[${i}]`;
      if (typeof e?.key !== 'string' || e.key === '') bad(`${f}.key`, 'must be a non-empty string');
      const d = site.getOrCreate(e.key);
      if (e.profile !== undefined) d.profile = typeof e.profile === 'string' ? e.profile : bad(`${f}.profile`, 'must be a string');
      if (e.radioSilence !== undefined) d.radioSilence = typeof e.radioSilence === 'boolean' ? e.radioSilence : bad(`${f}.radioSilence`, 'must be a boolean');
      if (e.throttle !== undefined) d.throttle = maskOf(checkEndpoints(e.throttle, `${f}.throttle`, bad));
      if (!Array.isArray(e.appCommands)) bad(`${f}.appCommands`, 'must be an array');
      if (!Array.isArray(e.deviceCommands)) bad(`${f}.deviceCommands`, 'must be an array');
      e.appCommands.forEach((c, k) => {
        if (!LPS_APP_COMMANDS.includes(c?.command) || typeof c.timestamp !== 'number' || typeof c.issuedAt !== 'number' || typeof c.target !== 'object') {
          bad(`${f}.appCommands[${k}]`, 'must be {target, command: restart|purge, timestamp, issuedAt, completedAt?}');
        }
      });
      e.deviceCommands.forEach((c, k) => {
        if (!LPS_DEVICE_COMMANDS.includes(c?.command) || typeof c.timestamp !== 'number' || typeof c.issuedAt !== 'number') {
          bad(`${f}.deviceCommands[${k}]`, 'must be {command: shutdown|poweroff|reboot|collect-info, timestamp, issuedAt, completedAt?}');
        }
      });
      d.appCommands = e.appCommands.map((c) => ({ ...c, target: { ...c.target } }));
      d.deviceCommands = e.deviceCommands.map((c) => ({ ...c }));
    });
    for (const p of j.peers ?? []) {
      if (!Array.isArray(p) || typeof p[0] !== 'string' || typeof p[1] !== 'string') bad('peers', 'must be [peer, uuid] pairs');
      site.peers.set(p[0], p[1]);
    }
    return site;
  }
}

/** The local_profile_server value that names a device to an embedded LPS from the first request. */
export function deviceLpsAddress(deviceUuid: string, port: number): string {
  if (!UUID_RE.test(deviceUuid)) throw new Error(`deviceLpsAddress: ${JSON.stringify(deviceUuid)} is not a UUID`);
  return `${deviceUuid.toLowerCase()}.lps.invalid:${port}`;
}

/** Device UUID from a Host header whose first DNS label is a UUID. */
export function uuidFromHost(hostHeader: string): string | undefined {
  const dot = hostHeader.indexOf('.');
  if (dot !== 36) return undefined;
  const label = hostHeader.slice(0, 36);
  return UUID_RE.test(label) ? label.toLowerCase() : undefined;
}

function matches(t: LpsAppTarget, id: string, name: string): boolean {
  return (t.id === undefined || t.id === '' || t.id.toLowerCase() === id.toLowerCase()) && (t.name === undefined || t.name === '' || t.name === name);
}

function targetKey(t: LpsAppTarget): string {
  return `${(t.id ?? '').toLowerCase()}|${t.name ?? ''}`;
}

function trim<T extends { completedAt?: number }>(list: T[], max: number): void {
  while (list.length > max) {
    const i = list.findIndex((c) => c.completedAt !== undefined);
    list.splice(i >= 0 ? i : 0, 1);
  }
}

function merge(from: LpsDevice, into: LpsDevice): void {
  for (let i = 0; i < N_ENDPOINTS; i++) {
    into.posts[i]! += from.posts[i]!;
    if (from.lastAt[i]! > into.lastAt[i]!) {
      into.lastAt[i] = from.lastAt[i]!;
      if (from.lastBody[i] !== undefined) into.lastBody[i] = from.lastBody[i];
    }
  }
  into.badBodies += from.badBodies;
  into.appCommands.push(...from.appCommands);
  into.deviceCommands.push(...from.deviceCommands);
  into.profile ??= from.profile;
  into.radioSilence ??= from.radioSilence;
  into.throttle ??= from.throttle;
}

function maskOf(eps: readonly LpsServedEndpoint[]): number {
  let m = 0;
  for (const e of eps) m |= 1 << LPS_ENDPOINT_INDEX[e];
  return m;
}

function endpointsOf(mask: number): LpsServedEndpoint[] {
  return LPS_SERVED_ENDPOINTS.filter((e) => (mask & (1 << LPS_ENDPOINT_INDEX[e])) !== 0);
}

function checkEndpoints(v: unknown, field: string, bad: (f: string, why: string) => never): LpsServedEndpoint[] {
  if (!Array.isArray(v) || v.some((e) => !(LPS_SERVED_ENDPOINTS as readonly string[]).includes(e))) {
    return bad(field, `must be a list of ${LPS_SERVED_ENDPOINTS.join(', ')}`);
  }
  return v as LpsServedEndpoint[];
}

