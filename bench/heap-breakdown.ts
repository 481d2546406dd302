// What a worker's live heap is made of, per device: reads a V8 heap snapshot written by a fleet
// worker (EVESIM_HEAP_SNAPSHOT=DIR, see src/fleet/memory-probe.ts) and prints the self size of
// every kind of object, grouped by constructor (and strings by what they start with), divided by
// the number of devices. It is how the memory-per-device target is worked on, not a target itself.
// With --by-owner it says who holds the bytes instead: every object's self size goes to the nearest
// instance of one of our classes up its retainer chain, as "Class.field" (DeviceCounters.urlCounts,
// DeviceIdentityRecord.certs), so a change to one field shows as a change to one line.
//
//   EVESIM_HEAP_SNAPSHOT=/tmp/snap node --expose-gc dist/bench/steady-state.js --devices 2000 --duration 4m
//   node --max-old-space-size=8000 dist/bench/heap-breakdown.js /tmp/snap/worker-0.heapsnapshot [--devices 1000] [--top 40] [--by-owner] [--owner Class.field] [--baseline SMALL.heapsnapshot]
//
// --owner Class.field (one line of --by-owner) breaks that owner's bytes down by kind of object;
// --kind 'KIND' (one line of the table by kind) gives only that kind's bytes by owner.
// --baseline SMALL.heapsnapshot (a snapshot of a smaller fleet, as `fleet-memory` writes beside the
// larger one) prints each line's growth per added device instead, so the worker's fixed costs cancel.

import { readFileSync } from 'node:fs';
import { checkBenchArgs, hasArg, optionalStringArg, positiveIntArg } from './bench-args.js';
import { growthPerDevice, perDevice, SnapshotTally, type HeapSnapshot, type Tallies } from './heap-snapshot-tally.js';

const USAGE = `heap-breakdown: what a worker's live heap is made of per device, from a V8 heap snapshot (by kind, or by owner), or its growth per device over a smaller fleet's snapshot.
  node --max-old-space-size=8000 dist/bench/heap-breakdown.js FILE.heapsnapshot [--devices 1000] [--top 40] [--by-owner] [--owner Class.field] [--kind KIND] [--baseline SMALL.heapsnapshot]`;
checkBenchArgs(USAGE, ['<FILE.heapsnapshot>', 'devices=', 'top=', 'by-owner', 'owner=', 'kind=', 'baseline=']);

const file = process.argv[2];
if (!file || file.startsWith('--')) {
  console.error(USAGE);
  process.exit(2);
}
const top = positiveIntArg('top', 50);
const ownerFilter = optionalStringArg('owner');
const kindFilter = optionalStringArg('kind');
const baselineFile = optionalStringArg('baseline');
const byOwner = hasArg('by-owner') || ownerFilter !== undefined || kindFilter !== undefined;

function load(path: string): SnapshotTally {
  try {
    return new SnapshotTally(JSON.parse(readFileSync(path, 'utf8')) as HeapSnapshot);
  } catch (err) {
    console.error(`heap-breakdown: cannot read ${path} as a V8 heap snapshot: ${(err as Error).message}`);
    process.exit(2);
  }
}

function tallies(t: SnapshotTally): Tallies {
  return byOwner ? t.byOwner(ownerFilter, kindFilter) : t.byKind();
}

const heading = ownerFilter === undefined && byOwner ? 'held by (nearest class instance.field; "(self)": the instance itself)' : 'kind';
const large = load(file);
const devices = positiveIntArg('devices', 0) || large.devices;
let rows;
if (baselineFile === undefined) {
  console.log(`${file}: ${(large.totalBytes / 2 ** 20).toFixed(1)} MiB live, ${devices} devices, ${(large.totalBytes / Math.max(1, devices) / 1024).toFixed(2)} KiB per device`);
  console.log(`bytes/device  objects/device  ${heading}`);
  rows = perDevice(tallies(large), devices);
} else {
  const small = load(baselineFile);
  const added = devices - small.devices;
  console.log(
    `${file} (${devices} devices, ${(large.totalBytes / 2 ** 20).toFixed(1)} MiB live) over ${baselineFile} (${small.devices} devices, ${(small.totalBytes / 2 ** 20).toFixed(1)} MiB): ` +
      `${((large.totalBytes - small.totalBytes) / Math.max(1, added) / 1024).toFixed(2)} KiB per added device`,
  );
  console.log(`bytes/added device  objects/added device  ${heading}`);
  rows = growthPerDevice(tallies(small), small.devices, tallies(large), devices);
}
for (const r of rows.slice(0, top)) {
  console.log(`${r.bytesPerDevice.toFixed(0).padStart(12)}  ${r.objectsPerDevice.toFixed(2).padStart(14)}  ${r.key}`);
}
