// The static import graph of the TypeScript sources, and the strongly connected components in it
// (import cycles), for the layering test. Type-only imports and `import('...')` types count: a cycle of
// types still ties the files together for a reader.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** File (repository-relative, `/`-separated) → the repository files it imports. */
export type ImportGraph = Map<string, Set<string>>;

function tsFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...tsFilesUnder(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const toPosix = (p: string) => p.split(sep).join('/');

/** Every relative import specifier of one source text: `import`, `import type`, `export ... from`, `import()`. */
export function importSpecifiers(sourceText: string): string[] {
  return ts
    .preProcessFile(sourceText, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((name) => name.startsWith('.'));
}

/** Builds the graph of the .ts files under `dirs` (relative to `root`); imports leaving the set are dropped. */
export function buildImportGraph(root: string, dirs: string[]): ImportGraph {
  const files = dirs.flatMap((d) => tsFilesUnder(resolve(root, d)));
  const known = new Set(files.map((f) => toPosix(relative(root, f))));
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const from = toPosix(relative(root, file));
    const targets = new Set<string>();
    for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
      // NodeNext sources name the emitted .js file; the source is the .ts next to it.
      const target = toPosix(relative(root, resolve(dirname(file), spec.replace(/\.js$/, '.ts'))));
      if (known.has(target)) targets.add(target);
    }
    graph.set(from, targets);
  }
  return graph;
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). Each sorted. */
export function importCycles(graph: ImportGraph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  // Iterative, so a deep chain of imports cannot overflow the call stack.
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; next: Iterator<string> }> = [];
    const enter = (node: string) => {
      index.set(node, counter);
      low.set(node, counter);
      counter++;
      stack.push(node);
      onStack.add(node);
      work.push({ node, next: (graph.get(node) ?? new Set<string>()).values() });
    };
    enter(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const step = frame.next.next();
      if (!step.done) {
        const to = step.value;
        if (!index.has(to)) enter(to);
        else if (onStack.has(to)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      const selfLoop = component.length === 1 && (graph.get(frame.node)?.has(frame.node) ?? false);
      if (component.length > 1 || selfLoop) cycles.push(component.sort());
    }
  }
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

const folderOf = (file: string) => file.split('/').slice(0, 2).join('/');

/**
 * Imports that break a layer order, as 'from -> to'. `layers` lists folders bottom first; a file in
 * one of them may import its own layer and those before it. Files outside every layer are not checked.
 */
export function layerViolations(graph: ImportGraph, layers: string[][]): string[] {
  const rank = new Map<string, number>();
  layers.forEach((folders, i) => folders.forEach((f) => rank.set(f, i)));
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const own = rank.get(folderOf(from));
    if (own === undefined) continue;
    for (const to of targets) {
      const theirs = rank.get(folderOf(to));
      if (theirs === undefined || theirs > own) out.push(`${from} -> ${to}`);
    }
  }
  return out.sort();
}
