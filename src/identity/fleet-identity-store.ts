// The fleet state directory: the fleet CA and every device identity made for one seed, kept so a
// second run with the same seed reuses them instead of paying for key generation again.
//
// With a fleet id (fleet-id.ts) the seed is the seed and the id together, so the tag (and the
// directory) differs per fleet id: identities cached under one id (or by an earlier version, under
// the seed alone) are never reused under another.
//
// Layout: <stateDir>/fleet-<seedTag>/ (0700)
//   fleet.json            seed and creation time (no secrets)
//   fleet-ca.json         CA certificate, subject, SKI and private key as JWK (0600)
//   fleet-ca.cert.pem     CA certificate for operators (0644)
//   devices/batch-<first>-<stride>-<count>-<random>.ids
//                         device identities made together (identity-batch-file.ts; 0600), up to
//                         BATCH_SIZE per file, their indices first + k·stride: a worker reads only
//                         the files that can hold its own shard's devices
//   devices/<index>.json  one StoredDeviceIdentity per device, the layout of evesim before batch
//                         files (0600); still read, never written
//
// Two processes creating the same device at the same moment (two runs of one seed on one state
// directory) each write it; later runs take the record of the file whose name sorts first.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createDeviceIdentity, identityFromCompact, identityFromStored, type DeviceIdentityMaterial } from './device-identity.js';
import { decodeIdentityBatch, encodeIdentityBatch, type CertificatesRegion, type CompactDeviceIdentity } from './identity-batch-file.js';
import { identitySeed } from './fleet-id.js';
import { createFleetCa, fleetCaFromParts, seedTag, type FleetCa } from './fleet-ca.js';
import { privateKeyFromJwk, privateKeyToJwk } from './keys.js';
import {
  PRIVATE_FILE_MODE,
  PUBLIC_FILE_MODE,
  createDirOnce,
  createFileOnce,
  ensurePrivateDir,
  readJsonFile,
  writeNewFile,
} from './state-files.js';

export interface FleetStoreOptions {
  /** Parent directory of fleet state; omit to keep everything in memory (tests, one-off runs). */
  stateDir?: string;
  seed: string | number;
  /** Enters the serials and the directory (fleet-id.ts); absent: the seed alone. */
  fleetId?: string;
  /** Wall clock for certificate validity (epoch ms). */
  now?: () => number;
  /**
   * The devices this process will ask for (a worker's shard): batch files that cannot hold any of
   * them are never read, and asking for another device is an error. Absent: any device; a batch
   * file is read when one of the devices its name states is first asked for.
   */
  expect?: IndexProgression;
}

/** Device indices first, first + stride, ... (count of them): a worker's shard. */
export interface IndexProgression {
  first: number;
  stride: number;
  count: number;
}

/** Identities written per batch file (about 2 KB each). */
export const BATCH_SIZE = 4096;

const BATCH_FILE = /^batch-(\d+)-(\d+)-(\d+)-[0-9a-f]+\.ids$/;
const LEGACY_FILE = /^(\d+)\.json$/;

interface StoredFleetCa {
  version: 1;
  certPem: string;
  subject: FleetCa['subject'];
  subjectKeyIdHex: string;
  key: unknown;
}

export class FleetIdentityStore {
  /** created: identities generated in this process; loaded: read back from the state directory. */
  readonly stats = { created: 0, loaded: 0 };
  private readonly cache = new Map<number, DeviceIdentityMaterial>();
  /** What the state directory holds, read on the first device() (undefined: not read yet). */
  private onDisk: OnDisk | undefined;
  /** Identities made but not yet written (written by flush(), at the latest every BATCH_SIZE). */
  private pending: CompactDeviceIdentity[] = [];
  private pendingIdentities: DeviceIdentityMaterial[] = [];
  /** Identities handed out whose certificates are in a batch file: release() lets memory drop them. */
  private inFiles: Array<{ identity: DeviceIdentityMaterial; path: string; region: CertificatesRegion }> = [];

  private constructor(
    readonly seed: string | number,
    readonly dir: string | undefined,
    readonly fleetCa: FleetCa,
    private readonly now: () => number,
    private readonly expect?: IndexProgression,
  ) {}

  /** Opens (or creates) the fleet state for `seed`. Synchronous: run it at startup. */
  static open(options: FleetStoreOptions): FleetIdentityStore {
    const now = options.now ?? Date.now;
    const opts = { stateDir: options.stateDir, seed: identitySeed(options.seed, options.fleetId) };
    if (opts.stateDir === undefined) return new FleetIdentityStore(opts.seed, undefined, createFleetCa(opts.seed, now()), now);
    const dir = join(opts.stateDir, `fleet-${seedTag(opts.seed)}`);
    if (!existsSync(join(dir, 'fleet-ca.json'))) {
      createDirOnce(dir, (tmp) => {
        const ca = createFleetCa(opts.seed, now());
        const stored: StoredFleetCa = {
          version: 1,
          certPem: ca.certPem,
          subject: ca.subject,
          subjectKeyIdHex: Buffer.from(ca.subjectKeyId).toString('hex'),
          key: privateKeyToJwk(ca.key),
        };
        writeNewFile(join(tmp, 'fleet.json'), JSON.stringify({ seed: String(opts.seed), createdAt: new Date(now()).toISOString() }) + '\n', PUBLIC_FILE_MODE);
        writeNewFile(join(tmp, 'fleet-ca.cert.pem'), ca.certPem, PUBLIC_FILE_MODE);
        ensurePrivateDir(join(tmp, 'devices'));
        // Written last: its presence marks a complete directory.
        writeNewFile(join(tmp, 'fleet-ca.json'), JSON.stringify(stored) + '\n', PRIVATE_FILE_MODE);
      });
    }
    const where = join(dir, 'fleet-ca.json');
    const meta = readJsonFile(join(dir, 'fleet.json')) as { seed?: string };
    if (meta.seed !== String(opts.seed)) {
      throw new Error(`${dir}: fleet state belongs to seed ${JSON.stringify(meta.seed)}, not ${JSON.stringify(String(opts.seed))}`);
    }
    const s = readJsonFile(where) as Partial<StoredFleetCa>;
    if (s.version !== 1 || typeof s.certPem !== 'string' || !s.subject || typeof s.subjectKeyIdHex !== 'string') {
      throw new Error(`${where}: not a version-1 fleet CA record`);
    }
    const ca = fleetCaFromParts(s.certPem, privateKeyFromJwk(s.key, `${where} key`), s.subject, s.subjectKeyIdHex);
    return new FleetIdentityStore(opts.seed, dir, ca, now, options.expect);
  }

  get fleetCaCertPem(): string {
    return this.fleetCa.certPem;
  }

  /**
   * The identity of device `index`: from memory, else from the state directory, else newly made
   * and written at once (a batch file of one; devices() and shardAsync() write in batches).
   */
  device(index: number): DeviceIdentityMaterial {
    const identity = this.deviceUnflushed(index);
    this.flush();
    return identity;
  }

  devices(start: number, count: number): DeviceIdentityMaterial[] {
    const out: DeviceIdentityMaterial[] = [];
    for (let i = start; i < start + count; i++) {
      out.push(this.deviceUnflushed(i));
      if (this.pending.length >= BATCH_SIZE) this.flush();
    }
    this.flush();
    return out;
  }

  /** Like devices(), but gives the event loop a turn every `batch` devices (progress views stay live). */
  devicesAsync(
    start: number,
    count: number,
    onProgress?: (done: number, total: number) => void,
    batch = 64,
  ): Promise<DeviceIdentityMaterial[]> {
    return this.shardAsync({ first: start, stride: 1, count }, onProgress, batch);
  }

  /**
   * The identities of a shard (indices first + k·stride), in shard order, giving the event loop a
   * turn every `batch` devices; new ones are written BATCH_SIZE to a file, all before it returns.
   */
  async shardAsync(
    shard: IndexProgression,
    onProgress?: (done: number, total: number) => void,
    batch = 64,
  ): Promise<DeviceIdentityMaterial[]> {
    const out: DeviceIdentityMaterial[] = [];
    for (let k = 0; k < shard.count; k++) {
      out.push(this.deviceUnflushed(shard.first + k * shard.stride));
      if (this.pending.length >= BATCH_SIZE) this.flush();
      if ((k + 1) % batch === 0) {
        onProgress?.(k + 1, shard.count);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    this.flush();
    onProgress?.(shard.count, shard.count);
    return out;
  }

  /** Writes the identities made since the last flush into a new batch file (nothing in memory-only stores). */
  flush(): void {
    const records = this.pending;
    if (records.length === 0 || this.dir === undefined) return;
    const identities = this.pendingIdentities;
    this.pending = [];
    this.pendingIdentities = [];
    const first = records[0]!.index;
    const stride = records.length > 1 ? records[1]!.index - first : 1;
    // The name promises first + k·stride; a batch that is no such progression names its lowest
    // index and stride 0 (read by every worker whose shard reaches that far).
    const regular = stride > 0 && records.every((r, k) => r.index === first + k * stride);
    const lowest = regular ? first : records.reduce((m, r) => Math.min(m, r.index), first);
    const name = `batch-${lowest}-${regular ? stride : 0}-${records.length}-${randomBytes(6).toString('hex')}.ids`;
    const path = join(this.dir, 'devices', name);
    const regions: CertificatesRegion[] = [];
    createFileOnce(path, encodeIdentityBatch(records, regions), PRIVATE_FILE_MODE);
    regions.forEach((region, k) => this.inFiles.push({ identity: identities[k]!, path, region }));
  }

  /**
   * Writes what is pending and forgets identities held in memory (they stay on disk). The
   * identities handed out keep their certificates in their batch files from now on, not in
   * memory (about 2 KiB a device): the state directory must stay while they are used.
   */
  release(): void {
    this.flush();
    for (const { identity, path, region } of this.inFiles) identity.keepCertificatesOnDisk(path, region);
    this.inFiles = [];
    this.cache.clear();
    this.onDisk = undefined;
  }

  private deviceUnflushed(index: number): DeviceIdentityMaterial {
    const cached = this.cache.get(index);
    if (cached) return cached;
    const identity = this.loadOrCreate(index);
    this.cache.set(index, identity);
    return identity;
  }

  private loadOrCreate(index: number): DeviceIdentityMaterial {
    if (!Number.isInteger(index) || index < 0) throw new RangeError(`device index must be a non-negative integer, got ${index}`);
    // Records of other shards are skipped when read: making such a device anew would fork its identity.
    if (this.expect && !holds(this.expect, index)) throw new RangeError(`device ${index} is not in the shard this fleet store was opened for`);
    if (this.dir === undefined) {
      this.stats.created++;
      return createDeviceIdentity(this.fleetCa, this.seed, index, this.now()).identity;
    }
    const disk = (this.onDisk ??= this.readDevicesDir(this.dir));
    if (disk.legacy.has(index)) {
      const path = join(this.dir, 'devices', `${index}.json`);
      this.stats.loaded++;
      return this.checked(identityFromStored(parseJson(readFileSync(path, 'utf8'), path), path), index, path);
    }
    for (let i = 0; i < disk.unread.length; i++) {
      const f = disk.unread[i]!;
      if (!holds(f, index)) continue;
      disk.unread.splice(i--, 1);
      this.readBatchFile(disk, f.path);
    }
    const found = disk.records.get(index);
    if (found) {
      disk.records.delete(index); // the identity copies what it keeps: the file's bytes can go
      this.stats.loaded++;
      const identity = this.checked(identityFromCompact(found.record, found.file), index, found.file);
      if (found.record.certsAt) this.inFiles.push({ identity, path: found.file, region: found.record.certsAt });
      return identity;
    }
    const made = createDeviceIdentity(this.fleetCa, this.seed, index, this.now());
    this.pending.push(made.compact);
    this.pendingIdentities.push(made.identity);
    this.stats.created++;
    return made.identity;
  }

  /**
   * What the devices directory holds: the earlier layout's files, and the batch files that may
   * hold the expected shard's devices. A batch file whose name states its indices is read when one
   * of them is first asked for, so a worker holds one file's bytes at a time, not its whole shard's.
   */
  private readDevicesDir(dir: string): OnDisk {
    const devicesDir = join(dir, 'devices');
    const disk: OnDisk = { dir, records: new Map(), legacy: new Set(), unread: [] };
    for (const name of readdirSync(devicesDir).sort()) {
      const old = LEGACY_FILE.exec(name);
      if (old) {
        disk.legacy.add(Number(old[1]));
        continue;
      }
      const m = BATCH_FILE.exec(name);
      if (!m) continue; // temporary files of a writer, files of later versions' own names
      const file = { path: join(devicesDir, name), first: Number(m[1]), stride: Number(m[2]), count: Number(m[3]) };
      if (this.expect && !mayOverlap(file, this.expect)) continue;
      if (file.stride === 0) this.readBatchFile(disk, file.path); // indices not in its name
      else disk.unread.push(file);
    }
    return disk;
  }

  private readBatchFile(disk: OnDisk, path: string): void {
    let batch: CompactDeviceIdentity[];
    try {
      batch = decodeIdentityBatch(readFileSync(path), path);
    } catch (e) {
      throw new Error(`${(e as Error).message}; remove the state directory ${disk.dir} (or that file) to make new identities`);
    }
    for (const record of batch) {
      if (this.expect && !holds(this.expect, record.index)) continue;
      // A device in two files (two processes made it at once): the file whose name sorts first wins.
      const had = disk.records.get(record.index);
      if (!had || had.file > path) disk.records.set(record.index, { record, file: path });
    }
  }

  private checked(identity: DeviceIdentityMaterial, index: number, path: string): DeviceIdentityMaterial {
    if (identity.index !== index) throw new Error(`${path}: holds device ${identity.index}, expected ${index}`);
    return identity;
  }
}

/** What a store knows of its devices directory (read on the first device()). */
interface OnDisk {
  dir: string;
  /** Records read and not yet taken, by device index. */
  records: Map<number, { record: CompactDeviceIdentity; file: string }>;
  /** Devices with a file of the earlier one-JSON-file-per-device layout. */
  legacy: Set<number>;
  /** Batch files not read yet, with the indices their names state (stride > 0). */
  unread: (IndexProgression & { path: string })[];
}

/** Whether index is one of first + k·stride (k < count). */
function holds(p: IndexProgression, index: number): boolean {
  const offset = index - p.first;
  if (offset < 0) return false;
  if (p.stride === 0) return offset === 0 && p.count > 0;
  return offset % p.stride === 0 && offset / p.stride < p.count;
}

/**
 * Whether a batch file's indices (stride 0: any in its range) can meet the wanted shard's. Exact
 * for the usual case, a worker reading what the same worker of an earlier run wrote; otherwise it
 * errs towards reading the file.
 */
export function mayOverlap(file: IndexProgression, want: IndexProgression): boolean {
  if (file.count === 0 || want.count === 0) return false;
  const fileLast = file.first + (file.count - 1) * file.stride;
  const wantLast = want.first + (want.count - 1) * want.stride;
  const lo = Math.max(file.first, want.first);
  const hi = Math.min(file.stride === 0 ? Infinity : fileLast, wantLast);
  if (lo > hi) return false;
  if (file.stride > 0 && file.stride === want.stride) return (file.first - want.first) % file.stride === 0;
  return true;
}

function parseJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${path}: not valid JSON: ${(e as Error).message}`);
  }
}
