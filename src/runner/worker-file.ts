// Where the compiled fleet worker is. piscina starts workers from a JavaScript file, and the
// TypeScript build (rootDir ".", outDir "dist") puts this module at dist/src/runner/worker-file.js
// and the worker at dist/workers/fleet-worker.js, so relative to this module it is
// ../../workers/fleet-worker.js. When this module runs from source (vitest, tsx) there is no .js
// next to it; the compiled worker of the same checkout is then ../../dist/workers/fleet-worker.js.
// Resolving from import.meta.url (not the current directory) keeps both working wherever the
// command is started from, and in an installed package.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function fleetWorkerFile(override?: string): string {
  if (override) {
    if (!existsSync(override)) throw new Error(`fleet worker file ${override} does not exist`);
    return override;
  }
  const candidates = [
    new URL('../../workers/fleet-worker.js', import.meta.url), // compiled layout: dist/src/runner → dist/workers
    new URL('../../dist/workers/fleet-worker.js', import.meta.url), // source layout: src/runner → dist/workers
  ].map((u) => fileURLToPath(u));
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error(`the compiled fleet worker is missing (looked for ${candidates.join(' and ')}); run "npm run build" first`);
  }
  return found;
}
