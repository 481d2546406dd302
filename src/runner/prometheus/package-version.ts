// evesim's version for evesim_run_info: the "version" of the package.json above this module (the
// repository's, or /app's in the container image, which keeps package.json for "type": "module").

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The version of the evesim package this module belongs to, or 'unknown' when none is found. */
export function evesimVersion(startDir: string = path.dirname(fileURLToPath(import.meta.url))): string {
  if (cached !== undefined) return cached;
  let dir = startDir;
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'evesim' && typeof pkg.version === 'string') return (cached = pkg.version);
    }
    const parent = path.dirname(dir);
    if (parent === dir) return (cached = 'unknown');
    dir = parent;
  }
}
