import { describe, expect, it } from 'vitest';
import type { config } from '../src/gen/eve-types.js';
import { SharedValueTable, sharedRecord } from '../src/device/config/shared-config-values.js';
import { sharedConfigItems } from '../src/device/config/parsed-config-items.js';
import { parseConfigItems } from '../src/device/core/eve-timers.js';
import { onboard, rig } from './device-harness.js';

describe('shared config values (one copy per worker thread)', () => {
  it('a table gives the value first held under a key, and starts again when full', () => {
    const t = new SharedValueTable<object>(2);
    const a = t.get('a', () => ({ n: 1 }));
    expect(t.get('a', () => ({ n: 2 }))).toBe(a);
    t.get('b', () => ({}));
    expect(t.size).toBe(2);
    // Full: the next new key starts the table again; old values stay valid where they are held.
    const c = t.get('c', () => ({}));
    expect(t.size).toBe(1);
    expect(t.get('c', () => ({}))).toBe(c);
    expect(t.get('a', () => ({ n: 3 }))).toEqual({ n: 3 });
  });

  it('equal plain data gives one frozen copy, deeply; different data a different one', () => {
    const x = sharedRecord('test-record', { a: 'name', n: [1, 2], o: { k: { value: 'v' } } });
    const y = sharedRecord('test-record', { a: 'name', n: [1, 2], o: { k: { value: 'v' } } });
    expect(y).toBe(x);
    expect(sharedRecord('test-record', { a: 'name', n: [1, 3], o: { k: { value: 'v' } } })).not.toBe(x);
    // The same data under another kind is kept apart.
    expect(sharedRecord('other-record', { a: 'name', n: [1, 2], o: { k: { value: 'v' } } })).not.toBe(x);
    expect(Object.isFrozen(x)).toBe(true);
    expect(Object.isFrozen(x.n)).toBe(true);
    expect(Object.isFrozen(x.o.k)).toBe(true);
    // A device that tried to edit a shared value would change every device's: it throws instead.
    expect(() => {
      (x as { a: string }).a = 'other';
    }).toThrow(TypeError);
  });

  it('config items are parsed once per distinct list: what parseConfigItems gives, shared, and never mixed up', () => {
    const items = [
      { key: 'timer.config.interval', value: '90' },
      { key: 'timer.metric.interval', value: 'often' },
      { key: 'not.a.known.key', value: 'x' },
    ];
    const first = sharedConfigItems(items);
    const parsed = parseConfigItems(items);
    expect(first.timers).toEqual(parsed.timers);
    expect(first.status).toEqual(parsed.status);
    expect(first.status.configItems['timer.metric.interval']!.error).toMatch(/bad value often/);
    // The same list decoded again (new objects): the same shared result.
    expect(sharedConfigItems(structuredClone(items))).toBe(first);
    expect(Object.isFrozen(first.timers)).toBe(true);
    // Lists that would read the same if keys and values were only run together are kept apart.
    const a = sharedConfigItems([{ key: 'timer.config.interval', value: '120' }]);
    const b = sharedConfigItems([{ key: 'timer.config.interval1', value: '20' }]);
    expect(a).not.toBe(b);
    expect(a.timers.configIntervalS).toBe(120);
    expect(b.status.unknownConfigItems['timer.config.interval1']).toBeDefined();
    // Order matters as it does to EVE (a later item of the same key wins), and an empty list is the defaults.
    const twice = sharedConfigItems([
      { key: 'timer.config.interval', value: '70' },
      { key: 'timer.config.interval', value: '80' },
    ]);
    expect(twice.timers.configIntervalS).toBe(80);
    expect(sharedConfigItems([]).timers).toEqual(parseConfigItems([]).timers);
  });

  it('two devices sent the same configuration hold the same timers, item status and profile list', async () => {
    const config = {
      configItems: [
        { key: 'timer.config.interval', value: '90' },
        { key: 'not.a.known.key', value: 'x' },
      ],
      global_profile: 'field',
      apps: [
        {
          uuidandversion: { uuid: 'a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61', version: '1' },
          displayname: 'gateway',
          activate: true,
          profile_list: ['field', 'lab'],
        },
      ],
    };
    const devices = [rig({ seed: 1 }), rig({ seed: 2 })];
    for (const r of devices) {
      r.controller.config = structuredClone(config);
      await onboard(r);
    }
    const [a, b] = devices.map((r) => r.device.configState);
    expect(a!.timers.configIntervalS).toBe(90);
    expect(b!.timers).toBe(a!.timers);
    expect(a!.configItemStatus!.unknownConfigItems['not.a.known.key']).toBeDefined();
    expect(b!.configItemStatus).toBe(a!.configItemStatus);
    const appA = [...a!.apps.values()][0]!;
    const appB = [...b!.apps.values()][0]!;
    expect(appA.config.profiles).toEqual(['field', 'lab']);
    expect(appB.config.profiles).toBe(appA.config.profiles);
    // The app itself stays each device's own (its state changes).
    expect(appB.config).not.toBe(appA.config);

    // A device sent something else gets its own value, and the first keeps what it had.
    const c = rig({ seed: 3 });
    c.controller.config = { ...structuredClone(config), configItems: [{ key: 'timer.config.interval', value: '120' }] };
    await onboard(c);
    expect(c.device.configState.timers.configIntervalS).toBe(120);
    expect(a!.timers.configIntervalS).toBe(90);
  });

  it('a config that changes only an item replaces no app view or network instance state the device holds', async () => {
    const NI = '6f1d2c3b-0000-4000-8000-0000000000a1';
    const cfg = (interval: string): config.EdgeDevConfig => ({
      configItems: [{ key: 'timer.metric.interval', value: interval }],
      networkInstances: [{ uuidandversion: { uuid: NI, version: '1' }, displayname: 'local', activate: true }],
      apps: [
        {
          uuidandversion: { uuid: 'a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61', version: '1' },
          displayname: 'gateway',
          activate: true,
          profile_list: ['field'],
          interfaces: [{ networkId: NI }],
        },
      ],
    });
    const r = rig({ seed: 5 });
    r.controller.config = cfg('60');
    await onboard(r);
    const state = r.device.configState;
    const app = [...state.apps.values()][0]!;
    const view = app.config;
    const ni = state.networkInstances.get(NI);
    expect(ni).toBeDefined();

    r.device.applyConfig(cfg('120'), r.time.now());
    expect(state.timers.metricIntervalS).toBe(120);
    expect([...state.apps.values()][0]).toBe(app);
    expect(app.config).toBe(view);
    expect(state.networkInstances.get(NI)).toBe(ni);

    // A change to the app does replace its view, and one to the network instance its state.
    const changed = cfg('120');
    changed.apps![0]!.restart = { counter: 1 };
    changed.networkInstances![0]!.disable_flowlog = true;
    r.device.applyConfig(changed, r.time.now());
    expect(app.config).not.toBe(view);
    expect(app.config.restartCounter).toBe(1);
    expect(state.networkInstances.get(NI)).not.toBe(ni);
    expect(state.flowlogDisabled(NI)).toBe(true);
  });

  it("an app's volume and network references read the same through reapplies, missing ones included", async () => {
    const VOL = '6f1d2c3b-0000-4000-8000-000000000001';
    const NI = '6f1d2c3b-0000-4000-8000-0000000000a1';
    const MISSING = '6f1d2c3b-0000-4000-8000-00000000dead';
    const app = (version: string): config.AppInstanceConfig => ({
      uuidandversion: { uuid: 'a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61', version },
      displayname: 'gateway',
      activate: true,
      volumeRefList: [{ uuid: VOL }, { uuid: MISSING }],
      interfaces: [{ networkId: NI }],
    });
    const cfg = (version: string): config.EdgeDevConfig => ({
      volumes: [{ uuid: VOL, displayName: 'data', generationCount: 1 }],
      networkInstances: [{ uuidandversion: { uuid: NI, version: '1' }, displayname: 'local', activate: true }],
      apps: [app(version)],
    });
    const r = rig({ seed: 4 });
    r.controller.config = cfg('1');
    await onboard(r);
    const state = r.device.configState;
    const first = [...state.apps.values()][0]!;
    expect(first.config.volumeRefs).toEqual([VOL, MISSING]);
    expect(first.config.networks).toEqual([NI]);
    r.device.applyConfig(cfg('2'), r.time.now());
    const again = [...state.apps.values()];
    expect(again).toHaveLength(1);
    expect(again[0]).toBe(first); // the same app, updated
    expect(first.config.version).toBe('2');
    expect(first.config.uuid).toBe('a1f3c9d2-6e4b-4a8f-9c0d-2e7f1b3a5c61');
    expect(first.config.volumeRefs).toEqual([VOL, MISSING]);
    expect(first.config.networks).toEqual([NI]);
  });
});
