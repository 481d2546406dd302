// Maps a field path of the parsed document back to where it was written, so errors found on the
// plain JS value (ajv, semantic checks) can name a line and column. Follows aliases and `<<` merges.

import { isAlias, isMap, isScalar, isSeq, type Document, type LineCounter, type Node, type Pair } from 'yaml';
import type { PathSegment } from './scenario-error.js';

export interface SourcePosition {
  line: number;
  column: number;
}

export class YamlLocator {
  constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  /**
   * Where the value at `path` starts; `at: 'key'` points at its key instead (for "unknown field").
   * If the path only partly exists (a missing field), the deepest existing node is used.
   */
  locate(path: readonly PathSegment[], at: 'value' | 'key' = 'value'): SourcePosition {
    let node: unknown = this.doc.contents;
    let key: unknown;
    let lastGood: unknown = node;
    for (const seg of path) {
      node = this.deref(node);
      let next: { key?: unknown; value: unknown } | undefined;
      if (isMap(node)) {
        const pair = this.findPair(node.items as Pair[], String(seg), 0);
        if (pair) next = { key: pair.key, value: pair.value };
      } else if (isSeq(node) && typeof seg === 'number') {
        const item = node.items[seg];
        if (item !== undefined) next = { value: item };
      }
      if (!next) {
        key = undefined;
        node = lastGood;
        break;
      }
      key = next.key;
      // `count:` with nothing after it has no value node; its key still says where it is.
      node = next.value ?? next.key;
      lastGood = node ?? lastGood;
    }
    const target = at === 'key' && key ? key : node;
    return this.position(target);
  }

  private position(node: unknown): SourcePosition {
    const range = (node as Node | undefined)?.range;
    const offset = range ? range[0] : 0;
    const { line, col } = this.lines.linePos(offset);
    return { line, column: col };
  }

  private deref(node: unknown): unknown {
    for (let i = 0; i < 32 && isAlias(node); i++) node = node.resolve(this.doc);
    return node;
  }

  private findPair(items: Pair[], name: string, depth: number): Pair | undefined {
    const direct = items.find((p) => isScalar(p.key) && String(p.key.value) === name);
    if (direct || depth > 8) return direct;
    for (const p of items) {
      if (!isScalar(p.key) || !isMergeKey(p.key.value)) continue;
      const sources = isSeq(p.value) ? p.value.items : [p.value];
      for (const src of sources) {
        const m = this.deref(src);
        if (isMap(m)) {
          const found = this.findPair(m.items as Pair[], name, depth + 1);
          if (found) return found;
        }
      }
    }
    return undefined;
  }
}

function isMergeKey(v: unknown): boolean {
  return v === '<<' || (typeof v === 'symbol' && v.description === '<<');
}
