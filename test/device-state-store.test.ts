import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DeviceStateStore, WRITE_BATCH } from '../src/fleet/device-state-store.js';
import type { DeviceDiskState } from '../src/device/lifecycle/device-disk-state.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function stateDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'evesim-device-state-'));
  dirs.push(d);
  return d;
}

const ROOT_CA = '-----BEGIN CERTIFICATE-----\nroot A\n-----END CERTIFICATE-----\n';
const state = (i: number): DeviceDiskState => ({ v: 1, uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, restartCounter: i % 7 });

describe('device state store (what devices keep on disk, batched commits)', () => {
  it('puts waiting for their delayed commit are on disk once the store is closed, and read back after reopening', async () => {
    const dir = stateDir();
    const a = DeviceStateStore.open({ stateDir: dir, seed: 5, rootCaPem: ROOT_CA });
    for (let i = 0; i < 50; i++) a.put(i, state(i));
    a.put(3, { ...state(3), restartCounter: 9 }); // the latest put of a device wins
    await a.close();
    const b = DeviceStateStore.open({ stateDir: dir, seed: 5, rootCaPem: ROOT_CA });
    try {
      for (let i = 0; i < 50; i++) expect(b.get(i)).toEqual(i === 3 ? { ...state(3), restartCounter: 9 } : state(i));
      expect(b.get(50)).toBeUndefined();
      // Another controller (root CA) never sees these records: its devices start fresh.
      const other = DeviceStateStore.open({ stateDir: dir, seed: 5, rootCaPem: ROOT_CA.replace('root A', 'root B') });
      expect(other.get(0)).toBeUndefined();
      await other.close();
    } finally {
      await b.close();
    }
  });

  it('a storm of puts larger than one batch is written whole, across several commits', async () => {
    const dir = stateDir();
    const n = WRITE_BATCH * 2 + 17;
    const a = DeviceStateStore.open({ stateDir: dir, seed: 6, rootCaPem: ROOT_CA });
    // Spread over event-loop turns, as devices onboarding put their UUIDs.
    for (let i = 0; i < n; i++) {
      a.put(i, state(i));
      if (i % 100 === 99) await new Promise((r) => setImmediate(r));
    }
    await a.close();
    const b = DeviceStateStore.open({ stateDir: dir, seed: 6, rootCaPem: ROOT_CA });
    try {
      let found = 0;
      for (let i = 0; i < n; i++) if (b.get(i)?.uuid === state(i).uuid) found++;
      expect(found).toBe(n);
    } finally {
      await b.close();
    }
  });

  it('forget removes a run\'s records; puts after close are ignored, not thrown', async () => {
    const dir = stateDir();
    const a = DeviceStateStore.open({ stateDir: dir, seed: 7, rootCaPem: ROOT_CA });
    for (let i = 0; i < 10; i++) a.put(i, state(i));
    await a.forget([0, 1, 2, 3, 4]);
    expect(a.get(0)).toBeUndefined();
    expect(a.get(5)).toEqual(state(5));
    await a.close();
    expect(() => a.put(11, state(11))).not.toThrow();
    const b = DeviceStateStore.open({ stateDir: dir, seed: 7, rootCaPem: ROOT_CA });
    try {
      expect(b.get(4)).toBeUndefined();
      expect(b.get(9)).toEqual(state(9));
      expect(b.get(11)).toBeUndefined();
    } finally {
      await b.close();
    }
  });
});
