// The controller's registry survives a restart on the same state directory (registry-store.ts):
// a device registered, named and given a config change before the restart is still known after it
// (same UUID, repeat /register is 200 not 201, config by UUID authenticates, its token still opens
// /config, its counters continue), and a controller without persistence forgets it. An attestation
// nonce is not written: NONCE costs no database write, and a quote that crosses a restart gets
// NONCE_MISMATCH while the device's token stays good.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { attest } from '../src/gen/eve-types.js';
import { loadOrCreateControllerPki, type ControllerPki } from '../src/identity/controller-pki.js';
import { createDeviceIdentity, type DeviceIdentityMaterial } from '../src/identity/device-identity.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import { openUnverified, sealRequest } from '../src/protocol/envelope.js';
import { Msg } from '../src/protocol/messages.js';
import { ControllerCore } from '../src/servers/controller/controller-core.js';
import { resolveControllerOptions } from '../src/servers/controller/controller-options.js';
import { RegistryStore } from '../src/servers/controller/registry-store.js';
import { testGroup } from './fixtures/test-group.js';

const NOW = Date.now();
const dir = mkdtempSync(join(tmpdir(), 'evesim-registry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ca = createFleetCa('registry-store-test', NOW);
const dev: DeviceIdentityMaterial = createDeviceIdentity(ca, 'registry-store-test', 0, NOW).identity;
const P = '/api/v2/edgedevice';

function registerBody(d: DeviceIdentityMaterial): Uint8Array {
  const payload = Msg.ZRegisterMsg.encode({ pemCert: new Uint8Array(Buffer.from(Buffer.from(d.deviceCertPem).toString('base64'))), serial: d.serial, softSerial: d.softSerial });
  return sealRequest(payload, { key: d.onboardKey, certDerHash: d.onboardCertHash, senderCertB64Pem: d.onboardCertB64Pem });
}
const signed = (d: DeviceIdentityMaterial, payload: Uint8Array) => sealRequest(payload, { key: d.deviceKey, certDerHash: d.deviceCertHash });

function start(pki: ControllerPki, persist: boolean, stateDir = dir): ControllerCore {
  const options = resolveControllerOptions({ stateDir, onboardingCaPems: [ca.certPem], persistRegistry: persist });
  return new ControllerCore(options, pki, undefined, persist ? RegistryStore.open(stateDir) : undefined);
}

describe('controller registry across restarts', () => {
  it('keeps devices, UUIDs, tokens, overlays and counters; without persistence they are gone', async () => {
    const pki = loadOrCreateControllerPki(join(dir, 'pki'), { rootKeyType: 'ec' });
    const first = start(pki, true);
    first.registry.setFleet({ groups: [testGroup('edge', 1)], devices: [{ serial: dev.serial, group: 'edge' }] });
    expect(first.handle('POST', `${P}/register`, registerBody(dev)).status).toBe(201);
    const uuidReply = first.handle('POST', `${P}/uuid`, signed(dev, Msg.UuidRequest.encode({})));
    expect(uuidReply.status).toBe(200);
    const uuid = Msg.UuidResponse.decode(openUnverified(uuidReply.body!).payload).uuid;
    const rec = first.registry.byDeviceUuid(uuid!)!;
    // The token a quote would have issued, saved as an attest request saves it.
    rec.attestState().integrityToken = new Uint8Array([1, 2, 3, 4]);
    rec.attestState().attested = true;
    first.store!.attestChanged(rec);
    const group = first.registry.group('edge')!;
    group.overlay.reboot = 2;
    first.store!.groupOverlayChanged('edge', group.overlay);
    const configBody = signed(dev, Msg.ConfigRequest.encode({ configHash: '', integrity_token: new Uint8Array([1, 2, 3, 4]) }));
    const before = first.handle('POST', `${P}/id/${uuid}/config`, configBody);
    expect(before.status).toBe(200);
    const hashBefore = Msg.ConfigResponse.decode(openUnverified(before.body!).payload).configHash;
    await first.store!.close();

    const second = start(pki, true);
    const again = second.registry.find(dev.serial)!;
    expect(again.uuid).toBe(uuid);
    expect(again.group.name).toBe('edge');
    expect(again.attest?.attested).toBe(true);
    expect(again.counters.requestsTo('register')).toBe(1);
    expect(again.counters.requestsTo('config')).toBe(1);
    // The token still opens /config and the config (with the group's overlay) hashes the same.
    const after = second.handle('POST', `${P}/id/${uuid}/config`, configBody);
    expect(after.status).toBe(200);
    expect(Msg.ConfigResponse.decode(openUnverified(after.body!).payload).configHash).toBe(hashBefore);
    expect(second.handle('POST', `${P}/register`, registerBody(dev)).status).toBe(200);
    expect(second.registry.size).toBe(1);
    await second.store!.close();

    const forgetful = start(pki, false);
    expect(forgetful.registry.find(dev.serial)).toBeUndefined();
    expect(forgetful.handle('POST', `${P}/id/${uuid}/config`, configBody).status).toBe(400);
  });

  it('writes no attestation nonce: NONCE costs no write, and a quote across a restart gets NONCE_MISMATCH', async () => {
    const stateDir = join(dir, 'nonce');
    const pki = loadOrCreateControllerPki(join(stateDir, 'pki'), { rootKeyType: 'ec' });
    const d = createDeviceIdentity(ca, 'registry-store-nonce', 0, NOW).identity;
    const Req = attest.ZAttestReqType;
    const Code = attest.ZAttestResponseCode;
    let core = start(pki, true, stateDir);
    core.registry.setFleet({ groups: [testGroup('edge', 1)], devices: [{ serial: d.serial, group: 'edge' }] });
    expect(core.handle('POST', `${P}/register`, registerBody(d)).status).toBe(201);
    const uuid = Msg.UuidResponse.decode(openUnverified(core.handle('POST', `${P}/uuid`, signed(d, Msg.UuidRequest.encode({}))).body!).payload).uuid!;
    const attestReq = (c: ControllerCore, req: attest.ZAttestReq) => {
      const reply = c.handle('POST', `${P}/id/${uuid}/attest`, signed(d, Msg.ZAttestReq.encode(req)));
      expect(reply.status).toBe(201);
      return Msg.ZAttestResponse.decode(openUnverified(reply.body!).payload);
    };
    const writes = vi.spyOn(core.store!, 'attestChanged');
    attestReq(core, { reqType: Req.ATTEST_REQ_NONCE });
    expect(writes).not.toHaveBeenCalled();
    // An empty quote is "TPM disabled": SUCCESS and a token, which is written.
    const ok = attestReq(core, { reqType: Req.ATTEST_REQ_QUOTE, quote: {} }).quoteResp!;
    expect(ok.response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
    expect(writes).toHaveBeenCalledTimes(1);
    const token = ok.integrity_token!;
    // A new cycle's nonce is outstanding when the controller stops.
    attestReq(core, { reqType: Req.ATTEST_REQ_NONCE });
    expect(core.registry.byDeviceUuid(uuid)!.attest!.nonce).toBeDefined();
    expect(writes).toHaveBeenCalledTimes(1);
    await core.store!.close();

    core = start(pki, true, stateDir);
    expect(core.registry.byDeviceUuid(uuid)!.attest!.nonce).toBeUndefined();
    const configBody = signed(d, Msg.ConfigRequest.encode({ configHash: '', integrity_token: token }));
    expect(core.handle('POST', `${P}/id/${uuid}/config`, configBody).status).toBe(200);
    expect(attestReq(core, { reqType: Req.ATTEST_REQ_QUOTE, quote: {} }).quoteResp!.response).toBe(Code.Z_ATTEST_RESPONSE_CODE_NONCE_MISMATCH);
    // The device asks for a new nonce (EVE does so after its 15 s restart wait) and attests.
    attestReq(core, { reqType: Req.ATTEST_REQ_NONCE });
    expect(attestReq(core, { reqType: Req.ATTEST_REQ_QUOTE, quote: {} }).quoteResp!.response).toBe(Code.Z_ATTEST_RESPONSE_CODE_SUCCESS);
    await core.store!.close();
  });
});
