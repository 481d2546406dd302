// evesim's own version (package.json), for the outputs that name it. The compiled file sits one
// directory deeper than the source (dist/src/… against src/…), so the nearest evesim package.json
// up the tree is read rather than a fixed relative path.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function evesimVersion(): string {
  if (cached !== undefined) return cached;
  cached = 'unknown';
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'evesim' && typeof pkg.version === 'string') return (cached = pkg.version);
      } catch {
        // Not ours or unreadable: keep looking up.
      }
    }
    const up = dirname(dir);
    if (up === dir) return cached;
    dir = up;
  }
}
