// The shape of the source tree: no import cycles, and the lower layers never import the ones
// above them (proto/wire + memory → protocol → identity + tpm → device → transport → fleet → workers →
// runner → servers → cli). Type-only imports count: a cycle of types ties files together too.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildImportGraph, importCycles, importSpecifiers, layerViolations, type ImportGraph } from './import-graph.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Cycles that exist today outside the scope of the change that added this test. This list only
 * shrinks: a cycle not listed fails, and so does a listed one that is gone (delete its entry).
 */
const KNOWN_CYCLES: Array<{ files: string[]; reason: string }> = [];

/**
 * The layers a lower-layer file may import, bottom first: a file of one of these folders may import
 * files of its own layer and of the layers before it, nothing else (not src/scenario either).
 */
const LOWER_LAYERS: string[][] = [['src/gen', 'src/memory'], ['src/protocol'], ['src/identity', 'src/tpm'], ['src/device']];

describe('import graph tools', () => {
  it('reads every kind of relative import, type-only ones included, and skips comments', () => {
    const text = [
      "import type { A } from './a.js';",
      "import { b } from '../b.js';",
      "export { c } from './c.js';",
      "export * from './d.js';",
      "let e: import('./e.js').E;",
      "import './f.js';",
      "// import { g } from './g.js';",
      "import { readFileSync } from 'node:fs';",
    ].join('\n');
    expect(importSpecifiers(text).sort()).toEqual(['../b.js', './a.js', './c.js', './d.js', './e.js', './f.js']);
  });

  it('finds the cycles of a small graph, a file importing itself included, and nothing else', () => {
    const graph: ImportGraph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a', 'd'])],
      ['d', new Set<string>()],
      ['e', new Set(['a', 'e'])],
      ['f', new Set(['g'])],
      ['g', new Set(['d'])],
    ]);
    expect(importCycles(graph)).toEqual([['a', 'b', 'c'], ['e']]);
    // Without the closing edge there is no cycle.
    graph.set('c', new Set(['d']));
    graph.set('e', new Set(['a']));
    expect(importCycles(graph)).toEqual([]);
  });

  it('reports a deliberately introduced cycle and upward import in the real tree', () => {
    const graph = buildImportGraph(ROOT, ['src']);
    graph.get('src/device/ports.ts')!.add('src/device/virtual-device.ts');
    graph.get('src/identity/device-identity.ts')!.add('src/device/device-options.ts');
    expect(importCycles(graph).some((c) => c.includes('src/device/ports.ts') && c.includes('src/device/virtual-device.ts'))).toBe(true);
    expect(layerViolations(graph, LOWER_LAYERS)).toContain('src/identity/device-identity.ts -> src/device/device-options.ts');
  });
});

describe('source layering', () => {
  const graph = buildImportGraph(ROOT, ['src', 'workers', 'bench']);

  it('sees the whole tree', () => {
    // Guards against a graph that is empty because paths stopped resolving.
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get('src/device/virtual-device.ts')).toContain('src/device/ports.ts');
    expect(graph.get('src/device/device-options.ts')).toContain('src/identity/device-identity.ts');
  });

  it('has no import cycle except the known ones', () => {
    const known = KNOWN_CYCLES.map((k) => [...k.files].sort().join(' '));
    const found = importCycles(graph).map((c) => c.join(' '));
    expect(found.filter((c) => !known.includes(c)), 'new import cycles').toEqual([]);
    expect(known.filter((k) => !found.includes(k)), 'known cycles that are gone: delete them from KNOWN_CYCLES').toEqual([]);
  });

  it('has no import cycle among the device files', () => {
    expect(importCycles(graph).filter((c) => c.some((f) => f.startsWith('src/device/')))).toEqual([]);
  });

  it('never imports upwards from proto types, protocol, identity, tpm or device', () => {
    expect(layerViolations(graph, LOWER_LAYERS)).toEqual([]);
  });
});
