// TPM identity material for the devices of a shard that have a TPM: the RSA-2048 endorsement key
// (src/tpm/ek-store.ts) and the EK certificate the device issues for it with its device key
// (src/identity/ek-certificate.ts). Both are kept in the fleet state directory keyed by seed and
// device index, so a second run of a scenario starts at once and every run posts byte-identical
// certificates (a controller refuses to replace a certificate that is not is_mutable).
//
// Made before the run, in the shard's prepare step: RSA key generation costs about 100 ms of CPU
// per key, too much to pay on the event loop while devices run. Keys are generated on libuv's
// thread pool (EkStore.ekAsync) a few at a time, so the worker's event loop stays free meanwhile.
//
// Layout: <stateDir>/tpm-<seedTag>/ek/<index>.json (EK, 0600, EkStore's) and <index>.cert.json
// ({version, index, deviceCertSha256, ekName, pem}, 0600): the certificate is remade when the
// device certificate or the EK it was made for changed.

import { createHash, type KeyObject } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEkCertificate } from '../identity/ek-certificate.js';
import { PRIVATE_FILE_MODE } from '../identity/state-files.js';
import { EkStore, type EkMaterial } from '../tpm/ek-store.js';

export interface TpmProvisionRequest {
  index: number;
  deviceCertPem: string;
  deviceKey: KeyObject;
}

export interface DeviceTpmMaterial {
  ekCertPem: string;
  /** TPM2B_PUBLIC of the EK. */
  ekPublicArea: Uint8Array;
}

export interface TpmProvisionStats {
  ekCreated: number;
  ekLoaded: number;
  /** Summed time of the EK generations (thread pool), ms. */
  ekGenerateMs: number;
  certsCreated: number;
  certsLoaded: number;
  /** Wall time of the whole provisioning, ms. */
  wallMs: number;
}

interface StoredEkCert {
  version: 1;
  index: number;
  deviceCertSha256: string;
  ekName: string;
  pem: string;
}

/** EK generations in flight at once (per worker): enough to keep two cores busy. */
export const EK_CONCURRENCY = 2;

export async function provisionTpms(opts: {
  stateDir?: string;
  seed: string | number;
  devices: readonly TpmProvisionRequest[];
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
}): Promise<{ tpms: DeviceTpmMaterial[]; stats: TpmProvisionStats }> {
  const t0 = performance.now();
  const store = EkStore.open({ ...(opts.stateDir !== undefined ? { stateDir: opts.stateDir } : {}), seed: opts.seed });
  const certStats = { created: 0, loaded: 0 };
  const out: DeviceTpmMaterial[] = new Array(opts.devices.length);
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (next < opts.devices.length) {
      const at = next++;
      const d = opts.devices[at]!;
      const ek = await store.ekAsync(d.index);
      out[at] = { ekCertPem: ekCertificate(store.dir, d, ek, certStats), ekPublicArea: ek.tpm2bPublic };
      done++;
      if (done % 16 === 0) opts.onProgress?.(done, opts.devices.length);
    }
  };
  const n = Math.max(1, Math.min(opts.concurrency ?? EK_CONCURRENCY, opts.devices.length));
  await Promise.all(Array.from({ length: n }, worker));
  opts.onProgress?.(done, opts.devices.length);
  store.release();
  return {
    tpms: out,
    stats: {
      ekCreated: store.stats.created,
      ekLoaded: store.stats.loaded,
      ekGenerateMs: Math.round(store.stats.generateMs),
      certsCreated: certStats.created,
      certsLoaded: certStats.loaded,
      wallMs: Math.round(performance.now() - t0),
    },
  };
}

/** The stored EK certificate when it still fits the device and EK, else a new one (stored). */
function ekCertificate(dir: string | undefined, d: TpmProvisionRequest, ek: EkMaterial, stats: { created: number; loaded: number }): string {
  const deviceCertSha256 = createHash('sha256').update(d.deviceCertPem).digest('hex');
  const ekName = Buffer.from(ek.name).toString('hex');
  const path = dir === undefined ? undefined : join(dir, `${d.index}.cert.json`);
  if (path) {
    const stored = readStored(path);
    if (stored && stored.index === d.index && stored.deviceCertSha256 === deviceCertSha256 && stored.ekName === ekName) {
      stats.loaded++;
      return stored.pem;
    }
  }
  const pem = createEkCertificate(ek.publicKey(), { privateKey: d.deviceKey, certPem: d.deviceCertPem }).pem;
  stats.created++;
  if (path) {
    const record: StoredEkCert = { version: 1, index: d.index, deviceCertSha256, ekName, pem };
    // Write then rename: a reader never sees half a file, a concurrent writer just wins.
    const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    writeFileSync(tmp, JSON.stringify(record) + '\n', { mode: PRIVATE_FILE_MODE });
    renameSync(tmp, path);
  }
  return pem;
}

function readStored(path: string): StoredEkCert | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    const s = JSON.parse(text) as Partial<StoredEkCert>;
    if (s.version === 1 && typeof s.pem === 'string' && typeof s.deviceCertSha256 === 'string' && typeof s.ekName === 'string') return s as StoredEkCert;
  } catch {
    // unreadable: made again below
  }
  return undefined;
}
