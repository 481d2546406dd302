// The fleet id: a name for one fleet that enters every device's serial and soft serial (and the
// state directory's identity cache), so two fleets made from the same seed never share a serial.
// Every shard of one fleet is given the same id (`--fleet-id`); without one, each state directory
// makes its own once and keeps it in <stateDir>/fleet-id, so generators on two machines never
// collide and a run with the same state directory keeps its serials.

import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PUBLIC_FILE_MODE, createFileOnce } from './state-files.js';

/** Letters, digits, '.', '_' and '-', 1..64 characters, not starting with '.' or '-' (it names a directory). */
const FLEET_ID = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;

export const FLEET_ID_FILE = 'fleet-id';

/** Why `id` cannot be a fleet id, or undefined when it can. */
export function fleetIdProblem(id: string): string | undefined {
  if (FLEET_ID.test(id)) return undefined;
  return `"${id}" is not a fleet id: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter, digit or '_'`;
}

/**
 * What serials and the identity cache are derived from: the scenario seed alone without a fleet
 * id (library use, tests, state written by earlier versions), else the seed and the id. A fleet id
 * cannot contain '/', so no other (seed, id) pair gives the same text.
 */
export function identitySeed(seed: string | number, fleetId: string | undefined): string | number {
  return fleetId === undefined ? seed : `${String(seed)}/fleet-id:${fleetId}`;
}

/** A new random fleet id: 16 hex digits (64 bits). */
export function newFleetId(): string {
  return randomBytes(8).toString('hex');
}

/** The fleet id kept in `stateDir`, or undefined when it has none yet. Throws naming the file when it is bad. */
export function readStateDirFleetId(stateDir: string): string | undefined {
  const file = join(stateDir, FLEET_ID_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const id = text.trim();
  const problem = fleetIdProblem(id);
  if (problem) throw new Error(`${file}: ${problem}`);
  return id;
}

/**
 * The state directory's fleet id, made (random) and kept the first time. Safe when several
 * processes open one state directory at once: the first file written wins and all read it.
 */
export function stateDirFleetId(stateDir: string): string {
  const kept = readStateDirFleetId(stateDir);
  if (kept !== undefined) return kept;
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  createFileOnce(join(stateDir, FLEET_ID_FILE), newFleetId() + '\n', PUBLIC_FILE_MODE);
  return readStateDirFleetId(stateDir)!;
}
