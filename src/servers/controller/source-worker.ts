// Starts a worker thread on a module that may be TypeScript source. Built code (dist/) runs the
// .js entry directly. When this file itself runs from source (tests under vitest, which transforms
// TS in-process only), the worker gets a small module hook that compiles .ts files with the
// project's TypeScript (a devDependency) and maps `./x.js` imports to `./x.ts`, as NodeNext
// sources spell them. Only for development: the hook costs about a second of start-up.

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

export function startSourceAwareWorker(entry: URL, options: WorkerOptions = {}): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, options);
  const tsUrl = pathToFileURL(createRequire(import.meta.url).resolve('typescript')).href;
  const hooks = `
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from ${JSON.stringify(tsUrl)};
export async function resolve(spec, ctx, next) {
  if (ctx.parentURL && ctx.parentURL.endsWith('.ts') && spec.endsWith('.js') && (spec.startsWith('.') || spec.startsWith('file:'))) {
    const js = new URL(spec, ctx.parentURL);
    if (!existsSync(fileURLToPath(js))) {
      const src = new URL(js.href.slice(0, -3) + '.ts');
      if (existsSync(fileURLToPath(src))) return { url: src.href, shortCircuit: true };
    }
  }
  return next(spec, ctx);
}
export async function load(url, ctx, next) {
  if (!url.endsWith('.ts')) return next(url, ctx);
  const file = fileURLToPath(url);
  const out = ts.transpileModule(await readFile(file, 'utf8'), {
    fileName: file,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false, inlineSourceMap: true },
  });
  return { format: 'module', source: out.outputText, shortCircuit: true };
}`;
  const hooksUrl = 'data:text/javascript,' + encodeURIComponent(hooks);
  const boot = `import('node:module')
  .then((m) => { m.register(${JSON.stringify(hooksUrl)}); return import(${JSON.stringify(entry.href)}); })
  .catch((e) => { console.error(e); process.exit(1); });`;
  return new Worker(boot, { ...options, eval: true });
}
