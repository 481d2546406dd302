// The fleet the controller serves (PUT /admin/fleet): device groups with their configuration, and
// the serials that belong to them. Devices listed with a device certificate are pre-registered
// (they may skip /register and go straight to /uuid).

import type { AppTemplate, AttestationSpec, GroupSpec } from '../../scenario/scenario-types.js';
import { AdminInputError } from './config-overlay.js';
import { parseAttestationSpec } from './pcr-templates.js';
import { parseGroupLps } from './lps-config.js';

export interface FleetDevice {
  serial: string;
  group: string;
  /** Device certificate PEM: the device is pre-registered with it. */
  deviceCertPem?: string;
}

export interface FleetSpec {
  groups: GroupSpec[];
  devices: FleetDevice[];
  /** PCR templates for TPM quotes (see pcr-templates.ts). */
  attestation?: AttestationSpec;
  /**
   * PATCH only: the groups listed replace the controller's groups of the same name, as PUT would
   * (their spec as given, every change made to them since dropped), instead of being kept. What the
   * run that owns the timeline (shard 0) sends, so it starts from its scenario and not from where an
   * earlier run's timeline left a group.
   */
  replaceGroups?: boolean;
}

/** Group used while no fleet was set: no apps, no config items. */
export const DEFAULT_GROUP: GroupSpec = {
  name: 'default',
  count: 0,
  api: 'v2',
  eveVersion: '',
  preRegistered: false,
  logFormat: 'newlogs',
  logLinesPerSec: 0,
  flowlogIntervalMs: 120_000,
  apps: [],
  configItems: {},
  globalProfile: '',
  hardware: { ncpu: 4, memoryMB: 8192, storageMB: 65536, model: 'evesim-device', manufacturer: 'evesim' },
  appStepMs: 1000,
};

const FLEET_FIELDS = new Set(['groups', 'devices', 'attestation', 'replaceGroups']);

/**
 * Checks a JSON fleet body. Only the GroupSpec fields the controller serves are required
 * (name; apps, configItems, globalProfile and hardware default to empty); errors name the field,
 * e.g. `groups[1].apps[0].profiles[2]`.
 */
export function parseFleetSpec(body: unknown): FleetSpec {
  const obj = object(body, 'body');
  for (const k of Object.keys(obj)) if (!FLEET_FIELDS.has(k)) throw new AdminInputError(k, 'unknown field');
  const groupsRaw = array(obj.groups ?? [], 'groups');
  const groups = groupsRaw.map((g, i) => parseGroup(g, `groups[${i}]`));
  const names = new Set<string>();
  groups.forEach((g, i) => {
    if (names.has(g.name)) throw new AdminInputError(`groups[${i}].name`, `duplicate group name "${g.name}"`);
    names.add(g.name);
  });
  const serials = new Set<string>();
  const devices = array(obj.devices ?? [], 'devices').map((d, i): FleetDevice => {
    const f = `devices[${i}]`;
    const o = object(d, f);
    const serial = string(o.serial, `${f}.serial`);
    if (serial === '') throw new AdminInputError(`${f}.serial`, 'must not be empty');
    if (serials.has(serial)) throw new AdminInputError(`${f}.serial`, `duplicate serial "${serial}"`);
    serials.add(serial);
    const group = string(o.group, `${f}.group`);
    if (!names.has(group)) throw new AdminInputError(`${f}.group`, `no group named "${group}"`);
    const out: FleetDevice = { serial, group };
    if (o.deviceCertPem !== undefined) out.deviceCertPem = string(o.deviceCertPem, `${f}.deviceCertPem`);
    return out;
  });
  return {
    groups,
    devices,
    ...(obj.attestation !== undefined ? { attestation: parseAttestationSpec(obj.attestation) } : {}),
    ...(obj.replaceGroups !== undefined && bool(obj.replaceGroups, 'replaceGroups') ? { replaceGroups: true } : {}),
  };
}

function parseGroup(raw: unknown, f: string): GroupSpec {
  const o = object(raw, f);
  const name = string(o.name, `${f}.name`);
  if (name === '') throw new AdminInputError(`${f}.name`, 'must not be empty');
  const apps = array(o.apps ?? [], `${f}.apps`).map((a, i) => parseApp(a, `${f}.apps[${i}]`));
  const appNames = new Set<string>();
  apps.forEach((a, i) => {
    if (appNames.has(a.name)) throw new AdminInputError(`${f}.apps[${i}].name`, `duplicate app name "${a.name}"`);
    appNames.add(a.name);
  });
  const configItems: Record<string, string> = {};
  for (const [k, v] of Object.entries(object(o.configItems ?? {}, `${f}.configItems`))) {
    configItems[k] = string(v, `${f}.configItems.${k}`);
  }
  const hw = object(o.hardware ?? {}, `${f}.hardware`);
  const hardware = { ...DEFAULT_GROUP.hardware };
  for (const k of ['ncpu', 'memoryMB', 'storageMB'] as const) if (hw[k] !== undefined) hardware[k] = number(hw[k], `${f}.hardware.${k}`);
  for (const k of ['model', 'manufacturer'] as const) if (hw[k] !== undefined) hardware[k] = string(hw[k], `${f}.hardware.${k}`);
  return {
    ...DEFAULT_GROUP,
    ...(o as Partial<GroupSpec>),
    name,
    apps,
    configItems,
    globalProfile: o.globalProfile === undefined ? '' : string(o.globalProfile, `${f}.globalProfile`),
    hardware,
    ...(o.lps !== undefined ? { lps: parseGroupLps(o.lps, `${f}.lps`) } : {}),
  };
}

function parseApp(raw: unknown, f: string): AppTemplate {
  const o = object(raw, f);
  const name = string(o.name, `${f}.name`);
  if (name === '') throw new AdminInputError(`${f}.name`, 'must not be empty');
  const activate = o.activate === undefined ? true : bool(o.activate, `${f}.activate`);
  const profiles = array(o.profiles ?? [], `${f}.profiles`).map((p, i) => string(p, `${f}.profiles[${i}]`));
  return {
    name,
    activate,
    profiles,
    logLinesPerSec: o.logLinesPerSec === undefined ? 0 : number(o.logLinesPerSec, `${f}.logLinesPerSec`),
    flowsPerMessage: o.flowsPerMessage === undefined ? 0 : number(o.flowsPerMessage, `${f}.flowsPerMessage`),
  };
}

function object(v: unknown, f: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new AdminInputError(f, 'must be a JSON object');
  return v as Record<string, unknown>;
}
function array(v: unknown, f: string): unknown[] {
  if (!Array.isArray(v)) throw new AdminInputError(f, 'must be a JSON array');
  return v;
}
function string(v: unknown, f: string): string {
  if (typeof v !== 'string') throw new AdminInputError(f, 'must be a string');
  return v;
}
function number(v: unknown, f: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new AdminInputError(f, 'must be a non-negative number');
  return v;
}
function bool(v: unknown, f: string): boolean {
  if (typeof v !== 'boolean') throw new AdminInputError(f, 'must be true or false');
  return v;
}
