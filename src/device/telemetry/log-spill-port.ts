// Where a device keeps log files it cannot hold in memory while they wait for upload. EVE keeps
// them on disk (newlogd's upload directories); evesim keeps a small memory budget per device and
// hands the rest to the worker's spill store (src/fleet/log-spill-file.ts), read back when the
// file is uploaded. The device sees only this port, so tests may pass any store.

/** Where one spilled file's bytes are kept. */
export interface SpillRef {
  readonly segment: number;
  /** Offset of the file's bytes (after the record header) in the segment. */
  readonly offset: number;
  readonly length: number;
}

export interface LogSpill {
  /** Keeps `bytes` (one log file of fleet device `device`); throws when it cannot (the caller keeps them in memory). */
  put(device: number, bytes: Uint8Array): SpillRef;
  /** The bytes kept at `ref` (the file stays kept until release). */
  read(ref: SpillRef): Promise<Uint8Array>;
  /** The file left the backlog (delivered, dropped, or counted undelivered): its space may be reclaimed. */
  release(ref: SpillRef): void;
}

/** Compressed log bytes a device holds in memory; the rest of its backlog goes to its LogSpill. */
export const LOG_MEMORY_BUDGET_BYTES = 32 * 1024;
