import { describe, expect, it } from 'vitest';
import { ONBOARDING_MIMES, protoContentTypeProblem } from '../src/device/sender/proto-content-type.js';
import { onboard, rig } from './device-harness.js';

const body = new Uint8Array([1, 2, 3]);

describe("EVE's Content-Type check of protobuf answers (zedcloud ValidateProtoContentType)", () => {
  it('reads application/x-proto-binary (any case, with parameters) and empty bodies; refuses other types', () => {
    expect(protoContentTypeProblem({ 'content-type': 'application/x-proto-binary' }, body)).toBeUndefined();
    expect(protoContentTypeProblem({ 'content-type': 'Application/X-Proto-Binary; charset=binary' }, body)).toBeUndefined();
    expect(protoContentTypeProblem({ 'content-type': 'text/html' }, new Uint8Array(0))).toBeUndefined();
    expect(protoContentTypeProblem({ 'content-type': 'text/html; charset=utf-8' }, body)).toBe('content-type text/html not supported');
    expect(protoContentTypeProblem({ 'content-type': 'application/json' }, body)).toBe('content-type application/json not supported');
    expect(protoContentTypeProblem({ 'content-type': '' }, body)).toBe('empty content-type');
    expect(protoContentTypeProblem({ 'content-type': 'garbage' }, body)).toBe('content-type "garbage" does not parse');
    // The onboarding client's wider list (/uuid, /certs): JSON and plain text too, still not HTML.
    expect(protoContentTypeProblem({ 'content-type': 'text/plain' }, body, ONBOARDING_MIMES)).toBeUndefined();
    expect(protoContentTypeProblem({ 'content-type': 'application/json' }, body, ONBOARDING_MIMES)).toBeUndefined();
    expect(protoContentTypeProblem({ 'content-type': 'text/html' }, body, ONBOARDING_MIMES)).toBe('content-type text/html not supported');
  });

  it('a device counts an HTML answer to /config as a wrong-content-type finding and does not apply it', async () => {
    const r = rig();
    await onboard(r);
    const hash = r.device.configHash;
    r.controller.config = { device_name: 'changed' };
    const answer = r.controller.hook;
    r.controller.hook = (q) => (q.endpoint === 'config' ? { status: 200, headers: { 'content-type': 'text/html' }, body: new Uint8Array(Buffer.from('<html>proxy</html>')) } : answer?.(q));
    await r.time.advance(120_000);
    expect(r.findings.filter((f) => f.endpoint === 'config' && f.kind === 'wrong-content-type').length).toBeGreaterThan(0);
    expect(r.findings.find((f) => f.kind === 'wrong-content-type')!.detail).toBe('content-type text/html not supported (18 bytes)');
    expect(r.device.configHash).toBe(hash);
  });
});
