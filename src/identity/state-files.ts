// Files in a state directory that holds private keys: directories 0700, key files 0600, and every
// file appears whole or not at all (written aside, then linked or renamed into place), so two
// processes racing on the same state never read half a file and never overwrite each other.

import { chmodSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';

export const PRIVATE_FILE_MODE = 0o600;
export const PUBLIC_FILE_MODE = 0o644;
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Makes `dir` (and missing parents) mode 0700. A directory that already exists is left as it is: the
 * parent of a state directory may be the user's home or /tmp, whose modes are not ours to change.
 */
export function ensurePrivateDir(dir: string): void {
  const firstMade = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (firstMade !== undefined) chmodSync(dir, PRIVATE_DIR_MODE); // exact, whatever the umask
}

function tempName(path: string): string {
  return join(dirname(path), `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
}

/**
 * Creates `path` with `data` unless it already exists. Returns true if this call created it,
 * false if another writer got there first (the existing file is left untouched).
 */
export function createFileOnce(path: string, data: string | Uint8Array, mode: number): boolean {
  const tmp = tempName(path);
  // open(2) applies the umask, which can only remove bits from 0600: no chmod needed.
  writeFileSync(tmp, data, { mode, flag: 'wx' });
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    unlinkSync(tmp);
  }
}

/** Writes files into a fresh directory, then renames it to `dir` if `dir` does not exist yet. */
export function createDirOnce(dir: string, fill: (tmpDir: string) => void): boolean {
  ensurePrivateDir(dirname(dir));
  const tmp = tempName(dir);
  ensurePrivateDir(tmp);
  try {
    fill(tmp);
    renameSync(tmp, dir);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return false;
    throw e;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export function writeNewFile(path: string, data: string | Uint8Array, mode: number): void {
  writeFileSync(path, data, { mode, flag: 'wx' });
  chmodSync(path, mode);
}

export function readJsonFile(path: string): unknown {
  const text = readFileSync(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${path}: not valid JSON: ${(e as Error).message}`);
  }
}
