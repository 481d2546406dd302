// The signed config answers the controller keeps per device: valid only for the group object and
// the group and device config versions they were built at, and bounded in number.

import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { nextConfigVersion } from '../src/servers/controller/config-overlay.js';
import { DeviceRecord } from '../src/servers/controller/device-record.js';
import { DEFAULT_GROUP } from '../src/servers/controller/fleet-spec.js';
import { GroupState } from '../src/servers/controller/group-state.js';
import { SealedConfigReplies } from '../src/servers/controller/sealed-config-replies.js';

const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey;
const device = (uuid: string, group: GroupState) => new DeviceRecord(uuid, `S-${uuid}`, '', `h-${uuid}`, key, group, 0, true);
const body = (b: number) => new Uint8Array([b]);

describe('SealedConfigReplies', () => {
  it('serves a kept body until the group version, the device version or the group changes', () => {
    const g = new GroupState({ ...DEFAULT_GROUP, name: 'a' });
    const dev = device('d1', g);
    const cache = new SealedConfigReplies();
    expect(cache.get(dev)).toBeUndefined();
    cache.put(dev, 'h1', body(1));
    expect(cache.get(dev)).toMatchObject({ hash: 'h1', body: body(1) });

    g.overlay.version = nextConfigVersion();
    expect(cache.get(dev)).toBeUndefined();
    cache.put(dev, 'h2', body(2));
    expect(cache.get(dev)?.hash).toBe('h2');

    dev.overlay = { ...g.overlay, version: nextConfigVersion() };
    expect(cache.get(dev)).toBeUndefined();
    cache.put(dev, 'h3', body(3));

    // Another group object of the same name and version number: not the same config.
    const moved = new GroupState({ ...DEFAULT_GROUP, name: 'a' });
    moved.overlay.version = g.overlay.version;
    dev.group = moved;
    expect(cache.get(dev)).toBeUndefined();
  });

  it('keeps at most its capacity, dropping the oldest first', () => {
    const g = new GroupState({ ...DEFAULT_GROUP, name: 'b' });
    const cache = new SealedConfigReplies(2);
    const [d1, d2, d3] = ['x1', 'x2', 'x3'].map((u) => device(u, g));
    cache.put(d1!, 'h', body(1));
    cache.put(d2!, 'h', body(2));
    cache.put(d3!, 'h', body(3));
    expect(cache.size).toBe(2);
    expect(cache.get(d1!)).toBeUndefined();
    expect(cache.get(d2!)?.body).toEqual(body(2));
    expect(cache.get(d3!)?.body).toEqual(body(3));
  });
});
