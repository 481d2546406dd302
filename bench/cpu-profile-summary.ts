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

export interface Profile {
  nodes: ProfileNode[];
  /** The profiler's clock (µs) at its start and its end. */
  startTime?: number;
  endTime?: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** A stretch of a profile, on the profiler's own clock (µs, as `startTime` and `endTime`). */
export interface ProfileWindow {
  fromUs: number;
  toUs: number;
}

/**
 * A stretch of wall-clock time (ms since the epoch) as a window on a profile's clock, given the
 * wall-clock instant the profiled process was started: `node --cpu-prof` starts its profiler as
 * the process boots, so the two clocks are set against each other there (off by the tens of ms a
 * boot takes before the profiler runs; its end is a worse anchor, since a large profile takes
 * seconds to write before the process exits).
 */
export function wallWindow(prof: Pick<Profile, 'startTime'>, startWallMs: number, fromWallMs: number, toWallMs: number): ProfileWindow {
  if (prof.startTime === undefined) throw new Error('the profile has no startTime, so wall-clock times cannot be placed on it');
  return { fromUs: prof.startTime + (fromWallMs - startWallMs) * 1000, toUs: prof.startTime + (toWallMs - startWallMs) * 1000 };
}

/**
 * Self time per node (µs): the sum of the time deltas of its samples, else hit counts. With a
 * window, only the samples taken inside it (a sample's time is startTime plus the deltas up to it;
 * its delta is the time it stands for).
 */
export function selfTimes(prof: Profile, window?: ProfileWindow): Map<number, number> {
  const self = new Map<number, number>();
  if (prof.samples && prof.timeDeltas) {
    if (window && prof.startTime === undefined) throw new Error('the profile has no startTime, so a window cannot be placed on it');
    let t = prof.startTime ?? 0;
    prof.samples.forEach((id, i) => {
      t += prof.timeDeltas![i] ?? 0;
      if (window && (t < window.fromUs || t >= window.toUs)) return;
      self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas![i + 1] ?? 0));
    });
  } else {
    if (window) throw new Error('the profile has no samples, so a window cannot be taken of it');
    for (const n of prof.nodes) self.set(n.id, n.hitCount ?? 0);
  }
  return self;
}

/** Lines describing the top `top` functions and files by self time (inside `window` when given). */
export function summarizeCpuProfile(file: string, top: number, window?: ProfileWindow): string[] {
  return summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as Profile, top, window);
}

/** The same, of a profile already read. */
export function summarizeProfile(prof: Profile, top: number, window?: ProfileWindow): string[] {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = selfTimes(prof, window);
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
  return [`self time, shares of the busy (non-idle) samples (${(busy / 1e6).toFixed(1)} s busy of ${(total / 1e6).toFixed(1)} s sampled): by source file`, ...rows(byFile), `by function`, ...rows(byFn)];
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
