// The small pieces of API v1 on their own: how devices spell v1 paths, what the device dialect puts
// on the wire (paths, bodies, client certificates, the GET /config adaptation), which paths the
// controller's v1 router accepts, the API label of a request, and `{api:…}` threshold tags.

import { describe, expect, it } from 'vitest';
import { ApiV1Dialect } from '../src/device/sender/api-v1-dialect.js';
import { apiLabelOf } from '../src/protocol/api-version.js';
import { configHashOfBytes } from '../src/protocol/config-response-bytes.js';
import { v2Path } from '../src/protocol/endpoints.js';
import { Msg } from '../src/protocol/messages.js';
import { v1Path } from '../src/protocol/v1-endpoints.js';
import { parseThreshold } from '../src/scenario/parse-threshold.js';
import { matchV1Route } from '../src/servers/controller/v1-route.js';

const DEV = '6ae3b91c-2f4d-4c8e-9b57-0d1e2f3a4b5c';
const APP = '0b9a3f52-1c2d-4e5f-8a9b-0c1d2e3f4a5b';

describe('v1 paths as devices send them', () => {
  it('puts actions right under /api/v1/edgedevice/, attest under id/{uuid}, app logs as Adam routes them', () => {
    expect(v1Path('register')).toBe('/api/v1/edgedevice/register');
    expect(v1Path('config')).toBe('/api/v1/edgedevice/config');
    expect(v1Path('info')).toBe('/api/v1/edgedevice/info');
    expect(v1Path('attest', DEV)).toBe(`/api/v1/edgedevice/id/${DEV}/attest`);
    expect(v1Path('applogs', DEV, APP)).toBe(`/api/v1/edgedevice/apps/instances/id/${APP}/logs`);
    expect(v1Path('appnewlogs', DEV, APP)).toBe(`/api/v1/edgedevice/apps/instanceid/id/${APP}/newlogs`);
    expect(() => v1Path('attest')).toThrow(/device UUID/);
  });
});

describe('ApiV1Dialect', () => {
  it('re-spells the v2 requests of the device parts as v1, with bare bodies', () => {
    const d = new ApiV1Dialect();
    const body = new Uint8Array([1, 2, 3]);
    expect(d.request('metrics', 'POST', v2Path('metrics', DEV), body)).toEqual({ method: 'POST', path: '/api/v1/edgedevice/metrics', body, clientCert: 'device' });
    expect(d.request('attest', 'POST', v2Path('attest', DEV), body).path).toBe(`/api/v1/edgedevice/id/${DEV}/attest`);
    expect(d.request('applogs', 'POST', v2Path('applogs', DEV, APP), body).path).toBe(`/api/v1/edgedevice/apps/instances/id/${APP}/logs`);
    expect(d.request('appnewlogs', 'POST', v2Path('appnewlogs', DEV, APP), body).path).toBe(`/api/v1/edgedevice/apps/instanceid/id/${APP}/newlogs`);
    expect(d.request('certs', 'GET', v2Path('certs'), undefined).path).toBe('/api/v1/edgedevice/certs');
    expect(d.payload('info', body)).toBe(body);
  });

  it('uses the onboarding certificate for register, and for ping until registered', () => {
    const d = new ApiV1Dialect();
    expect(d.clientCertFor('register')).toBe('onboarding');
    expect(d.clientCertFor('ping')).toBe('onboarding');
    expect(d.clientCertFor('config')).toBe('device');
    d.onAnswer('register', 409);
    expect(d.clientCertFor('ping')).toBe('onboarding');
    d.onAnswer('register', 201);
    expect(d.clientCertFor('ping')).toBe('device');
    expect(d.clientCertFor('register')).toBe('onboarding');
    expect(new ApiV1Dialect('POST', true).clientCertFor('ping')).toBe('device');
  });

  it('turns config into the deprecated GET when asked, and its bare EdgeDevConfig into a ConfigResponse', () => {
    const d = new ApiV1Dialect('GET');
    const wire = d.request('config', 'POST', v2Path('config', DEV), Msg.ConfigRequest.encode({ configHash: 'x' }));
    expect(wire).toEqual({ method: 'GET', path: '/api/v1/edgedevice/config', body: undefined, clientCert: 'device' });
    const cfg = Msg.EdgeDevConfig.encode({ id: { uuid: DEV, version: '3' } });
    const resp = Msg.ConfigResponse.decode(d.payload('config', cfg));
    expect(resp.config?.id?.uuid).toBe(DEV);
    expect(resp.configHash).toBe(configHashOfBytes(cfg));
    // POST mode leaves config answers alone.
    expect(new ApiV1Dialect('POST').payload('config', cfg)).toBe(cfg);
  });
});

describe('the controller v1 router', () => {
  it("serves the document's paths and Adam's, under both spellings of the prefix", () => {
    expect(matchV1Route('GET', '/api/v1/edgeDevice/ping')).toEqual({ endpoint: 'ping' });
    expect(matchV1Route('GET', '/api/v1/edgedevice/config')).toEqual({ endpoint: 'config', getConfig: true });
    expect(matchV1Route('POST', '/api/v1/edgedevice/config?x=1')).toEqual({ endpoint: 'config' });
    expect(matchV1Route('POST', `/api/v1/edgeDevice/id/${DEV}/attest`)).toEqual({ endpoint: 'attest', deviceUuid: DEV });
    expect(matchV1Route('POST', '/api/v1/edgedevice/attest')).toEqual({ endpoint: 'attest' });
    expect(matchV1Route('POST', `/api/v1/edgedevice/apps/instances/${APP}/logs`)).toEqual({ endpoint: 'applogs', appUuid: APP });
    expect(matchV1Route('POST', `/api/v1/edgedevice/apps/instances/id/${APP}/logs`)).toEqual({ endpoint: 'applogs', appUuid: APP });
    expect(matchV1Route('POST', `/api/v1/edgedevice/apps/instanceid/id/${APP}/newlogs`)).toEqual({ endpoint: 'appnewlogs', appUuid: APP });
    expect(matchV1Route('POST', '/api/v1/edgedevice/uuid')).toEqual({ endpoint: 'uuid' });
    for (const [m, p] of [
      ['GET', '/api/v1/edgedevice/register'],
      ['POST', '/api/v1/edgedevice/ping'],
      ['GET', '/api/v1/EDGEDEVICE/ping'],
      ['GET', '/api/v2/edgedevice/ping'],
      ['POST', `/api/v1/edgedevice/apps/instances/${APP}/newlogs`],
      ['POST', '/api/v1/edgedevice/ext/thing'],
      ['POST', '/api/v1/edgedevice//info'],
    ] as const) {
      expect(matchV1Route(m, p), `${m} ${p}`).toBeUndefined();
    }
  });
});

describe('API labels and {api:…} thresholds', () => {
  it('labels requests by their path, local profile server requests as lps', () => {
    expect(apiLabelOf('config', '/api/v1/edgedevice/config')).toBe('v1');
    expect(apiLabelOf('config', `/api/v2/edgedevice/id/${DEV}/config`)).toBe('v2');
    expect(apiLabelOf('lps.radio', '/api/v1/radio')).toBe('lps');
  });

  it('parses the tag and refuses what has no per-API figures', () => {
    expect(parseThreshold('config{api:v1}.p99 < 1s')).toMatchObject({ subject: 'config', stat: 'p99', api: 'v1', value: 1000 });
    expect(parseThreshold('onboarded{ api : v2 }.ratio == 1')).toMatchObject({ subject: 'onboarded', api: 'v2' });
    expect(parseThreshold('config.p99 < 1s').api).toBeUndefined();
    expect(() => parseThreshold('config{api:v3}.p99 < 1s')).toThrow(/v1 or v2/);
    expect(() => parseThreshold('config{node:v1}.p99 < 1s')).toThrow(/\{api:v1\}/);
    expect(() => parseThreshold('findings{api:v1}.count == 0')).toThrow(/no figures per API/);
  });
});
