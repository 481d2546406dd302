#!/usr/bin/env node
// Entry point of the `evesim` command: the compiled CLI lives in dist/ (built by `npm ci` through
// the prepare script, or `npm run build`).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src', 'cli', 'main.js');
if (!existsSync(main)) {
  console.error(`evesim: ${main} is missing; run "npm run build" first`);
  process.exit(2);
}
await import(pathToFileURL(main).href);
