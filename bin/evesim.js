#!/usr/bin/env node
// Entry point of the `evesim` command: the compiled CLI lives in dist/ (built by `npm ci` through
// the prepare script, or `npm run build`). `evesim run` first starts itself again with jemalloc
// preloaded when the machine has it (src/cli/allocator-plan.ts; EVESIM_ALLOCATOR=system: never).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const script = fileURLToPath(import.meta.url);
const cli = join(dirname(script), '..', 'dist', 'src', 'cli');
const main = join(cli, 'main.js');
if (!existsSync(main)) {
  console.error(`evesim: ${main} is missing; run "npm run build" first`);
  process.exit(2);
}
const { startUnderPreferredAllocator } = await import(pathToFileURL(join(cli, 'reexec-under-allocator.js')).href);
await startUnderPreferredAllocator(script);
await import(pathToFileURL(main).href);
