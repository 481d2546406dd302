// Registered devices and the fleet they belong to. Lookups by sender-certificate hash (every
// enveloped request), by UUID (paths), by onboarding certificate + serial (register) and by
// serial (admin). Registration outcomes follow controller-api-v2 "States and transitions".

import { createHash, randomUUID, X509Certificate, type KeyObject } from 'node:crypto';
import type { GroupSpec } from '../../scenario/scenario-types.js';
import { AdminInputError } from './config-overlay.js';
import { DeviceRecord } from './device-record.js';
import { DEFAULT_GROUP, type FleetSpec } from './fleet-spec.js';
import { GroupState } from './group-state.js';
import { resolvePcrTemplates, type PcrTemplate } from './pcr-templates.js';
import { restoreActivity, restoreAttest, restoreDevice, restoreOverlay } from './persisted-device.js';
import type { FleetChange, LoadedRegistry } from './registry-store.js';

/** Told of every change that must survive a restart (registry-store.ts writes it). */
export interface RegistryListener {
  deviceChanged(dev: DeviceRecord): void;
  /** The fleet changed; `groups` are the groups served now (their overlay versions enter the config). */
  fleetChanged(change: FleetChange, groups: readonly GroupState[]): void;
}

export interface RegisterInput {
  /** Hex SHA-256 of the onboarding certificate DER. */
  onboardFingerprint: string;
  serial: string;
  softSerial: string;
  deviceCertDer: Uint8Array;
  devicePublicKey: KeyObject;
}

export type RegisterOutcome =
  | { status: 201 | 200; device: DeviceRecord }
  | { status: 403 | 409; reason: string };

/** Map key for a certificate: its SHA-256 over DER, as a 32-character latin1 string. */
export function certHashKey(sha256: Uint8Array): string {
  return Buffer.from(sha256.buffer, sha256.byteOffset, sha256.byteLength).toString('latin1');
}

interface PreRegistration {
  serial: string;
  group: GroupState;
  hashKey: string;
  key: KeyObject;
}

export class DeviceRegistry {
  /** Whether a fleet was set (PUT /admin/fleet or the options); until then the default group alone. */
  private fleetSet = false;
  private groups: GroupState[] = [new GroupState(DEFAULT_GROUP)];
  private groupByName = new Map<string, GroupState>(this.groups.map((g) => [g.name, g]));
  /** Serial → group, for the serials the fleet lists. */
  private fleetSerials = new Map<string, GroupState>();
  private readonly byCertHash = new Map<string, DeviceRecord>();
  private readonly byUuid = new Map<string, DeviceRecord>();
  private readonly byOnboardSerial = new Map<string, DeviceRecord>();
  private readonly bySerial = new Map<string, DeviceRecord>();
  /** PCR templates TPM quotes are held to (the fleet's attestation.templates, 'reference' resolved). */
  pcrTemplates: PcrTemplate[] = [];
  /** Set when the registry is persisted; unset while restoring (nothing to write back). */
  listener: RegistryListener | undefined;

  constructor(private readonly requirePreRegistration: boolean) {}

  /**
   * Rebuilds the registry from what a previous run saved: the devices with their UUIDs, the fleet
   * changes replayed in order (which puts each device in its group again), then the overlays,
   * attestation states and counters. Call before any listener is set.
   */
  restore(saved: LoadedRegistry, now = Date.now()): void {
    // Until the fleet is replayed a device sits in a stand-in group of its saved name.
    const standIns = new Map<string, GroupState>();
    for (const s of saved.devices) {
      let group = this.groupByName.get(s.group) ?? standIns.get(s.group);
      if (!group) standIns.set(s.group, (group = new GroupState({ ...DEFAULT_GROUP, name: s.group })));
      const dev = restoreDevice(s, group);
      this.add(dev);
      if (dev.onboardFingerprint !== undefined) this.byOnboardSerial.set(`${dev.onboardFingerprint}\n${dev.serial}`, dev);
    }
    for (const change of saved.fleet) {
      if (change.op === 'set') this.setFleet(change.spec, now);
      else this.mergeFleet(change.spec, now);
    }
    for (const dev of this.byUuid.values()) {
      if (this.groupByName.get(dev.group.name) !== dev.group) dev.group = this.groupByName.get(dev.group.name) ?? this.groups[0]!;
      const attest = saved.attest.get(dev.uuid);
      if (attest) dev.attest = restoreAttest(attest);
      const activity = saved.activity.get(dev.uuid);
      if (activity) restoreActivity(dev, activity);
      const overlay = saved.deviceOverlays.get(dev.uuid);
      if (overlay) dev.overlay = restoreOverlay(overlay);
    }
    for (const [name, overlay] of saved.groupOverlays) {
      const group = this.groupByName.get(name);
      if (group) restoreOverlay(overlay, group.overlay);
    }
  }

  get size(): number {
    return this.byUuid.size;
  }

  byCert(hashKey: string): DeviceRecord | undefined {
    return this.byCertHash.get(hashKey);
  }

  byDeviceUuid(uuid: string): DeviceRecord | undefined {
    return this.byUuid.get(uuid);
  }

  /** Admin lookup: a UUID or a serial. */
  find(idOrSerial: string): DeviceRecord | undefined {
    return this.byUuid.get(idOrSerial) ?? this.bySerial.get(idOrSerial);
  }

  group(name: string): GroupState | undefined {
    return this.groupByName.get(name);
  }

  allGroups(): readonly GroupState[] {
    return this.groups;
  }

  *devices(): IterableIterator<DeviceRecord> {
    yield* this.byUuid.values();
  }

  /**
   * Replaces the fleet. Everything is checked before anything changes, so a bad body leaves the
   * previous fleet in place. Registered devices stay registered and move to the group their serial
   * now names (else the group of the same name, else the first group).
   */
  setFleet(spec: FleetSpec, now = Date.now()): { groups: number; devices: number; preRegistered: number } {
    const groups = spec.groups.length > 0 ? spec.groups.map((g) => new GroupState(g)) : [new GroupState(DEFAULT_GROUP)];
    const groupByName = new Map(groups.map((g) => [g.name, g]));
    const fleetSerials = new Map<string, GroupState>();
    const pre = this.checkFleetDevices(spec, groupByName, fleetSerials);
    const pcrTemplates = resolvePcrTemplates(spec.attestation);
    this.pcrTemplates = pcrTemplates;
    this.groups = groups;
    this.groupByName = groupByName;
    this.fleetSerials = fleetSerials;
    this.fleetSet = true;
    for (const dev of this.byUuid.values()) {
      dev.group = fleetSerials.get(dev.serial) ?? groupByName.get(dev.group.name) ?? groups[0]!;
    }
    this.preRegister(pre, now);
    this.listener?.fleetChanged({ op: 'set', spec }, this.groups);
    return { groups: groups.length, devices: spec.devices.length, preRegistered: pre.length };
  }

  /**
   * Adds to the fleet instead of replacing it (PATCH /admin/fleet): what each shard of a fleet run
   * sends one controller, its own devices. Groups the controller has keep their state (config
   * changes made since), unless `spec.replaceGroups`: then the groups listed are made again from
   * their spec, as PUT makes them, and the devices and serials in them move to the new ones (what
   * the shard that owns the timeline sends, so a run does not start from an earlier run's changes).
   * Groups it lacks are added; the devices' serials are added (a serial listed again moves to the
   * group named now) and pre-registered as setFleet does. Before any fleet was set, the same as
   * setFleet. Everything is checked before anything changes.
   */
  mergeFleet(spec: FleetSpec, now = Date.now()): { groups: number; devices: number; preRegistered: number } {
    if (!this.fleetSet) return this.setFleet(spec, now);
    const made = spec.groups.filter((g) => spec.replaceGroups === true || !this.groupByName.has(g.name)).map((g) => new GroupState(g));
    const groupByName = new Map(this.groupByName);
    for (const g of made) groupByName.set(g.name, g);
    // Serials already in the fleet follow their group to its new state, if it was made again.
    const fleetSerials = new Map([...this.fleetSerials].map(([serial, g]) => [serial, groupByName.get(g.name)!]));
    const pre = this.checkFleetDevices(spec, groupByName, fleetSerials);
    if (spec.attestation) this.pcrTemplates = resolvePcrTemplates(spec.attestation);
    this.groups = [...this.groups.map((g) => groupByName.get(g.name)!), ...made.filter((g) => !this.groupByName.has(g.name))];
    this.groupByName = groupByName;
    this.fleetSerials = fleetSerials;
    if (spec.replaceGroups === true) {
      for (const dev of this.byUuid.values()) dev.group = groupByName.get(dev.group.name) ?? dev.group;
    }
    for (const d of spec.devices) {
      const dev = this.bySerial.get(d.serial);
      if (dev) dev.group = groupByName.get(d.group)!;
    }
    this.preRegister(pre, now);
    this.listener?.fleetChanged({ op: 'merge', spec }, this.groups);
    return { groups: this.groups.length, devices: fleetSerials.size, preRegistered: pre.length };
  }

  /** Checks the devices of `spec` against `groupByName`, noting each serial's group in `fleetSerials`; the devices to pre-register. */
  private checkFleetDevices(spec: FleetSpec, groupByName: ReadonlyMap<string, GroupState>, fleetSerials: Map<string, GroupState>): PreRegistration[] {
    const pre: PreRegistration[] = [];
    spec.devices.forEach((d, i) => {
      const group = groupByName.get(d.group)!;
      fleetSerials.set(d.serial, group);
      if (d.deviceCertPem === undefined) return;
      let cert: X509Certificate;
      try {
        cert = new X509Certificate(d.deviceCertPem);
      } catch (e) {
        throw new AdminInputError(`devices[${i}].deviceCertPem`, `not a PEM certificate (${(e as Error).message})`);
      }
      const hashKey = certHashKey(createHash('sha256').update(cert.raw).digest());
      const existing = this.byCertHash.get(hashKey);
      if (existing && existing.serial !== d.serial) {
        throw new AdminInputError(`devices[${i}].deviceCertPem`, `certificate already belongs to device ${existing.uuid} (serial ${existing.serial})`);
      }
      if (!existing) pre.push({ serial: d.serial, group, hashKey, key: cert.publicKey });
    });
    return pre;
  }

  private preRegister(pre: readonly PreRegistration[], now: number): void {
    for (const p of pre) {
      const dev = new DeviceRecord(randomUUID(), p.serial, '', p.hashKey, p.key, p.group, now, true);
      this.add(dev);
      this.listener?.deviceChanged(dev);
    }
  }

  register(r: RegisterInput, now = Date.now()): RegisterOutcome {
    const identifier = r.serial || r.softSerial;
    const fleetGroup = this.fleetSerials.get(r.serial) ?? (r.softSerial ? this.fleetSerials.get(r.softSerial) : undefined);
    if (this.requirePreRegistration && !fleetGroup) {
      return { status: 403, reason: `serial "${r.serial}"${r.softSerial ? ` / soft serial "${r.softSerial}"` : ''} is not pre-registered` };
    }
    const hashKey = certHashKey(createHash('sha256').update(r.deviceCertDer).digest());
    const osKey = `${r.onboardFingerprint}\n${identifier}`;
    const existing = this.byOnboardSerial.get(osKey);
    if (existing) {
      return existing.certHashKey === hashKey
        ? { status: 200, device: existing }
        : { status: 409, reason: `onboarding certificate + serial "${identifier}" already registered with a different device certificate` };
    }
    const sameCert = this.byCertHash.get(hashKey);
    if (sameCert) {
      if (sameCert.onboardFingerprint === undefined && sameCert.serial === identifier) {
        // Pre-registered with this certificate: registering it is a repeat of a valid registration.
        sameCert.onboardFingerprint = r.onboardFingerprint;
        this.byOnboardSerial.set(osKey, sameCert);
        this.listener?.deviceChanged(sameCert);
        return { status: 200, device: sameCert };
      }
      return { status: 409, reason: `device certificate already registered for device ${sameCert.uuid} (serial ${sameCert.serial})` };
    }
    const preByCert = this.bySerial.get(identifier);
    if (preByCert && preByCert.preRegistered && preByCert.onboardFingerprint === undefined) {
      return { status: 409, reason: `serial "${identifier}" is pre-registered with a different device certificate` };
    }
    const dev = new DeviceRecord(
      randomUUID(), identifier, r.softSerial, hashKey, r.devicePublicKey, fleetGroup ?? this.groups[0]!, now, false,
    );
    dev.onboardFingerprint = r.onboardFingerprint;
    this.add(dev);
    this.byOnboardSerial.set(osKey, dev);
    this.listener?.deviceChanged(dev);
    return { status: 201, device: dev };
  }

  private add(dev: DeviceRecord): void {
    this.byCertHash.set(dev.certHashKey, dev);
    this.byUuid.set(dev.uuid, dev);
    this.bySerial.set(dev.serial, dev);
  }

  /** The GroupSpec list as currently served (for admin output). */
  groupSpecs(): GroupSpec[] {
    return this.groups.map((g) => g.spec);
  }
}
