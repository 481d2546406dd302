// The label values of the request metrics: the class of a code, and the endpoints a scenario's
// groups imply (their counters exist at 0 from the start).

import { describe, expect, it } from 'vitest';
import { impliedEndpoints } from '../src/runner/prometheus/implied-endpoints.js';
import { requestClassOf } from '../src/runner/prometheus/request-class.js';

describe('requestClassOf', () => {
  it('gives the status family of an HTTP code and transport for a named error', () => {
    expect(requestClassOf('200')).toBe('2xx');
    expect(requestClassOf('304')).toBe('3xx');
    expect(requestClassOf('403')).toBe('4xx');
    expect(requestClassOf('503')).toBe('5xx');
    expect(requestClassOf('101')).toBe('1xx');
    for (const e of ['ECONNREFUSED', 'timeout', 'connect-timeout', 'error', '600', '20', '2000']) expect(requestClassOf(e), e).toBe('transport');
  });
});

describe('impliedEndpoints', () => {
  const base = { api: 'v2' as const, preRegistered: false, logFormat: 'newlogs' as const, logLinesPerSec: 0, flowlogIntervalMs: 60_000, apps: [] };
  const app = { name: 'a', activate: true, profiles: [], logLinesPerSec: 0, flowsPerMessage: 1 };
  const names = (groups: Parameters<typeof impliedEndpoints>[0]) => impliedEndpoints(groups).map((e) => `${e.api}:${e.endpoint}`);

  it('has what every device calls, register unless pre-registered, and uuid on v2 only', () => {
    expect(names([base])).toEqual(['v2:certs', 'v2:ping', 'v2:uuid', 'v2:register', 'v2:config', 'v2:attest', 'v2:info', 'v2:metrics']);
    expect(names([{ ...base, api: 'v1', preRegistered: true }])).toEqual(['v1:certs', 'v1:ping', 'v1:config', 'v1:attest', 'v1:info', 'v1:metrics']);
  });

  it('adds the log endpoints of the log format, flow logs with apps, app logs when apps log; once per API', () => {
    const logging = { ...base, logLinesPerSec: 2, apps: [app] };
    expect(names([logging])).toEqual(expect.arrayContaining(['v2:newlogs', 'v2:flowlog']));
    expect(names([logging])).not.toContain('v2:appnewlogs');
    const legacy = { ...logging, logFormat: 'legacy' as const, apps: [{ ...app, logLinesPerSec: 1 }] };
    expect(names([legacy])).toEqual(expect.arrayContaining(['v2:logs', 'v2:flowlog', 'v2:applogs']));
    expect(names([legacy])).not.toContain('v2:newlogs');
    expect(names([{ ...logging, flowlogIntervalMs: 0 }])).not.toContain('v2:flowlog');
    const twice = names([base, base, { ...base, api: 'v1' }]);
    expect(twice.length).toBe(new Set(twice).size);
    expect(twice).toContain('v1:register');
  });
});
