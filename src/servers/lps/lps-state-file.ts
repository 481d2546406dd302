// The LPS state file: command requests must survive a restart of the server (the interface
// document: "the server must persist command requests"). Written atomically — a temporary file in
// the same directory, fsync, rename — so a crash leaves the old or the new state, never half of one.

import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** Writes `text` to `path` atomically (mode 0600: the file holds the server token). */
export function writeFileAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing left to clean
    }
    throw new Error(`LPS state file ${path}: cannot replace it: ${(e as Error).message}`);
  }
}

/** The parsed JSON of a state file, or undefined when there is none yet. Throws naming the file when it is not JSON. */
export function readStateFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`LPS state file ${path}: cannot read it: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`LPS state file ${path}: not valid JSON: ${(e as Error).message}`);
  }
}
