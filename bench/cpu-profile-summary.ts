// Where a `node --cpu-prof` profile's time went: self time by function and by source file, as
// shares of all samples. Reads the .cpuprofile JSON (nodes with callFrame and hitCount, or
// samples + timeDeltas) and prints the top entries.

import { readFileSync } from 'node:fs';

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

/** Lines describing the top `top` functions and files by self time. */
export function summarizeCpuProfile(file: string, top: number): string[] {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  // Self time per node: sum of the time deltas of its samples (µs), else hit counts.
  const self = new Map<number, number>();
  if (prof.samples && prof.timeDeltas) {
    prof.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas![i + 1] ?? 0)));
  } else {
    for (const n of prof.nodes) self.set(n.id, n.hitCount ?? 0);
  }
  let total = 0;
  const byFn = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const [id, t] of self) {
    const n = byId.get(id)!;
    total += t;
    const fn = frameLabel(n);
    const fileName = frameFile(n);
    byFn.set(fn, (byFn.get(fn) ?? 0) + t);
    byFile.set(fileName, (byFile.get(fileName) ?? 0) + t);
  }
  const idle = (k: string) => k.includes('(idle)');
  const busy = total - [...byFile].filter(([k]) => idle(k)).reduce((a, [, v]) => a + v, 0);
  const rows = (m: Map<string, number>) =>
    [...m]
      .filter(([k]) => !idle(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => `  ${((v / busy) * 100).toFixed(1).padStart(5)} %  ${k}`);
  return [`self time, shares of the busy (non-idle) samples: by source file`, ...rows(byFile), `by function`, ...rows(byFn)];
}

/** A frame's source file (after dist/ or node_modules/), or a native frame's own name in brackets. */
export function frameFile(n: ProfileNode): string {
  return shortUrl(n.callFrame.url) || `(${n.callFrame.functionName || 'native'})`;
}

/** A frame as these summaries name it: `function file:line`. */
export function frameLabel(n: ProfileNode): string {
  return `${n.callFrame.functionName || '(anonymous)'} ${frameFile(n)}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
}

function shortUrl(url: string): string {
  if (!url) return '';
  const i = url.indexOf('/dist/');
  if (i >= 0) return url.slice(i + 6);
  const nm = url.indexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + 14);
  return url.replace(/^file:\/\//, '');
}
