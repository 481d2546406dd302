// Where the EVE wire vectors live inside this repository (test/vectors/, see its README).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const VECTORS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'vectors');

/** A path under test/vectors/. */
export const vectorPath = (...parts: string[]): string => join(VECTORS_DIR, ...parts);
