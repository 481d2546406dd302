// What a worker's live heap is made of, per device: reads a V8 heap snapshot written by a fleet
// worker (EVESIM_HEAP_SNAPSHOT=DIR, see src/fleet/memory-probe.ts) and prints the self size of
// every kind of object, grouped by constructor (and strings by what they start with), divided by
// the number of devices. It is how the memory-per-device target is worked on, not a target itself.
//
//   EVESIM_HEAP_SNAPSHOT=/tmp/snap node --expose-gc dist/bench/steady-state.js --devices 2000 --duration 4m
//   node --max-old-space-size=8000 dist/bench/heap-breakdown.js /tmp/snap/worker-0.heapsnapshot [--devices 1000] [--top 40]

import { readFileSync } from 'node:fs';
import { positiveIntArg } from './bench-args.js';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] }; node_count: number };
  nodes: number[];
  strings: string[];
}

const file = process.argv[2];
if (!file || file.startsWith('--')) {
  console.error('usage: heap-breakdown FILE.heapsnapshot [--devices N] [--top K]');
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
  let key: string;
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') {
    // Strings by their opening, so PEM text, base64 and JSON show up as what they are.
    key = `${type}: ${name.slice(0, 28).replace(/\s+/g, ' ')}${name.length > 28 ? '…' : ''} (len ${lenBucket(name.length)})`;
  } else if (type === 'object' || type === 'closure' || type === 'native') {
    key = `${type}: ${name}`;
  } else {
    key = `${type}: ${name.length > 40 ? name.slice(0, 40) + '…' : name}`;
  }
  const g = groups.get(key) ?? { count: 0, bytes: 0 };
  g.count++;
  g.bytes += size;
  groups.set(key, g);
  if (devicesGiven === 0 && type === 'object' && name === 'VirtualDevice') devices++;
}

function lenBucket(n: number): string {
  if (n < 64) return '<64';
  if (n < 256) return '<256';
  if (n < 1024) return '<1K';
  return '≥1K';
}

const top = positiveIntArg('top', 50);
const per = Math.max(1, devices);
console.log(`${file}: ${(total / 2 ** 20).toFixed(1)} MiB live, ${devices} devices, ${(total / per / 1024).toFixed(2)} KiB per device`);
console.log('bytes/device  objects/device  kind');
for (const [key, g] of [...groups].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top)) {
  console.log(`${(g.bytes / per).toFixed(0).padStart(12)}  ${(g.count / per).toFixed(2).padStart(14)}  ${key}`);
}
