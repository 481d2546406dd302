// The controller's registry on disk: an LMDB database (the `lmdb` package) in
// <stateDir>/registry, so a controller killed and started again on the same state directory still
// knows every device, its UUID, attestation state, config overlays and counters.
//
// Write cost: registry, attestation and overlay changes are lmdb's asynchronous puts, which lmdb
// batches into one transaction per event-loop turn (a register storm is a few commits, not one per
// device). Counters change with every request, so they are only marked dirty and flushed every
// COUNTER_FLUSH_MS, in slices of COUNTER_SLICE devices with the event loop free in between (a put
// costs some microseconds: 10^5 devices every 10 s is about 5 % of the controller thread). On a
// crash (SIGKILL, power loss) what can be lost: the puts of the last event-loop turns, not yet
// committed (the 201 of a registration goes out before its commit: a device registered in those
// milliseconds registers again if it had no UUID yet, and stays refused if it had, as EVE would),
// and the counters since the last flush (up to 10 s of them). What was committed is kept. An
// attestation nonce is never written (persisted-device.ts), so NONCE requests cost no write.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import type { ConfigOverlay } from './config-overlay.js';
import type { DeviceRecord } from './device-record.js';
import { foldFleetChanges, type FleetChange } from './fleet-history.js';
import type { GroupState } from './group-state.js';
import {
  saveActivity,
  saveAttest,
  saveDevice,
  saveOverlay,
  type SavedActivity,
  type SavedAttest,
  type SavedDevice,
  type SavedOverlay,
} from './persisted-device.js';

/** How often dirty per-device counters are written, and how many per event-loop turn. */
export const COUNTER_FLUSH_MS = 10_000;
export const COUNTER_SLICE = 2_000;
export const REGISTRY_DIR = 'registry';

export type { FleetChange } from './fleet-history.js';

/** Everything a start needs to rebuild the registry. */
export interface LoadedRegistry {
  devices: SavedDevice[];
  attest: Map<string, SavedAttest>;
  activity: Map<string, SavedActivity>;
  fleet: FleetChange[];
  groupOverlays: Map<string, SavedOverlay>;
  deviceOverlays: Map<string, SavedOverlay>;
}

// Key prefixes; '/' is followed by '0' in byte order, which ends each range.
const DEVICE = 'd/';
const ATTEST = 'a/';
const ACTIVITY = 'c/';
const GROUP_OVERLAY = 'og/';
const DEVICE_OVERLAY = 'od/';
const FLEET = 'fleet';

export class RegistryStore {
  private readonly dirty = new Set<DeviceRecord>();
  /** Devices of a flush still to be written (a slice per event-loop turn). */
  private flushing: DeviceRecord[] = [];
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  /** The fleet changes last written, until their put is committed (a turn or more later): a change
   *  that read the history back from the database before then would drop the one before it. */
  private fleetHistory: FleetChange[] | undefined;

  private constructor(
    private readonly db: RootDatabase,
    readonly path: string,
  ) {
    this.timer = setInterval(() => this.flushCounters(), COUNTER_FLUSH_MS);
    this.timer.unref();
  }

  /** Opens (creating it the first time) the registry of the controller whose state directory is `stateDir`. */
  static open(stateDir: string): RegistryStore {
    const path = join(stateDir, REGISTRY_DIR);
    mkdirSync(path, { recursive: true, mode: 0o700 });
    let db: RootDatabase;
    try {
      db = open({ path, compression: false });
    } catch (e) {
      throw new Error(`controller registry ${path}: cannot open (${(e as Error).message})`);
    }
    return new RegistryStore(db, path);
  }

  load(): LoadedRegistry {
    const range = <V>(prefix: string): [string, V][] =>
      [...this.db.getRange({ start: prefix, end: prefix.slice(0, -1) + '0' })].map(({ key, value }) => [String(key).slice(prefix.length), value as V]);
    return {
      devices: range<SavedDevice>(DEVICE).map(([, v]) => v),
      attest: new Map(range<SavedAttest>(ATTEST)),
      activity: new Map(range<SavedActivity>(ACTIVITY)),
      fleet: [...this.savedFleet()],
      groupOverlays: new Map(range<SavedOverlay>(GROUP_OVERLAY)),
      deviceOverlays: new Map(range<SavedOverlay>(DEVICE_OVERLAY)),
    };
  }

  deviceChanged(dev: DeviceRecord): void {
    if (this.closed) return;
    void this.db.put(DEVICE + dev.uuid, saveDevice(dev));
  }

  attestChanged(dev: DeviceRecord): void {
    if (this.closed || !dev.attest) return;
    void this.db.put(ATTEST + dev.uuid, saveAttest(dev.attest));
  }

  /** A request was counted for `dev`: its counters go out with the next flush. */
  touched(dev: DeviceRecord): void {
    this.dirty.add(dev);
  }

  fleetChanged(change: FleetChange, groups: readonly GroupState[]): void {
    if (this.closed) return;
    // Folded into one set: the saved fleet is as large as the fleet, however many runs pushed theirs.
    // A set replaces what was saved, so only a merge reads it back.
    const history = [change.op === 'set' ? change : foldFleetChanges([...this.savedFleet(), change])!];
    this.fleetHistory = history;
    // Once committed the database has it, and the (possibly large) array need not stay in memory.
    void this.db.put(FLEET, history).then(() => {
      if (this.fleetHistory === history) this.fleetHistory = undefined;
    });
    for (const g of groups) this.groupOverlayChanged(g.name, g.overlay);
  }

  private savedFleet(): FleetChange[] {
    return this.fleetHistory ?? (this.db.get(FLEET) as FleetChange[] | undefined) ?? [];
  }

  groupOverlayChanged(group: string, overlay: ConfigOverlay): void {
    if (!this.closed) void this.db.put(GROUP_OVERLAY + group, saveOverlay(overlay));
  }

  deviceOverlayChanged(uuid: string, overlay: ConfigOverlay): void {
    if (!this.closed) void this.db.put(DEVICE_OVERLAY + uuid, saveOverlay(overlay));
  }

  /** Starts writing the counters of the devices seen since the last flush, a slice per event-loop turn. */
  flushCounters(): void {
    if (this.closed || this.dirty.size === 0 || this.flushing.length > 0) return;
    this.flushing = [...this.dirty];
    this.dirty.clear();
    this.writeSlice();
  }

  private writeSlice(): void {
    if (this.closed) return;
    const slice = this.flushing.splice(0, COUNTER_SLICE);
    for (const dev of slice) void this.db.put(ACTIVITY + dev.uuid, saveActivity(dev));
    if (this.flushing.length > 0) setImmediate(() => this.writeSlice());
  }

  /** Writes every dirty counter now, waits for every write to be on disk and closes the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.timer);
    for (const dev of this.flushing) this.dirty.add(dev);
    this.flushing = [];
    for (const dev of this.dirty) void this.db.put(ACTIVITY + dev.uuid, saveActivity(dev));
    this.dirty.clear();
    this.closed = true;
    await this.db.flushed;
    await this.db.close();
  }
}
