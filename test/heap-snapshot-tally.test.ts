import { describe, expect, it } from 'vitest';
import { growthPerDevice, NO_OWNER, perDevice, SnapshotTally, type HeapSnapshot } from '../bench/heap-snapshot-tally.js';

const NODE_TYPES = ['hidden', 'object', 'string', 'native', 'code'];
const EDGE_TYPES = ['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak'];

/** A tiny snapshot in V8's layout: nodes as [type, name, id, self_size, edge_count], edges as [type, name_or_index, to_node offset]. */
class SnapshotBuilder {
  private readonly nodes: { type: string; name: string; size: number; edges: { type: string; name: string | number; to: number }[] }[] = [];
  private readonly strings: string[] = [];

  node(type: string, name: string, size: number): number {
    this.nodes.push({ type, name, size, edges: [] });
    return this.nodes.length - 1;
  }

  edge(from: number, type: string, name: string | number, to: number): void {
    this.nodes[from]!.edges.push({ type, name, to });
  }

  private str(s: string): number {
    const i = this.strings.indexOf(s);
    if (i >= 0) return i;
    this.strings.push(s);
    return this.strings.length - 1;
  }

  build(): HeapSnapshot {
    const nodes: number[] = [];
    const edges: number[] = [];
    this.nodes.forEach((n, id) => {
      nodes.push(NODE_TYPES.indexOf(n.type), this.str(n.name), id * 2 + 1, n.size, n.edges.length);
      for (const e of n.edges) edges.push(EDGE_TYPES.indexOf(e.type), typeof e.name === 'number' ? e.name : this.str(e.name), e.to * 5);
    });
    return {
      snapshot: {
        meta: { node_fields: ['type', 'name', 'id', 'self_size', 'edge_count'], node_types: [NODE_TYPES], edge_fields: ['type', 'name_or_index', 'to_node'], edge_types: [EDGE_TYPES] },
        node_count: this.nodes.length,
      },
      nodes,
      edges,
      strings: this.strings,
    };
  }
}

/** A worker of `devices` devices: fixed code and module state, and per device its own object with options and a timer. */
function worker(devices: number): HeapSnapshot {
  const b = new SnapshotBuilder();
  const root = b.node('hidden', '(GC roots)', 0);
  const code = b.node('code', 'some code', 5000);
  b.edge(root, 'internal', 'code', code);
  const list = b.node('object', 'Array', 32);
  b.edge(root, 'property', 'devices', list);
  for (let i = 0; i < devices; i++) {
    const device = b.node('object', 'VirtualDevice', 200);
    b.edge(list, 'element', i, device);
    const opts = b.node('object', 'Object', 100);
    b.edge(device, 'property', 'opts', opts);
    const name = b.node('string', `device-${i}`, 24);
    b.edge(opts, 'property', 'name', name);
    const timer = b.node('object', 'DeviceTimer', 64);
    b.edge(device, 'property', 'timer', timer);
    // A weak edge to the timer's callback does not make the timer its owner.
    const cb = b.node('object', 'Object', 40);
    b.edge(timer, 'weak', 'cb', cb);
    b.edge(device, 'property', 'cb', cb);
  }
  return b.build();
}

describe('heap snapshot tallies', () => {
  it('counts devices and gives bytes to the nearest class instance through strong edges', () => {
    const t = new SnapshotTally(worker(2));
    expect(t.devices).toBe(2);
    const owners = t.byOwner();
    expect(owners.get('VirtualDevice (self)')).toEqual({ count: 2, bytes: 400 });
    expect(owners.get('VirtualDevice.opts')).toEqual({ count: 4, bytes: 2 * (100 + 24) });
    expect(owners.get('DeviceTimer (self)')).toEqual({ count: 2, bytes: 128 });
    expect(owners.get('VirtualDevice.cb')).toEqual({ count: 2, bytes: 80 });
    expect(owners.get(NO_OWNER)).toEqual({ count: 2, bytes: 5032 });
  });

  it('breaks one owner down by kind', () => {
    const kinds = new SnapshotTally(worker(2)).byOwner('VirtualDevice.opts');
    expect(kinds.get('object: Object')).toEqual({ count: 2, bytes: 200 });
    expect([...kinds.keys()].filter((k) => k.startsWith('string: device-'))).toEqual(['string: device-0 (len <64)', 'string: device-1 (len <64)']);
  });

  it('divides a single snapshot by its devices, fixed costs included', () => {
    const t = new SnapshotTally(worker(4));
    const rows = perDevice(t.byOwner(), t.devices);
    expect(rows[0]).toEqual({ key: NO_OWNER, bytesPerDevice: 5032 / 4, objectsPerDevice: 0.5 });
  });

  it('gives the growth per added device between two fleet sizes, so fixed costs cancel', () => {
    const small = new SnapshotTally(worker(2));
    const large = new SnapshotTally(worker(6));
    const rows = growthPerDevice(small.byOwner(), small.devices, large.byOwner(), large.devices);
    const at = (k: string) => rows.find((r) => r.key === k)!;
    expect(at('VirtualDevice (self)').bytesPerDevice).toBe(200);
    expect(at('VirtualDevice.opts')).toEqual({ key: 'VirtualDevice.opts', bytesPerDevice: 124, objectsPerDevice: 2 });
    expect(at(NO_OWNER).bytesPerDevice).toBe(0);
    expect(rows[0]!.key).toBe('VirtualDevice (self)');
  });

  it('refuses a baseline that is not smaller', () => {
    const t = new SnapshotTally(worker(2));
    expect(() => growthPerDevice(t.byKind(), 2, t.byKind(), 2)).toThrow(/baseline snapshot has 2 devices, not fewer than the other's 2/);
  });
});

describe('heap snapshot tallies of one kind', () => {
  it('gives only that kind of object by owner', () => {
    const owners = new SnapshotTally(worker(2)).byOwner(undefined, 'object: Object');
    expect([...owners]).toEqual([
      ['VirtualDevice.opts', { count: 2, bytes: 200 }],
      ['VirtualDevice.cb', { count: 2, bytes: 80 }],
    ]);
  });
});
