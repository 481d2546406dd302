// How many times the controller builds a device's config (EdgeDevConfig built, encoded and hashed).
// A device polling with a stale hash makes the config handler ask for the current hash and then for
// the config to send; after a config change both used to build, so a fleet-wide change cost every
// device two builds. ConfigService keeps its last build, so it is one, in the verifying handler and
// in the sink, and the kept build never answers another device or a later version.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createControllerPki } from '../src/identity/controller-pki.js';
import { createDeviceIdentity, type DeviceIdentityMaterial } from '../src/identity/device-identity.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import { openUnverified, sealRequest } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import { applyConfigPatch, parseConfigPatch } from '../src/servers/controller/config-overlay.js';
import { ControllerCore } from '../src/servers/controller/controller-core.js';
import { resolveControllerOptions } from '../src/servers/controller/controller-options.js';
import { SINK_INTEGRITY_TOKEN } from '../src/servers/controller/sink-responder.js';
import { testGroup } from './fixtures/test-group.js';

const NOW = Date.now();
const P = '/api/v2/edgedevice';
const TOKEN = new Uint8Array([9, 8, 7, 6]);
const dir = mkdtempSync(join(tmpdir(), 'evesim-config-builds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ca = createFleetCa('config-builds', NOW);
const devs: DeviceIdentityMaterial[] = [0, 1].map((i) => createDeviceIdentity(ca, 'config-builds', i, NOW).identity);
const signed = (d: DeviceIdentityMaterial, payload: Uint8Array) => sealRequest(payload, { key: d.deviceKey, certDerHash: d.deviceCertHash });

/** A controller with both devices pre-registered in group 'edge' and holding an integrity token. */
function controller(name: string, sink: boolean): { core: ControllerCore; uuids: string[]; token: Uint8Array } {
  const stateDir = join(dir, name);
  const core = new ControllerCore(
    resolveControllerOptions({
      stateDir,
      onboardingCaPems: [ca.certPem],
      ...(sink ? { sink: { verifySample: 1 } } : {}),
      fleet: {
        groups: [testGroup('edge', 2, { apps: [{ name: 'web', activate: true, profiles: [], logLinesPerSec: 0, flowsPerMessage: 0 }] })],
        devices: devs.map((d) => ({ serial: d.serial, group: 'edge', deviceCertPem: d.deviceCertPem })),
      },
    }),
    { ...createControllerPki({ nowMs: NOW }), dir: stateDir },
  );
  const uuids = devs.map((d) => core.registry.find(d.serial)!.uuid);
  const token = sink ? SINK_INTEGRITY_TOKEN : TOKEN;
  if (!sink) for (const u of uuids) core.registry.byDeviceUuid(u)!.attestState().integrityToken = TOKEN;
  return { core, uuids, token };
}

/** One config poll: the status, and the served config's hash and config when there is one. */
function poll(core: ControllerCore, i: number, uuid: string, hash: string, token: Uint8Array) {
  const r = core.handle('POST', `${P}/id/${uuid}/config`, signed(devs[i]!, Msg.ConfigRequest.encode({ configHash: hash, integrity_token: token })));
  const resp = r.status === 200 ? Msg.ConfigResponse.decode(openUnverified(r.body!).payload) : undefined;
  return { status: r.status, hash: resp?.configHash ?? '', config: resp?.config };
}

describe.each([
  ['verifying controller', false],
  ['sink controller', true],
])('config builds, %s', (name, sink) => {
  it('builds a config once per device and change, never from another device or version', () => {
    const { core, uuids, token } = controller(name.replace(' ', '-'), sink);
    const configs = core.configs;
    const builds = (): number => configs.builds;

    const first = poll(core, 0, uuids[0]!, '', token);
    expect(first.status).toBe(200);
    expect(builds()).toBe(1);
    expect(poll(core, 0, uuids[0]!, first.hash, token).status).toBe(304);
    expect(builds()).toBe(1);

    // A config change: the device polls with its old hash, gets the new config, built once.
    const group = core.registry.group('edge')!;
    applyConfigPatch(group.overlay, parseConfigPatch({ configItems: { 'timer.metric.interval': '120' } }, group.appNames));
    const changed = poll(core, 0, uuids[0]!, first.hash, token);
    expect(changed.status).toBe(200);
    expect(changed.hash).not.toBe(first.hash);
    expect(changed.config?.configItems).toContainEqual({ key: 'timer.metric.interval', value: '120' });
    expect(changed.hash).toBe(configs.currentHash(core.registry.byDeviceUuid(uuids[0]!)!));
    expect(builds()).toBe(2);
    expect(poll(core, 0, uuids[0]!, changed.hash, token).status).toBe(304);

    // The other device gets its own config (its UUID), built for it.
    const other = poll(core, 1, uuids[1]!, 'stale', token);
    expect(other.status).toBe(200);
    expect(other.config?.id?.uuid).toBe(uuids[1]);
    expect(builds()).toBe(3);

    // A second change: the kept build is of the old version, so it is built again.
    applyConfigPatch(group.overlay, parseConfigPatch({ configItems: { 'timer.metric.interval': '180' } }, group.appNames));
    const again = poll(core, 1, uuids[1]!, other.hash, token);
    expect(again.config?.configItems).toContainEqual({ key: 'timer.metric.interval', value: '180' });
    expect(again.config?.id?.uuid).toBe(uuids[1]);
    expect(builds()).toBe(4);
  });
});
