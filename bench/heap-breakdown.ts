// What a worker's live heap is made of, per device: reads a V8 heap snapshot written by a fleet
// worker (EVESIM_HEAP_SNAPSHOT=DIR, see src/fleet/memory-probe.ts) and prints the self size of
// every kind of object, grouped by constructor (and strings by what they start with), divided by
// the number of devices. It is how the memory-per-device target is worked on, not a target itself.
// With --by-owner it says who holds the bytes instead: every object's self size goes to the nearest
// instance of one of our classes up its retainer chain, as "Class.field" (DeviceCounters.urlCounts,
// DeviceIdentityRecord.certs), so a change to one field shows as a change to one line.
//
//   EVESIM_HEAP_SNAPSHOT=/tmp/snap node --expose-gc dist/bench/steady-state.js --devices 2000 --duration 4m
//   node --max-old-space-size=8000 dist/bench/heap-breakdown.js /tmp/snap/worker-0.heapsnapshot [--devices 1000] [--top 40] [--by-owner] [--owner Class.field]
//
// --owner Class.field (one line of --by-owner) breaks that owner's bytes down by kind of object.

import { readFileSync } from 'node:fs';
import { checkBenchArgs, hasArg, optionalStringArg, positiveIntArg, stringArg } from './bench-args.js';

const USAGE = `heap-breakdown: what a worker's live heap is made of per device, from a V8 heap snapshot (by kind, or by owner).
  node --max-old-space-size=8000 dist/bench/heap-breakdown.js FILE.heapsnapshot [--devices 1000] [--top 40] [--by-owner] [--owner Class.field]`;
checkBenchArgs(USAGE, ['<FILE.heapsnapshot>', 'devices=', 'top=', 'by-owner', 'owner=']);

interface Snapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] };
    node_count: number;
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const file = process.argv[2];
if (!file || file.startsWith('--')) {
  console.error('usage: heap-breakdown FILE.heapsnapshot [--devices N] [--top K] [--by-owner] [--owner Class.field]');
  process.exit(2);
}
const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const fields = snap.snapshot.meta.node_fields;
const types = snap.snapshot.meta.node_types[0];
const stride = fields.length;
const typeAt = fields.indexOf('type');
const nameAt = fields.indexOf('name');
const sizeAt = fields.indexOf('self_size');

// Count VirtualDevice objects unless told: the divisor of every figure below.
const devicesGiven = positiveIntArg('devices', 0);
let devices = devicesGiven;
const groups = new Map<string, { count: number; bytes: number }>();
let total = 0;
for (let i = 0; i < snap.nodes.length; i += stride) {
  const type = types[snap.nodes[i + typeAt]!]!;
  const name = snap.strings[snap.nodes[i + nameAt]!]!;
  const size = snap.nodes[i + sizeAt]!;
  total += size;
  const key = kindOf(i);
  const g = groups.get(key) ?? { count: 0, bytes: 0 };
  g.count++;
  g.bytes += size;
  groups.set(key, g);
  if (devicesGiven === 0 && type === 'object' && name === 'VirtualDevice') devices++;
}

/** What a node is: its type and constructor name (strings by their opening, so PEM text, base64 and JSON show up as what they are). */
function kindOf(i: number): string {
  const type = types[snap.nodes[i + typeAt]!]!;
  const name = snap.strings[snap.nodes[i + nameAt]!]!;
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') {
    return `${type}: ${name.slice(0, 28).replace(/\s+/g, ' ')}${name.length > 28 ? '…' : ''} (len ${lenBucket(name.length)})`;
  }
  if (type === 'object' || type === 'closure' || type === 'native') return `${type}: ${name}`;
  return `${type}: ${name.length > 40 ? name.slice(0, 40) + '…' : name}`;
}

function lenBucket(n: number): string {
  if (n < 64) return '<64';
  if (n < 256) return '<256';
  if (n < 1024) return '<1K';
  return '≥1K';
}

const top = positiveIntArg('top', 50);
const ownerFilter = optionalStringArg('owner');
const per = Math.max(1, devices);
console.log(`${file}: ${(total / 2 ** 20).toFixed(1)} MiB live, ${devices} devices, ${(total / per / 1024).toFixed(2)} KiB per device`);
const rows = hasArg('by-owner') || ownerFilter !== undefined ? byOwner() : groups;
console.log(`bytes/device  objects/device  ${hasArg('by-owner') ? 'held by (nearest class instance.field; "(self)": the instance itself)' : 'kind'}`);
for (const [key, g] of [...rows].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top)) {
  console.log(`${(g.bytes / per).toFixed(0).padStart(12)}  ${(g.count / per).toFixed(2).padStart(14)}  ${key}`);
}

/**
 * Self sizes by owner. The first strong edge that reaches a node (in the snapshot's order) stands
 * for its retainer, a cheap stand-in for the dominator; the walk up stops at the first object
 * whose constructor is a class name (capitalised, not a built-in container), at most 8 steps up.
 */
function byOwner(): Map<string, { count: number; bytes: number }> {
  const edgeFields = snap.snapshot.meta.edge_fields;
  const edgeTypes = snap.snapshot.meta.edge_types[0];
  const edgeStride = edgeFields.length;
  const edgeTypeAt = edgeFields.indexOf('type');
  const edgeNameAt = edgeFields.indexOf('name_or_index');
  const edgeToAt = edgeFields.indexOf('to_node');
  const edgeCountAt = fields.indexOf('edge_count');
  const n = snap.nodes.length / stride;
  const retainer = new Int32Array(n).fill(-1);
  const via: string[] = new Array(n);
  let e = 0;
  for (let i = 0; i < n; i++) {
    const count = snap.nodes[i * stride + edgeCountAt]!;
    for (let k = 0; k < count; k++, e += edgeStride) {
      const t = edgeTypes[snap.edges[e + edgeTypeAt]!]!;
      if (t === 'weak' || t === 'shortcut') continue;
      const to = snap.edges[e + edgeToAt]! / stride;
      if (retainer[to]! >= 0) continue;
      retainer[to] = i;
      via[to] = t === 'element' || t === 'hidden' ? '[]' : snap.strings[snap.edges[e + edgeNameAt]!]!;
    }
  }
  const builtIn = new Set(['Object', 'Array', 'Map', 'Set', 'Uint8Array', 'Buffer', 'Float64Array', 'ArrayBuffer', 'Int32Array', 'Uint32Array', 'Promise', 'Date', 'RegExp', 'Function', 'WeakMap', 'Error']);
  const isClass = (i: number): boolean => {
    const name = snap.strings[snap.nodes[i * stride + nameAt]!]!;
    return types[snap.nodes[i * stride + typeAt]!] === 'object' && /^[A-Z]/.test(name) && !builtIn.has(name) && !name.startsWith('system');
  };
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < n; i++) {
    const size = snap.nodes[i * stride + sizeAt]!;
    if (size === 0) continue;
    let key: string;
    if (isClass(i)) key = `${snap.strings[snap.nodes[i * stride + nameAt]!]} (self)`;
    else {
      let at = i;
      for (let step = 0; step < 8 && retainer[at]! >= 0 && !isClass(retainer[at]!); step++) at = retainer[at]!;
      const owner = retainer[at]!;
      key = owner >= 0 && isClass(owner) ? `${snap.strings[snap.nodes[owner * stride + nameAt]!]}.${via[at]}` : '(no class instance within 8 steps: code, shapes, module state)';
    }
    if (ownerFilter !== undefined) {
      // --owner: what that owner's bytes are, by kind of object.
      if (key !== ownerFilter) continue;
      key = kindOf(i * stride);
    }
    const g = out.get(key) ?? { count: 0, bytes: 0 };
    g.count++;
    g.bytes += size;
    out.set(key, g);
  }
  return out;
}
