// Tallies of a V8 heap snapshot for bench/heap-breakdown.ts: every object's self size grouped by
// what it is (kind) or by who holds it (owner), and the growth per device between two snapshots of
// different fleet sizes. The growth is the honest per-device figure: a single snapshot divided by
// its devices also spreads the worker's fixed costs (code, module state, the histograms' 16 MiB
// WebAssembly memory) over them.

export interface HeapSnapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] };
    node_count: number;
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface Tally {
  count: number;
  bytes: number;
}

export type Tallies = Map<string, Tally>;

/** The line --by-owner gives bytes no class instance holds within MAX_OWNER_STEPS. */
export const NO_OWNER = '(no class instance within 8 steps: code, shapes, module state)';
const MAX_OWNER_STEPS = 8;

// Constructors that are containers, not our classes: the walk up goes past them.
const BUILT_IN = new Set(['Object', 'Array', 'Map', 'Set', 'Uint8Array', 'Buffer', 'Float64Array', 'ArrayBuffer', 'Int32Array', 'Uint32Array', 'Promise', 'Date', 'RegExp', 'Function', 'WeakMap', 'Error']);

export class SnapshotTally {
  private readonly stride: number;
  private readonly typeAt: number;
  private readonly nameAt: number;
  private readonly sizeAt: number;
  private readonly types: string[];
  /** VirtualDevice objects in the snapshot: the divisor unless one is given. */
  readonly devices: number;
  /** Self sizes of all nodes. */
  readonly totalBytes: number;

  constructor(private readonly snap: HeapSnapshot) {
    const fields = snap.snapshot.meta.node_fields;
    this.stride = fields.length;
    this.typeAt = fields.indexOf('type');
    this.nameAt = fields.indexOf('name');
    this.sizeAt = fields.indexOf('self_size');
    this.types = snap.snapshot.meta.node_types[0];
    let devices = 0;
    let total = 0;
    for (let i = 0; i < snap.nodes.length; i += this.stride) {
      total += snap.nodes[i + this.sizeAt]!;
      if (this.typeOf(i) === 'object' && this.nameOf(i) === 'VirtualDevice') devices++;
    }
    this.devices = devices;
    this.totalBytes = total;
  }

  private typeOf(offset: number): string {
    return this.types[this.snap.nodes[offset + this.typeAt]!]!;
  }

  private nameOf(offset: number): string {
    return this.snap.strings[this.snap.nodes[offset + this.nameAt]!]!;
  }

  /** What a node is: its type and constructor name (strings by their opening, so PEM text, base64 and JSON show up as what they are). */
  kindOf(offset: number): string {
    const type = this.typeOf(offset);
    const name = this.nameOf(offset);
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') {
      return `${type}: ${name.slice(0, 28).replace(/\s+/g, ' ')}${name.length > 28 ? '…' : ''} (len ${lenBucket(name.length)})`;
    }
    if (type === 'object' || type === 'closure' || type === 'native') return `${type}: ${name}`;
    return `${type}: ${name.length > 40 ? name.slice(0, 40) + '…' : name}`;
  }

  /** Self sizes by kind of object. */
  byKind(): Tallies {
    const out: Tallies = new Map();
    for (let i = 0; i < this.snap.nodes.length; i += this.stride) add(out, this.kindOf(i), this.snap.nodes[i + this.sizeAt]!);
    return out;
  }

  /**
   * Self sizes by owner. The first strong edge that reaches a node (in the snapshot's order) stands
   * for its retainer, a cheap stand-in for the dominator; the walk up stops at the first object
   * whose constructor is a class name (capitalised, not a built-in container), at most 8 steps up.
   * With `owner` ("Class.field", one line of the result), that owner's bytes by kind instead; with
   * `kind` (one line of byKind), only objects of that kind are counted.
   */
  byOwner(owner?: string, kind?: string): Tallies {
    const { snap, stride } = this;
    const edgeFields = snap.snapshot.meta.edge_fields;
    const edgeTypes = snap.snapshot.meta.edge_types[0];
    const edgeStride = edgeFields.length;
    const edgeTypeAt = edgeFields.indexOf('type');
    const edgeNameAt = edgeFields.indexOf('name_or_index');
    const edgeToAt = edgeFields.indexOf('to_node');
    const edgeCountAt = snap.snapshot.meta.node_fields.indexOf('edge_count');
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
        // Element and hidden edges carry an index, not a string.
        via[to] = t === 'element' || t === 'hidden' ? '[]' : snap.strings[snap.edges[e + edgeNameAt]!]!;
      }
    }
    const isClass = (i: number): boolean => {
      const name = this.nameOf(i * stride);
      return this.typeOf(i * stride) === 'object' && /^[A-Z]/.test(name) && !BUILT_IN.has(name) && !name.startsWith('system');
    };
    const out: Tallies = new Map();
    for (let i = 0; i < n; i++) {
      const size = snap.nodes[i * stride + this.sizeAt]!;
      if (size === 0) continue;
      if (kind !== undefined && this.kindOf(i * stride) !== kind) continue;
      let key: string;
      if (isClass(i)) key = `${this.nameOf(i * stride)} (self)`;
      else {
        let at = i;
        for (let step = 0; step < MAX_OWNER_STEPS && retainer[at]! >= 0 && !isClass(retainer[at]!); step++) at = retainer[at]!;
        const holder = retainer[at]!;
        key = holder >= 0 && isClass(holder) ? `${this.nameOf(holder * stride)}.${via[at]}` : NO_OWNER;
      }
      if (owner !== undefined) {
        if (key !== owner) continue;
        key = this.kindOf(i * stride);
      }
      add(out, key, size);
    }
    return out;
  }
}

function add(out: Tallies, key: string, bytes: number): void {
  const t = out.get(key);
  if (t) {
    t.count++;
    t.bytes += bytes;
  } else out.set(key, { count: 1, bytes });
}

function lenBucket(n: number): string {
  if (n < 64) return '<64';
  if (n < 256) return '<256';
  if (n < 1024) return '<1K';
  return '≥1K';
}

export interface PerDeviceRow {
  key: string;
  bytesPerDevice: number;
  objectsPerDevice: number;
}

/** Each line divided by the devices, largest first. */
export function perDevice(tallies: Tallies, devices: number): PerDeviceRow[] {
  const per = Math.max(1, devices);
  return [...tallies].map(([key, t]) => ({ key, bytesPerDevice: t.bytes / per, objectsPerDevice: t.count / per })).sort((a, b) => b.bytesPerDevice - a.bytesPerDevice);
}

/**
 * What each line grew by per device from a snapshot of `small` devices to one of `large`: (bytes at
 * large − bytes at small) / (large − small). Fixed costs cancel; a line that shrank shows negative.
 * Largest growth first.
 */
export function growthPerDevice(small: Tallies, smallDevices: number, large: Tallies, largeDevices: number): PerDeviceRow[] {
  const added = largeDevices - smallDevices;
  if (added <= 0) throw new Error(`the baseline snapshot has ${smallDevices} devices, not fewer than the other's ${largeDevices}`);
  const keys = new Set([...small.keys(), ...large.keys()]);
  const rows: PerDeviceRow[] = [];
  for (const key of keys) {
    const a = small.get(key) ?? { count: 0, bytes: 0 };
    const b = large.get(key) ?? { count: 0, bytes: 0 };
    rows.push({ key, bytesPerDevice: (b.bytes - a.bytes) / added, objectsPerDevice: (b.count - a.count) / added });
  }
  return rows.sort((x, y) => y.bytesPerDevice - x.bytesPerDevice);
}
