// Where a worker keeps what its devices keep on disk (device/lifecycle/device-disk-state.ts): an
// LMDB database (the `lmdb` package) in <stateDir>/fleet-<seedTag>/device-state, shared by the
// workers of a run (LMDB takes writers from several threads and processes), one record per device
// keyed by the controller's root CA and the fleet index: the same state directory run against
// another controller starts fresh.
//
// Writes are made when the state changes (UUID learnt, boot, reboot counters, app states, LPS
// commands). They wait up to WRITE_DELAY_MS (or until WRITE_BATCH devices wait) and go to lmdb in
// one event-loop turn, so one transaction: a SIGKILL loses at most that last tenth of a second. A
// transaction per put (lmdb's own batching is per turn, and an onboarding storm's UUIDs arrive one
// or two a turn) cost about 230 µs of CPU per put against about 40 µs batched here
// (bench/device-state-writes.ts). lmdb's `commitDelay` with `eventTurnBatching: false` batched
// too in a small bench but cost the workers of an onboarding storm more CPU, not less.
// A run that ends normally forgets its devices'
// records (the next run is a new session and onboards as before); one that is cut off leaves them
// and the next run with the same seed and state directory resumes from them.

import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { diskStateProblem, type DeviceDiskState } from '../device/lifecycle/device-disk-state.js';
import { seedTag } from '../identity/fleet-ca.js';
import { identitySeed } from '../identity/fleet-id.js';

export const DEVICE_STATE_DIR = 'device-state';
/** How long a put waits for others to share its transaction, ms. */
export const WRITE_DELAY_MS = 100;
/** Devices waiting that start the write before WRITE_DELAY_MS is up (bounds a transaction). */
export const WRITE_BATCH = 1000;

export class DeviceStateStore {
  /** Records found unreadable and skipped at get() (the device then onboards as new). */
  skipped = 0;
  private closed = false;
  /** The latest state of each device put since the last write, by fleet index. */
  private readonly pending = new Map<number, DeviceDiskState>();
  private writeTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly db: RootDatabase<DeviceDiskState, string>,
    private readonly prefix: string,
    readonly path: string,
  ) {}

  static open(o: { stateDir: string; seed: string | number; fleetId?: string; rootCaPem: string }): DeviceStateStore {
    const path = join(o.stateDir, `fleet-${seedTag(identitySeed(o.seed, o.fleetId))}`, DEVICE_STATE_DIR);
    mkdirSync(path, { recursive: true, mode: 0o700 });
    let db: RootDatabase<DeviceDiskState, string>;
    try {
      db = open<DeviceDiskState, string>({ path, compression: false });
    } catch (e) {
      throw new Error(`device state ${path}: cannot open (${(e as Error).message})`);
    }
    const controller = createHash('sha256').update(o.rootCaPem).digest('hex').slice(0, 16);
    return new DeviceStateStore(db, `${controller}/`, path);
  }

  /** The saved state of fleet device `index`, or undefined (never onboarded, forgotten, unreadable). */
  get(index: number): DeviceDiskState | undefined {
    const value = this.pending.get(index) ?? this.db.get(this.prefix + index);
    if (value === undefined) return undefined;
    if (diskStateProblem(value) !== undefined) {
      this.skipped++;
      return undefined;
    }
    return value;
  }

  put(index: number, state: DeviceDiskState): void {
    if (this.closed) return;
    this.pending.set(index, state);
    if (this.pending.size >= WRITE_BATCH) this.writePending();
    else if (this.writeTimer === undefined) {
      this.writeTimer = setTimeout(() => this.writePending(), WRITE_DELAY_MS);
      this.writeTimer.unref(); // close() writes what is left
    }
  }

  /** Hands the waiting states to lmdb, in this one turn: one transaction. */
  private writePending(): void {
    if (this.writeTimer !== undefined) clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
    for (const [index, state] of this.pending) void this.db.put(this.prefix + index, state);
    this.pending.clear();
  }

  /** The run ended normally: its devices' records go (in one transaction). */
  async forget(indices: Iterable<number>): Promise<void> {
    if (this.closed) return;
    const list = [...indices];
    for (const i of list) this.pending.delete(i);
    this.writePending();
    await this.db.transaction(() => {
      for (const i of list) this.db.removeSync(this.prefix + i);
    });
  }

  /** Waits for every write to be on disk and closes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.writePending();
    this.closed = true;
    await this.db.flushed;
    await this.db.close();
  }
}
