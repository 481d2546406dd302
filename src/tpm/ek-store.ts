// Endorsement keys (RSA-2048, TCG template L-1) kept in the fleet state directory, keyed by seed and
// device index, because RSA key generation is slow (≈100 ms on an idle core, several times that on a
// busy one) while reading a stored key back costs well under a millisecond.
//
// The quote path never needs the EK (EVE's quote key is a primary in the owner hierarchy), so a
// SoftTpm holds no EK: a device asks for its EK only when it publishes its EK certificate, and a fleet
// can prepare EKs ahead on libuv's thread pool with ekAsync().
//
// Layout: <stateDir>/tpm-<seedTag>/ek/<index>.json (0600: it holds the private key as JWK). The
// directory is separate from the identity store's so the two never race on creating it.

import { createHash, createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateRsa, generateRsaAsync } from '../identity/keys.js';
import { PRIVATE_FILE_MODE, createFileOnce, ensurePrivateDir } from '../identity/state-files.js';
import { ekPublicFromModulus } from './key-public-areas.js';
import { marshalTpm2bPublic, marshalTpmtPublic } from './tpm-public.js';
import { objectName } from './tpm-name.js';


export interface EkMaterial {
  index: number;
  /** RSA-2048 modulus, big-endian, 256 bytes. */
  modulus: Uint8Array;
  /** TPM2B_PUBLIC in the TCG L-1 template (316 bytes): EVE's EK cert meta-data. */
  tpm2bPublic: Uint8Array;
  /** Name = 000b || SHA-256(TPMT_PUBLIC). */
  name: Uint8Array;
  /** The public key, for the EK certificate (made on first call). */
  publicKey(): KeyObject;
  /** The private key (parsed on first call; nothing in the simulator signs or decrypts with it). */
  privateKey(): KeyObject;
}

interface StoredEk {
  version: 1;
  index: number;
  key: JsonWebKey;
}

export interface EkStoreOptions {
  /** Parent directory of fleet state; omit to keep EKs in memory only. */
  stateDir?: string;
  seed: string | number;
}

function ekTag(seed: string | number): string {
  return createHash('sha256').update(`evesim-tpm|${String(seed)}`).digest('hex').slice(0, 16);
}

/**
 * EK material from the public JWK fields; `loadPrivate` fetches the private key only when asked, so a
 * fleet's memory holds moduli, not private keys.
 */
function material(index: number, jwk: JsonWebKey, where: string, loadPrivate: () => KeyObject): EkMaterial {
  if (jwk.kty !== 'RSA' || typeof jwk.n !== 'string' || jwk.e !== 'AQAB') {
    throw new Error(`${where}: key is not an RSA JWK with exponent 65537`);
  }
  const n = Buffer.from(jwk.n, 'base64url');
  const modulus = new Uint8Array(n[0] === 0 ? n.subarray(1) : n);
  if (modulus.length !== 256) throw new Error(`${where}: EK modulus has ${modulus.length} bytes, RSA-2048 needs 256`);
  const pub = ekPublicFromModulus(modulus);
  const publicJwk: JsonWebKey = { kty: 'RSA', n: jwk.n, e: jwk.e };
  let publicKey: KeyObject | undefined;
  return {
    index,
    modulus,
    tpm2bPublic: marshalTpm2bPublic(pub),
    name: objectName(marshalTpmtPublic(pub)),
    publicKey: () => (publicKey ??= createPublicKey({ key: publicJwk, format: 'jwk' })),
    privateKey: loadPrivate,
  };
}

function readStored(path: string, index: number): StoredEk {
  const text = readFileSync(path, 'utf8');
  let s: Partial<StoredEk>;
  try {
    s = JSON.parse(text) as Partial<StoredEk>;
  } catch (e) {
    throw new Error(`${path}: not valid JSON: ${(e as Error).message}`);
  }
  if (s.version !== 1 || s.index !== index || !s.key || typeof s.key.d !== 'string') {
    throw new Error(`${path}: not a version-1 EK record (with a private key) for device ${index}`);
  }
  return s as StoredEk;
}

function privateFromFile(path: string, index: number): KeyObject {
  const stored = readStored(path, index);
  try {
    return createPrivateKey({ key: stored.key, format: 'jwk' });
  } catch (e) {
    throw new Error(`${path}: unusable private JWK: ${(e as Error).message}`);
  }
}

export class EkStore {
  /** created: generated in this process; loaded: read back; generateMs: time spent generating. */
  readonly stats = { created: 0, loaded: 0, generateMs: 0 };
  private readonly memory = new Map<number, EkMaterial>();
  private readonly pending = new Map<number, Promise<EkMaterial>>();

  private constructor(readonly dir: string | undefined) {}

  static open(opts: EkStoreOptions): EkStore {
    if (opts.stateDir === undefined) return new EkStore(undefined);
    const dir = join(opts.stateDir, `tpm-${ekTag(opts.seed)}`, 'ek');
    ensurePrivateDir(join(opts.stateDir, `tpm-${ekTag(opts.seed)}`));
    ensurePrivateDir(dir);
    return new EkStore(dir);
  }

  private pathOf(index: number): string {
    if (!Number.isInteger(index) || index < 0) throw new RangeError(`EK store: device index must be a non-negative integer, got ${index}`);
    return join(this.dir!, `${index}.json`);
  }

  private load(index: number): EkMaterial | undefined {
    if (this.dir === undefined) return undefined;
    const path = this.pathOf(index);
    let stored: StoredEk;
    try {
      stored = readStored(path, index);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    this.stats.loaded++;
    return material(index, stored.key, path, () => privateFromFile(path, index));
  }

  /** Stores a freshly generated key; if another process stored one first, uses that one. */
  private keep(index: number, key: KeyObject): EkMaterial {
    const jwk = key.export({ format: 'jwk' });
    if (this.dir !== undefined) {
      const path = this.pathOf(index);
      const stored: StoredEk = { version: 1, index, key: jwk };
      if (!createFileOnce(path, JSON.stringify(stored) + '\n', PRIVATE_FILE_MODE)) return this.load(index)!;
      this.stats.created++;
      return material(index, jwk, path, () => privateFromFile(path, index));
    }
    this.stats.created++;
    return material(index, jwk, `EK of device ${index}`, () => key);
  }

  private remember(index: number, ek: EkMaterial): EkMaterial {
    this.memory.set(index, ek);
    return ek;
  }

  /** The EK of device `index`: memory, else the state directory, else generated now (blocks). */
  ek(index: number): EkMaterial {
    const known = this.memory.get(index) ?? this.load(index);
    if (known) return this.remember(index, known);
    const t0 = performance.now();
    const { privateKey } = generateRsa(2048);
    this.stats.generateMs += performance.now() - t0;
    return this.remember(index, this.keep(index, privateKey));
  }

  /** Like ek(), but generates on libuv's thread pool so the event loop stays free. */
  ekAsync(index: number): Promise<EkMaterial> {
    const known = this.memory.get(index) ?? this.load(index);
    if (known) return Promise.resolve(this.remember(index, known));
    let p = this.pending.get(index);
    if (!p) {
      const t0 = performance.now();
      p = generateRsaAsync(2048)
        .then(({ privateKey }) => {
          this.stats.generateMs += performance.now() - t0;
          return this.remember(index, this.keep(index, privateKey));
        })
        .finally(() => this.pending.delete(index));
      this.pending.set(index, p);
    }
    return p;
  }

  /** Forgets EKs held in memory (they stay on disk). */
  release(): void {
    this.memory.clear();
  }
}
