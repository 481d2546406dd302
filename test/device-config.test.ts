import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { attest, certs, info } from '../src/gen/eve-types.js';
import { Msg } from '../src/protocol/messages.js';
import { T0, onboard, payloadOf, rig, type Rig } from './device-harness.js';

const configRequests = (r: Rig) => r.controller.of('config').map((q) => ({ at: q.at, req: Msg.ConfigRequest.decode(payloadOf(r, q)) }));
const attestRequests = (r: Rig) => r.controller.of('attest').map((q) => ({ at: q.at, req: Msg.ZAttestReq.decode(payloadOf(r, q)) }));

describe('virtual device attestation (§5.3, §5.4)', () => {
  it('posts its certificates, gets a nonce, sends an empty quote and uses the integrity token', async () => {
    const r = rig();
    r.controller.latencyMs = 50;
    await onboard(r);
    const reqs = attestRequests(r);
    expect(reqs.map((x) => x.req.reqType)).toEqual([
      attest.ZAttestReqType.ATTEST_REQ_CERT,
      attest.ZAttestReqType.ATTEST_REQ_NONCE,
      attest.ZAttestReqType.ATTEST_REQ_QUOTE,
    ]);
    const id = r.controller.identity;
    const sent = reqs[0]!.req.certs!;
    expect(sent.map((c) => c.type)).toEqual([certs.ZCertType.CERT_TYPE_DEVICE_ECDH_EXCHANGE, certs.ZCertType.CERT_TYPE_DEVICE_RESTRICTED_SIGNING]);
    for (const [c, pem] of [
      [sent[0]!, id.ecdhCertPem],
      [sent[1]!, id.attestCertPem],
    ] as const) {
      expect(c.hashAlgo).toBe(1);
      expect(Buffer.from(c.certHash!)).toEqual(createHash('sha256').update(pem).digest().subarray(0, 16));
      expect(Buffer.from(c.cert!).toString()).toBe(pem);
      expect(c.attributes ?? undefined).toBeUndefined();
    }
    const quote = reqs[2]!.req.quote!;
    expect(quote.attestData ?? new Uint8Array(0)).toHaveLength(0);
    expect(quote.signature ?? new Uint8Array(0)).toHaveLength(0);
    expect(quote.pcr_values ?? []).toHaveLength(0);
    expect(quote.versions).toEqual([{ version_type: attest.AttestVersionType.ATTEST_VERSION_TYPE_EVE, version: '14.5.2-kvm-amd64' }]);

    // The first poll goes out with the nonce request, before the token: 403, and no restart
    // (no quote sent yet); later polls present the token.
    const cfg = configRequests(r);
    expect(cfg[0]!.at).toBe(r.controller.of('attest')[1]!.at);
    expect(cfg[0]!.req.integrity_token ?? new Uint8Array(0)).toHaveLength(0);
    expect(r.device.stats().endpoints.config!.clientError).toBe(1);
    expect(attestRequests(r)).toHaveLength(3);
    const last = cfg[cfg.length - 1]!;
    expect(Buffer.from(last.req.integrity_token!)).toEqual(Buffer.from(r.controller.token));
    expect(r.device.attestationState).toBe(info.AttestationState.ATTESTATION_STATE_COMPLETE);
    expect(r.device.lifecycle).toBe('onboarded');
    // The device info reports the attestation state.
    const dinfo = r.controller.infos().filter((m) => m.dinfo).pop()!;
    expect(dinfo.dinfo!.attestation_info!.state).toBe(info.AttestationState.ATTESTATION_STATE_COMPLETE);
  });

  it('restarts attestation 15 s after a config 403 once a quote was sent', async () => {
    const r = rig();
    await onboard(r);
    const attestsBefore = attestRequests(r).length;
    r.controller.requireToken = true;
    (r.controller as { token: Uint8Array }).token.fill(0x62); // controller forgot the token
    const t403 = r.controller.of('config').length;
    await r.time.advance(60_000);
    const forbiddenAt = r.controller.of('config')[t403]!.at;
    const nonce = attestRequests(r).slice(attestsBefore).find((x) => x.req.reqType === attest.ZAttestReqType.ATTEST_REQ_NONCE)!;
    expect(nonce.at - forbiddenAt).toBe(15_000);
    // The new quote succeeds with the controller's (new) token, which the next poll carries.
    await r.time.advance(120_000);
    const last = configRequests(r).pop()!;
    expect(Buffer.from(last.req.integrity_token!)).toEqual(Buffer.from(r.controller.token));
    expect(r.device.attestationState).toBe(info.AttestationState.ATTESTATION_STATE_COMPLETE);
  });

  it('a config 403 that comes while the first quote is in flight restarts attestation only after the quote is answered', async () => {
    // The storm case: the first poll (sent with the nonce request, no token) is answered 403 only
    // after the quote went out. EVE's attestation FSM handles the restart after the quote's answer,
    // so the device gets its token and COMPLETE at once, and re-attests 15 s later; it does not
    // drop the SUCCESS and wait 15 s for a token (which left the last devices of a storm trailing).
    const box: { r?: Rig } = {};
    const delayMs = (endpoint: string, body: Uint8Array | undefined): number => {
      if (endpoint === 'config') return 30;
      if (endpoint !== 'attest') return 0;
      const t = Msg.ZAttestReq.decode(payloadOf(box.r!, { endpoint: 'attest', body } as never)).reqType;
      return t === attest.ZAttestReqType.ATTEST_REQ_QUOTE ? 100 : 0;
    };
    const r = rig({
      options: {
        transport: {
          request: async (req) => {
            const d = delayMs(req.endpoint, req.body);
            const t = box.r!.time;
            if (d > 0) await new Promise<void>((resolve) => t.at(t.now() + d, () => resolve()));
            return box.r!.controller.request(req);
          },
        },
      },
    });
    box.r = r;
    r.device.start();
    await r.time.advance(1_000);
    const seq = attestRequests(r).filter((x) => x.req.reqType !== attest.ZAttestReqType.ATTEST_REQ_CERT);
    // Recorded when they reach the controller: the quote went out at 20 ms and arrives at 120 ms.
    expect(seq.map((x) => [x.req.reqType, x.at - T0])).toEqual([
      [attest.ZAttestReqType.ATTEST_REQ_NONCE, 0],
      [attest.ZAttestReqType.ATTEST_REQ_QUOTE, 120],
    ]);
    expect(r.controller.of('config')[0]!.at - T0).toBe(30);
    // The 403 (at 30 ms) came before the quote's answer (at 120 ms): the token is the device's all the same.
    expect(r.device.stats().endpoints.config!.clientError).toBe(1);
    expect(r.lifecycle).toContain('onboarded');
    expect(Buffer.from(r.device.integrityToken!)).toEqual(Buffer.from(r.controller.token));
    expect(r.device.attestationState).toBe(info.AttestationState.ATTESTATION_STATE_RESTART_WAIT);
    // Then the restart: a new nonce 15 s after the quote's answer.
    await r.time.advance(20_000);
    const nonces = attestRequests(r).filter((x) => x.req.reqType === attest.ZAttestReqType.ATTEST_REQ_NONCE).map((x) => x.at - T0);
    expect(nonces).toEqual([0, 15_120]);
    expect(r.device.attestationState).toBe(info.AttestationState.ATTESTATION_STATE_COMPLETE);
  });

  it('before any quote, a config 403 is only a failed fetch', async () => {
    const r = rig();
    // Quotes never answered: attestation never gets past ATTEST_WAIT, config keeps answering 403.
    r.controller.hook = (q) => {
      if (q.endpoint !== 'attest') return undefined;
      const req = Msg.ZAttestReq.decode(payloadOf(r, q));
      return req.reqType === attest.ZAttestReqType.ATTEST_REQ_NONCE ? { status: 503, headers: {}, body: new Uint8Array(0) } : undefined;
    };
    r.device.start();
    await r.time.advance(100_000);
    const nonces = attestRequests(r).filter((x) => x.req.reqType === attest.ZAttestReqType.ATTEST_REQ_NONCE).map((x) => x.at - T0);
    // Nonce retried every 15 s, not restarted by the 403s.
    expect(nonces.slice(0, 4)).toEqual([0, 15_000, 30_000, 45_000]);
    expect(r.device.attestationState).toBe(info.AttestationState.ATTESTATION_STATE_NONCE_WAIT);
    expect(r.device.stats().endpoints.config!.clientError).toBe(r.controller.of('config').length);
  });
  it('re-posts its certificates 10 s after a refused post, until one is accepted', async () => {
    const r = rig();
    let refuse = 2;
    r.controller.hook = (q) => {
      if (q.endpoint !== 'attest' || Msg.ZAttestReq.decode(payloadOf(r, q)).reqType !== attest.ZAttestReqType.ATTEST_REQ_CERT) return undefined;
      return refuse-- > 0 ? { status: 500, headers: {}, body: new Uint8Array(0) } : undefined;
    };
    r.device.start();
    await r.time.advance(60_000);
    const certPosts = attestRequests(r).filter((x) => x.req.reqType === attest.ZAttestReqType.ATTEST_REQ_CERT).map((x) => x.at - T0);
    expect(certPosts).toEqual([0, 10_000, 20_000]);
  });

  it('restarts with a new nonce after NONCE_MISMATCH, and resends the quote with the same nonce after INVALID', async () => {
    const r = rig();
    const codes = [attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_NONCE_MISMATCH, attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_INVALID];
    r.controller.hook = (q) => {
      if (q.endpoint !== 'attest' || Msg.ZAttestReq.decode(payloadOf(r, q)).reqType !== attest.ZAttestReqType.ATTEST_REQ_QUOTE) return undefined;
      const code = codes.shift();
      if (code === undefined) return undefined;
      const body = r.controller.seal(Msg.ZAttestResponse.encode({ respType: attest.ZAttestRespType.ATTEST_RESP_QUOTE_RESP, quoteResp: { response: code } }));
      return { status: 201, headers: {}, body };
    };
    // Config answers without the token here, so no config 403 restarts attestation in between.
    r.controller.requireToken = false;
    r.device.start();
    await r.time.advance(60_000);
    const seq = attestRequests(r)
      .filter((x) => x.req.reqType !== attest.ZAttestReqType.ATTEST_REQ_CERT)
      .map((x) => [x.req.reqType === attest.ZAttestReqType.ATTEST_REQ_NONCE ? 'nonce' : 'quote', x.at - T0]);
    // Each quote follows its nonce after the simulated tpmmgr time (NO_TPM_QUOTE_MS = 20 ms).
    expect(seq).toEqual([
      ['nonce', 0],
      ['quote', 20], // NONCE_MISMATCH → RESTART_WAIT 15 s
      ['nonce', 15_020],
      ['quote', 15_040], // INVALID → same nonce again in 15 s
      ['quote', 30_040], // SUCCESS
    ]);
    expect(r.device.attestationState).toBe(info.AttestationState.ATTESTATION_STATE_COMPLETE);
  });
});

describe('virtual device configuration (§3)', () => {
  it('polls immediately, then every [0.3, 1.0] × 60 s; 304 and a known hash are "unchanged"', async () => {
    const r = rig();
    r.controller.config = { id: { uuid: r.controller.deviceUuid, version: '1' }, device_name: 'edge-1' };
    await onboard(r);
    const hash = r.controller.configHash;
    expect(r.device.configHash).toBe(hash);
    const n = r.controller.of('config').length;
    await r.time.advance(600_000);
    const polls = configRequests(r);
    const gaps = polls.slice(1).map((p, i) => p.at - polls[i]!.at);
    for (const g of gaps.slice(n)) {
      expect(g).toBeGreaterThanOrEqual(18_000);
      expect(g).toBeLessThanOrEqual(60_000);
    }
    // After the first 200 the device sends the hash and gets 304s.
    expect(polls.slice(n).every((p) => p.req.configHash === hash)).toBe(true);
    // A 200 carrying the same hash is "unchanged": nothing re-applied, no new device info.
    r.controller.hook = (q) =>
      q.endpoint === 'config'
        ? { status: 200, headers: {}, body: r.controller.seal(Msg.ConfigResponse.encode({ config: { device_name: 'other' }, configHash: hash })) }
        : undefined;
    await r.time.advance(900_000); // also past a periodic ZInfoDevice (600 s ± 20 %)
    expect(r.device.configHash).toBe(hash);
    // The device name from the applied configuration is echoed; the "other" body was never applied.
    const names = r.controller.infos().filter((m) => m.dinfo).map((m) => m.dinfo!.device_name);
    expect(names[names.length - 1]).toBe('edge-1');
    expect(names).not.toContain('other');
  });

  it('follows timer.config.interval: 10 s gives polls [3 s, 10 s] apart', async () => {
    const r = rig();
    r.controller.config = { configItems: [{ key: 'timer.config.interval', value: '10' }] };
    await onboard(r);
    const from = r.controller.of('config').length;
    await r.time.advance(300_000);
    const at = r.controller.of('config').map((q) => q.at).slice(from - 1);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(gaps.length).toBeGreaterThan(25);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(3_000);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(10_000);
    // The device reports the item as accepted.
    const dinfo = r.controller.infos().filter((m) => m.dinfo).pop()!;
    expect(dinfo.dinfo!.configItemStatus!.configItems!['timer.config.interval']).toEqual({ value: '10' });
  });

  it('reports a garbage config body and a wrong signature as findings and carries on', async () => {
    const r = rig();
    await onboard(r);
    const mode = { n: 0 };
    r.controller.config = { device_name: 'after' };
    r.controller.hook = (q) => {
      if (q.endpoint !== 'config') return undefined;
      mode.n++;
      if (mode.n === 1) return { status: 200, headers: {}, body: new Uint8Array([0xff, 0xff, 0xff, 0x01]) };
      if (mode.n === 2) {
        const good = Msg.AuthContainer.decode(r.controller.seal(Msg.ConfigResponse.encode({ config: r.controller.config, configHash: 'x' })));
        good.signatureHash![5]! ^= 0x55;
        return { status: 200, headers: {}, body: Msg.AuthContainer.encode(good) };
      }
      if (mode.n === 3) return { status: 200, headers: {}, body: r.controller.seal(new Uint8Array([0x12, 0xff])) };
      return undefined;
    };
    await r.time.advance(240_000);
    const kinds = r.findings.filter((f) => f.endpoint === 'config').map((f) => f.kind);
    expect(kinds.slice(0, 3)).toEqual(['bad-envelope', 'bad-signature', 'undecodable-body']);
    // Each detail says what was wrong with which message.
    const details = r.findings.filter((f) => f.endpoint === 'config').map((f) => f.detail);
    expect(details[0]).toMatch(/body is not an AuthContainer/);
    expect(details[1]).toMatch(/does not verify with the controller signing key/);
    expect(details[2]).toMatch(/^ConfigResponse \(2 bytes\) does not decode: /);
    expect(r.device.stats().endpoints.config!.rejected).toBe(3);
    expect(r.device.stats().internalErrors).toBe(0);
    // The fourth poll gets the real configuration.
    expect(r.device.configHash).toBe(r.controller.configHash);
  });

  it('refetches /certs when controllercert_confighash changes, and after a cert miss', async () => {
    const r = rig();
    r.controller.config = { controllercert_confighash: 'h1' };
    await onboard(r);
    const certs0 = r.controller.of('certs').length;
    // First value seen also differs from the empty in-memory value (EVE refetches then too).
    expect(certs0).toBe(2);
    r.controller.config = { controllercert_confighash: 'h1', device_name: 'x' };
    await r.time.advance(120_000);
    expect(r.controller.of('certs').length).toBe(certs0);
    r.controller.config = { controllercert_confighash: 'h2' };
    await r.time.advance(120_000);
    expect(r.controller.of('certs').length).toBe(certs0 + 1);

    // A config answer naming another signing certificate: cert miss → /certs again after 1 s.
    r.controller.hook = (q) => {
      if (q.endpoint !== 'config') return undefined;
      const c = Msg.AuthContainer.decode(r.controller.seal(Msg.ConfigResponse.encode({ configHash: 'zz' })));
      c.senderCertHash = new Uint8Array(32).fill(9);
      r.controller.hook = undefined;
      return { status: 200, headers: {}, body: Msg.AuthContainer.encode(c) };
    };
    const before = r.controller.of('certs').length;
    await r.time.advance(61_000);
    const miss = r.findings.find((f) => f.kind === 'unknown-signer')!;
    expect(miss.endpoint).toBe('config');
    expect(r.controller.of('certs').length).toBe(before + 1);
  });

  it('re-publishes all info when controller_epoch changes', async () => {
    const r = rig();
    const app = '11111111-2222-4333-8444-555555555555';
    r.controller.config = {
      controller_epoch: 1,
      apps: [{ uuidandversion: { uuid: app, version: '1' }, displayname: 'nginx', activate: true }],
      networkInstances: [{ uuidandversion: { uuid: 'aaaaaaaa-0000-4000-8000-000000000001', version: '1' }, displayname: 'ni', activate: true }],
    };
    await onboard(r);
    await r.time.advance(60_000); // app settles, queue drains
    const before = r.controller.infos().length;
    r.controller.config = { ...r.controller.config, controller_epoch: 2 };
    await r.time.advance(60_000);
    const after = r.controller.infos().slice(before);
    expect(after.some((m) => m.dinfo)).toBe(true);
    expect(after.some((m) => m.ainfo?.AppID === app && m.ainfo.state === info.ZSwState.RUNNING)).toBe(true);
    expect(after.some((m) => m.niinfo?.networkID === 'aaaaaaaa-0000-4000-8000-000000000001')).toBe(true);
  });

  it('looks the UUID up again after config 404, at most every 10 minutes and not in the first 10 after boot', async () => {
    const r = rig();
    await onboard(r);
    const uuids = r.controller.of('uuid').length;
    const onboardedAt = r.controller.of('uuid')[uuids - 1]!.at;
    r.controller.hook = (q) => (q.endpoint === 'config' ? { status: 404, headers: {}, body: new Uint8Array(0) } : undefined);
    await r.time.advance(25 * 60_000);
    const again = r.controller.of('uuid').slice(uuids);
    expect(again).toHaveLength(2);
    // EVE's lastDevUUIDChange starts at zedagent's start: no lookup in the first 10 minutes (§13.5).
    expect(again[0]!.at - onboardedAt).toBeGreaterThanOrEqual(10 * 60_000);
    expect(again[1]!.at - again[0]!.at).toBeGreaterThanOrEqual(10 * 60_000);
    expect(r.device.uuid).toBe(r.controller.deviceUuid);
    // A device that has a UUID never registers again on its own (§13.5): one /register, at onboarding.
    expect(r.controller.of('register')).toHaveLength(1);
  });

  it('publishes ZInfoDevice every [0.8, 1.2] × timer.deviceinfo.interval', async () => {
    const r = rig();
    r.controller.config = { configItems: [{ key: 'timer.deviceinfo.interval', value: '60' }] };
    await onboard(r);
    await r.time.advance(60_000);
    const from = r.controller.infos().length;
    await r.time.advance(1_200_000);
    const at = r.controller.of('info').slice(from).map((q) => q.at);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(gaps.length).toBeGreaterThan(15);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(48_000);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(72_000);
  });

  it('survives a listener that throws, counting it as an internal error', async () => {
    const r = rig();
    (r.device.opts as { onFinding?: unknown }).onFinding = () => {
      throw new Error('listener bug');
    };
    r.controller.hook = (q) => (q.endpoint === 'ping' ? { status: 500, headers: {}, body: new Uint8Array(0) } : undefined);
    r.device.start();
    await r.time.advance(10_000);
    expect(r.device.uuid).toBe(r.controller.deviceUuid);
    expect(r.device.stats().internalErrors).toBeGreaterThan(0);
    expect(r.device.stats().findings).toBeGreaterThan(0);
  });
});
