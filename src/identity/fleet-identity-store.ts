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
//   devices/<index>.json  one StoredDeviceIdentity per device (0600)

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDeviceIdentity, identityFromStored, type DeviceIdentityMaterial } from './device-identity.js';
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
}

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

  private constructor(
    readonly seed: string | number,
    readonly dir: string | undefined,
    readonly fleetCa: FleetCa,
    private readonly now: () => number,
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
    return new FleetIdentityStore(opts.seed, dir, ca, now);
  }

  get fleetCaCertPem(): string {
    return this.fleetCa.certPem;
  }

  /** The identity of device `index`: from memory, else from the state directory, else newly made. */
  device(index: number): DeviceIdentityMaterial {
    const cached = this.cache.get(index);
    if (cached) return cached;
    const identity = this.loadOrCreate(index);
    this.cache.set(index, identity);
    return identity;
  }

  devices(start: number, count: number): DeviceIdentityMaterial[] {
    const out: DeviceIdentityMaterial[] = [];
    for (let i = start; i < start + count; i++) out.push(this.device(i));
    return out;
  }

  /** Like devices(), but gives the event loop a turn every `batch` devices (progress views stay live). */
  async devicesAsync(
    start: number,
    count: number,
    onProgress?: (done: number, total: number) => void,
    batch = 64,
  ): Promise<DeviceIdentityMaterial[]> {
    const out: DeviceIdentityMaterial[] = [];
    for (let i = 0; i < count; i++) {
      out.push(this.device(start + i));
      if ((i + 1) % batch === 0) {
        onProgress?.(i + 1, count);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    onProgress?.(count, count);
    return out;
  }

  /** Forgets identities held in memory (they stay on disk). */
  release(): void {
    this.cache.clear();
  }

  private loadOrCreate(index: number): DeviceIdentityMaterial {
    if (!Number.isInteger(index) || index < 0) throw new RangeError(`device index must be a non-negative integer, got ${index}`);
    if (this.dir === undefined) {
      this.stats.created++;
      return createDeviceIdentity(this.fleetCa, this.seed, index, this.now()).identity;
    }
    const path = join(this.dir, 'devices', `${index}.json`);
    const existing = readIfExists(path);
    if (existing !== undefined) {
      this.stats.loaded++;
      return this.checked(identityFromStored(parseJson(existing, path), path), index, path);
    }
    const made = createDeviceIdentity(this.fleetCa, this.seed, index, this.now());
    if (createFileOnce(path, JSON.stringify(made.stored) + '\n', PRIVATE_FILE_MODE)) {
      this.stats.created++;
      return made.identity;
    }
    // Another process wrote this device first: use its identity so both agree.
    this.stats.loaded++;
    return this.checked(identityFromStored(parseJson(readFileSync(path, 'utf8'), path), path), index, path);
  }

  private checked(identity: DeviceIdentityMaterial, index: number, path: string): DeviceIdentityMaterial {
    if (identity.index !== index) throw new Error(`${path}: holds device ${identity.index}, expected ${index}`);
    return identity;
  }
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function parseJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${path}: not valid JSON: ${(e as Error).message}`);
  }
}
