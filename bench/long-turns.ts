// What holds a thread's event loop in its long turns: reads a `node --cpu-prof` profile (samples
// and timeDeltas), finds every stretch of consecutive busy samples (anything but "(idle)") at
// least `--min` long, and prints them with the functions that ran in them, inclusive and self, and
// what the event loop called into (the entry).
// A loop-lag p99 or a run's longest stall says that such turns happen; this says what they are.
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bin/evesim.js run scenarios/steady-state.yaml …
//   node dist/bench/long-turns.js /tmp/prof/CPU.….cpuprofile [--min 80ms] [--from 120s] [--to 200s] [--top 25]
//
// A fleet worker's profile is the one whose name has the thread id after the pid (…PID.1.…).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkBenchArgs, optionalStringArg, positiveIntArg, stringArg } from './bench-args.js';
import { parseDuration } from '../src/scenario/parse-duration.js';
import { frameLabel, type ProfileNode } from './cpu-profile-summary.js';

const USAGE = `long-turns: what holds a thread's event loop in its long turns, from a node --cpu-prof profile.
  node dist/bench/long-turns.js FILE.cpuprofile [--min 80ms] [--from 120s] [--to 200s] [--top 25]`;

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface LongTurn {
  /** Start, ms from the profile's start. */
  atMs: number;
  durationMs: number;
}

export interface LongTurnsSummary {
  /** Every busy stretch's length, longest first (ms). */
  longestMs: number[];
  /** The stretches at least minMs long, in time order. */
  turns: LongTurn[];
  /** Time in them, ms. */
  totalMs: number;
  /** By function (`name file:line`), ms: time on the stack (inclusive) and at its top (self), largest first. */
  inclusive: [string, number][];
  self: [string, number][];
  /** By entry (the outermost frame under the root: the timer, immediate, I/O callback or tick
   *  queue that the event loop called into, or a native state such as GC), ms, largest first: in
   *  which phase of the loop the long turns' time went. */
  entries: [string, number][];
}

/** Busy stretches of at least `minMs` from `fromMs` until `toMs` (a stretch ends there), and what ran in them. */
export function longTurns(p: CpuProfile, minMs: number, fromMs = 0, toMs = Infinity): LongTurnsSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  // Each node's name, made once rather than for every sample it is on the stack of.
  const label = new Map(p.nodes.map((n) => [n.id, frameLabel(n)]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Sample i was taken at t[i] and stands for the time until the next one.
  const t: number[] = [];
  let now = 0;
  for (const d of p.timeDeltas) t.push((now += d) / 1000);
  const stretches: { atMs: number; endMs: number; samples: number[] }[] = [];
  let cur: (typeof stretches)[number] | undefined;
  for (let i = 0; i < p.samples.length; i++) {
    if (t[i]! < fromMs) continue;
    if (t[i]! >= toMs) break;
    const idle = byId.get(p.samples[i]!)?.callFrame.functionName === '(idle)';
    if (idle) {
      if (cur) stretches.push(cur);
      cur = undefined;
      continue;
    }
    if (!cur) cur = { atMs: t[i]!, endMs: t[i]!, samples: [] };
    cur.endMs = t[i + 1] ?? t[i]!;
    cur.samples.push(i);
  }
  if (cur) stretches.push(cur);
  const long = stretches.filter((s) => s.endMs - s.atMs >= minMs);
  const inclusive = new Map<string, number>();
  const self = new Map<string, number>();
  const entries = new Map<string, number>();
  let totalMs = 0;
  for (const s of long) {
    for (const i of s.samples) {
      const dt = (t[i + 1] ?? t[i]!) - t[i]!;
      totalMs += dt;
      let node = byId.get(p.samples[i]!);
      if (!node) continue;
      const top = label.get(node.id)!;
      self.set(top, (self.get(top) ?? 0) + dt);
      const seen = new Set<string>();
      let entry = top;
      while (node) {
        const name = label.get(node.id)!;
        if (parent.has(node.id)) entry = name;
        if (!seen.has(name)) {
          seen.add(name);
          inclusive.set(name, (inclusive.get(name) ?? 0) + dt);
        }
        const up = parent.get(node.id);
        node = up === undefined ? undefined : byId.get(up);
      }
      entries.set(entry, (entries.get(entry) ?? 0) + dt);
    }
  }
  const desc = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return {
    longestMs: stretches.map((s) => s.endMs - s.atMs).sort((a, b) => b - a),
    turns: long.map((s) => ({ atMs: s.atMs, durationMs: s.endMs - s.atMs })),
    totalMs,
    inclusive: desc(inclusive),
    self: desc(self),
    entries: desc(entries),
  };
}

function main(): void {
  checkBenchArgs(USAGE, ['<FILE.cpuprofile>', 'min=', 'from=', 'to=', 'top=']);
  const file = process.argv[2];
  if (!file || file.startsWith('--')) {
    console.error('usage: long-turns FILE.cpuprofile [--min 80ms] [--from 0s] [--to END] [--top 25]');
    process.exit(2);
  }
  const minMs = parseDuration(stringArg('min', '80ms'));
  const fromMs = parseDuration(stringArg('from', '0s'));
  const toText = optionalStringArg('to');
  const toMs = toText === undefined ? Infinity : parseDuration(toText);
  const top = positiveIntArg('top', 25);
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  if (!Array.isArray(p.samples) || !Array.isArray(p.timeDeltas)) {
    console.error(`long-turns: ${file} has no samples and timeDeltas (not a node --cpu-prof profile?)`);
    process.exit(2);
  }
  const s = longTurns(p, minMs, fromMs, toMs);
  const ms = (v: number) => v.toFixed(0).padStart(7);
  console.log(`${file}: longest busy stretches ${s.longestMs.slice(0, 10).map((v) => v.toFixed(0)).join(', ')} ms`);
  console.log(`${s.turns.length} stretches of ${minMs} ms or more from ${fromMs / 1000} s${toMs < Infinity ? ` to ${toMs / 1000} s` : ''}, ${s.totalMs.toFixed(0)} ms in them`);
  for (const x of s.turns.slice(0, top)) console.log(`  at ${(x.atMs / 1000).toFixed(1)} s: ${x.durationMs.toFixed(0)} ms`);
  if (s.totalMs === 0) return;
  console.log('entry (what the event loop called into):');
  for (const [k, v] of s.entries.slice(0, top)) console.log(`${ms(v)} ms ${((100 * v) / s.totalMs).toFixed(1).padStart(5)} %  ${k}`);
  console.log('self:');
  for (const [k, v] of s.self.slice(0, top)) console.log(`${ms(v)} ms ${((100 * v) / s.totalMs).toFixed(1).padStart(5)} %  ${k}`);
  console.log('inclusive:');
  for (const [k, v] of s.inclusive.slice(0, top * 2)) console.log(`${ms(v)} ms ${((100 * v) / s.totalMs).toFixed(1).padStart(5)} %  ${k}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
