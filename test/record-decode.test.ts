// Recorded traffic decodes back to JSON: real EVE-shaped bodies from the shared wire vectors are
// recorded, read back and decoded (AuthContainer -> payload -> the endpoint's message).

import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointKey } from '../src/protocol/endpoints.js';
import { Msg } from '../src/protocol/messages.js';
import { decodeExchange, decodeRecordedBody, type DecodedBody } from '../src/transport/record-decode.js';
import { readRecording, type RecordedExchange } from '../src/transport/record-reader.js';
import { RecordWriter } from '../src/transport/record-writer.js';
import { VECTORS_DIR } from './vectors-dir.js';

const VECTORS = VECTORS_DIR;
const bin = (p: string): Uint8Array => new Uint8Array(readFileSync(path.join(VECTORS, 'proto', p)));
const json = (p: string): Record<string, unknown> => JSON.parse(readFileSync(path.join(VECTORS, p), 'utf8'));

/** The vector's AuthContainer JSON without the payload bytes (what the decoder shows as envelope). */
function envelopeOf(vector: string): Record<string, unknown> {
  const j = json(`proto/auth/${vector}.json`);
  const pp = { ...(j['protectedPayload'] as Record<string, unknown>) };
  delete pp['payload'];
  const out = { ...j };
  if (Object.keys(pp).length) out['protectedPayload'] = pp;
  else delete out['protectedPayload'];
  return out;
}

interface Case {
  endpoint: EndpointKey;
  direction: 'request' | 'response';
  container: string; // vectors/proto/auth/<container>.bin
  payloadJson: string; // vectors/<payloadJson>: the expected decoded payload
  message: string;
}

const CASES: Case[] = [
  { endpoint: 'register', direction: 'request', container: 'AuthContainer-register', payloadJson: 'proto/register/ZRegisterMsg.json', message: 'org.lfedge.eve.register.ZRegisterMsg' },
  { endpoint: 'config', direction: 'request', container: 'AuthContainer-config-request', payloadJson: 'proto/config/ConfigRequest.json', message: 'org.lfedge.eve.config.ConfigRequest' },
  { endpoint: 'config', direction: 'response', container: 'AuthContainer-config-response', payloadJson: 'proto/config/ConfigResponse.json', message: 'org.lfedge.eve.config.ConfigResponse' },
  { endpoint: 'certs', direction: 'response', container: 'AuthContainer-certs-response', payloadJson: 'proto/certs/ZControllerCert.json', message: 'org.lfedge.eve.certs.ZControllerCert' },
  { endpoint: 'uuid', direction: 'request', container: 'AuthContainer-uuid-request', payloadJson: 'proto/uuid/UuidRequest.json', message: 'org.lfedge.eve.uuid.UuidRequest' },
  { endpoint: 'uuid', direction: 'response', container: 'AuthContainer-uuid-response', payloadJson: 'proto/uuid/UuidResponse.json', message: 'org.lfedge.eve.uuid.UuidResponse' },
  { endpoint: 'attest', direction: 'request', container: 'AuthContainer-attest-quote-request', payloadJson: 'proto/attest/ZAttestReq-quote.json', message: 'org.lfedge.eve.attest.ZAttestReq' },
  { endpoint: 'attest', direction: 'response', container: 'AuthContainer-attest-nonce-response', payloadJson: 'proto/attest/ZAttestResponse-nonce.json', message: 'org.lfedge.eve.attest.ZAttestResponse' },
];

let dir: string;
let recorded: RecordedExchange[];
const devLog = new Uint8Array(readFileSync(path.join(VECTORS, 'newlogs/dev.log.1779268320000.gz')));
const devLogExpected = json('newlogs/dev.log.1779268320000.gz.expected.json');

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'evesim-decode-'));
  const w = await RecordWriter.open(dir);
  let t = 0;
  const base = { deviceIndex: 1, path: '/x', dueAt: 0, sentAt: 0, doneAt: 1, requestHeaders: {} };
  for (const c of CASES) {
    const body = bin(`auth/${c.container}.bin`);
    w.onOutcome({
      ...base,
      endpoint: c.endpoint,
      method: 'POST',
      status: c.direction === 'response' ? 200 : 201,
      dueAt: t++,
      requestBody: c.direction === 'request' ? body : undefined,
      responseBody: c.direction === 'response' ? body : undefined,
    });
  }
  // newlogs: the EVE-written gzip file as AuthContainer payload, as loguploader sends it.
  const newlogs = Msg.AuthContainer.encode({ protectedPayload: { payload: devLog }, algo: 2, senderCertHash: new Uint8Array(32) });
  w.onOutcome({ ...base, endpoint: 'newlogs', method: 'POST', status: 201, requestBody: newlogs });
  // An error reply from a controller: Go http.Error text.
  w.onOutcome({ ...base, endpoint: 'info', method: 'POST', status: 400, responseBody: Buffer.from('bad ZInfoMsg\n') });
  // A controller that answers config with random bytes.
  w.onOutcome({ ...base, endpoint: 'config', method: 'POST', status: 200, responseBody: new Uint8Array([0xff, 0xff, 0xff, 0x01]) });
  await w.close();
  recorded = [];
  for await (const x of readRecording(dir)) recorded.push(x);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('decoding recorded bodies', () => {
  it.each(CASES)('$endpoint $direction: $message', (c) => {
    const x = recorded[CASES.indexOf(c)]!;
    const d = decodeExchange(x)[c.direction];
    expect(d.kind).toBe('envelope');
    const e = d as Extract<DecodedBody, { kind: 'envelope' }>;
    expect(e.message).toBe(c.message);
    expect(e.envelope).toEqual(envelopeOf(c.container));
    expect(e.payload).toEqual(json(c.payloadJson));
    expect(e.payloadBytes).toBe(c.endpoint === 'uuid' && c.direction === 'request' ? 0 : bin(c.payloadJson.replace(/^proto\//, '').replace(/\.json$/, '.bin')).byteLength);
    // The other direction of these exchanges was empty.
    expect(decodeExchange(x)[c.direction === 'request' ? 'response' : 'request']).toEqual({ kind: 'empty' });
  });

  it('opens a newlogs payload into its log entries', () => {
    const d = decodeExchange(recorded[CASES.length]!).request;
    expect(d.kind).toBe('newlogs');
    const n = d as Extract<DecodedBody, { kind: 'newlogs' }>;
    expect(n.payloadBytes).toBe(devLog.byteLength);
    expect(n.meta).toEqual({ devID: '6ae3b91c-2f4d-4c8e-9b57-0d1e2f3a4b5c', image: 'IMGA', eveVersion: '14.5.2-kvm-amd64' });
    expect(n.entries).toEqual(devLogExpected['lines']);
  });

  it('shows an error reply as text', () => {
    expect(decodeExchange(recorded[CASES.length + 1]!).response).toEqual({ kind: 'text', text: 'bad ZInfoMsg\n' });
  });

  it('shows bytes that are no envelope as undecodable, with the reason', () => {
    const d = decodeExchange(recorded[CASES.length + 2]!).response;
    expect(d.kind).toBe('undecodable');
    expect((d as { reason: string }).reason).toMatch(/AuthContainer/);
    expect((d as { base64: string }).base64).toBe('////AQ==');
  });

  it('reads JSON where no message is expected (newlogs ServerMetrics reply)', () => {
    const body = Buffer.from('{"cpu_percentage":12.5,"log_process_delay_msec":40}');
    expect(decodeRecordedBody('newlogs', 'response', body, 201)).toEqual({
      kind: 'json',
      value: { cpu_percentage: 12.5, log_process_delay_msec: 40 },
    });
  });
});

describe('evesim decode takes what --record was given', () => {
  it('a run directory means its worker recordings in worker order; anything else is a clear error', async () => {
    const { recordingDirs } = await import('../src/cli/decode-command.js');
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const run = await mkdtemp(path.join(tmpdir(), 'evesim-run-'));
    for (const w of ['worker-10', 'worker-2', 'worker-0']) {
      mkdirSync(path.join(run, w));
      writeFileSync(path.join(run, w, 'meta.json'), '{}');
    }
    mkdirSync(path.join(run, 'worker-3')); // no meta.json: not a recording
    expect(recordingDirs(run)).toEqual(['worker-0', 'worker-2', 'worker-10'].map((w) => path.join(run, w)));
    expect(recordingDirs(path.join(run, 'worker-2'))).toEqual([path.join(run, 'worker-2')]);
    expect(() => recordingDirs(path.join(run, 'worker-3'))).toThrow(`${path.join(run, 'worker-3')}: not a --record directory (no meta.json, no worker-N recordings)`);
    expect(() => recordingDirs(path.join(run, 'nope'))).toThrow(`${path.join(run, 'nope')}: cannot read the directory (ENOENT)`);
    await rm(run, { recursive: true, force: true });
  });
});
