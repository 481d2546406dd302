// Changes made to a group's or a device's configuration while a run goes on (PATCH on the admin
// API). The served EdgeDevConfig is GroupSpec ⊕ group overlay ⊕ device overlay; every change bumps
// `version`, which invalidates the cached config hash.

export interface AppOverlay {
  activate?: boolean;
  /** Added to the app's restart / purge counters (InstanceOpsCmd.counter). */
  restart: number;
  purge: number;
}

export interface ConfigOverlay {
  version: number;
  /** key → value; null removes a key the group serves. */
  configItems?: Map<string, string | null>;
  apps?: Map<string, AppOverlay>;
  /** Added to the reboot / shutdown DeviceOpsCmd counters and to controller_epoch. */
  reboot: number;
  shutdown: number;
  epoch: number;
  globalProfile?: string;
  localProfileServer?: string;
  profileServerToken?: string;
  deviceName?: string;
  maintenanceMode?: boolean;
}

/** Body of PATCH /admin/devices/{id}/config and /admin/groups/{name}/config. */
export interface ConfigPatch {
  configItems?: Record<string, string | null>;
  apps?: Record<string, { activate?: boolean; restart?: boolean; purge?: boolean }>;
  reboot?: boolean;
  shutdown?: boolean;
  controllerEpoch?: boolean;
  globalProfile?: string;
  localProfileServer?: string;
  profileServerToken?: string;
  deviceName?: string;
  maintenanceMode?: boolean;
}

let versionCounter = 0;
/**
 * Next value of the controller-wide config version counter. Group and device overlays draw from
 * the same counter, so a version number never repeats and a cached hash can't match by accident.
 */
export const nextConfigVersion = (): number => ++versionCounter;

/** A version restored from disk is taken again: later versions are drawn above it. */
export function reserveConfigVersion(version: number): void {
  if (version > versionCounter) versionCounter = version;
}

export function emptyOverlay(): ConfigOverlay {
  return { version: 0, reboot: 0, shutdown: 0, epoch: 0 };
}

/** Thrown for a bad admin body; `field` names the offending JSON path. */
export class AdminInputError extends Error {
  constructor(readonly field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'AdminInputError';
  }
}

const PATCH_KEYS = new Set([
  'configItems', 'apps', 'reboot', 'shutdown', 'controllerEpoch', 'globalProfile',
  'localProfileServer', 'profileServerToken', 'deviceName', 'maintenanceMode',
]);

/** Validates a JSON patch body; errors name the field. `appNames` are the apps the target knows. */
export function parseConfigPatch(body: unknown, appNames: ReadonlySet<string>): ConfigPatch {
  const obj = asObject(body, 'body');
  for (const k of Object.keys(obj)) if (!PATCH_KEYS.has(k)) throw new AdminInputError(k, 'unknown field');
  const patch: ConfigPatch = {};
  if (obj.configItems !== undefined) {
    const items = asObject(obj.configItems, 'configItems');
    patch.configItems = {};
    for (const [k, v] of Object.entries(items)) {
      if (v !== null && typeof v !== 'string') throw new AdminInputError(`configItems.${k}`, 'must be a string or null');
      patch.configItems[k] = v;
    }
  }
  if (obj.apps !== undefined) {
    const apps = asObject(obj.apps, 'apps');
    patch.apps = {};
    for (const [name, raw] of Object.entries(apps)) {
      if (!appNames.has(name)) throw new AdminInputError(`apps.${name}`, `no such app (known: ${[...appNames].join(', ') || 'none'})`);
      const a = asObject(raw, `apps.${name}`);
      const out: { activate?: boolean; restart?: boolean; purge?: boolean } = {};
      for (const [k, v] of Object.entries(a)) {
        if (k !== 'activate' && k !== 'restart' && k !== 'purge') throw new AdminInputError(`apps.${name}.${k}`, 'unknown field');
        out[k] = asBool(v, `apps.${name}.${k}`);
      }
      patch.apps[name] = out;
    }
  }
  for (const k of ['reboot', 'shutdown', 'controllerEpoch', 'maintenanceMode'] as const) {
    if (obj[k] !== undefined) patch[k] = asBool(obj[k], k);
  }
  for (const k of ['globalProfile', 'localProfileServer', 'profileServerToken', 'deviceName'] as const) {
    if (obj[k] !== undefined) {
      if (typeof obj[k] !== 'string') throw new AdminInputError(k, 'must be a string');
      patch[k] = obj[k] as string;
    }
  }
  return patch;
}

export function applyConfigPatch(o: ConfigOverlay, p: ConfigPatch): void {
  if (p.configItems) {
    o.configItems ??= new Map();
    for (const [k, v] of Object.entries(p.configItems)) o.configItems.set(k, v);
  }
  if (p.apps) {
    o.apps ??= new Map();
    for (const [name, a] of Object.entries(p.apps)) {
      const cur = o.apps.get(name) ?? { restart: 0, purge: 0 };
      if (a.activate !== undefined) cur.activate = a.activate;
      if (a.restart) cur.restart++;
      if (a.purge) cur.purge++;
      o.apps.set(name, cur);
    }
  }
  if (p.reboot) o.reboot++;
  if (p.shutdown) o.shutdown++;
  if (p.controllerEpoch) o.epoch++;
  if (p.globalProfile !== undefined) o.globalProfile = p.globalProfile;
  if (p.localProfileServer !== undefined) o.localProfileServer = p.localProfileServer;
  if (p.profileServerToken !== undefined) o.profileServerToken = p.profileServerToken;
  if (p.deviceName !== undefined) o.deviceName = p.deviceName;
  if (p.maintenanceMode !== undefined) o.maintenanceMode = p.maintenanceMode;
  o.version = nextConfigVersion();
}

function asObject(v: unknown, field: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new AdminInputError(field, 'must be a JSON object');
  return v as Record<string, unknown>;
}

function asBool(v: unknown, field: string): boolean {
  if (typeof v !== 'boolean') throw new AdminInputError(field, 'must be true or false');
  return v;
}
