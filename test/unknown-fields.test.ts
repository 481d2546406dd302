// Unknown fields must survive decode -> encode: a newer controller or device may
// send fields our .proto files do not define, and a simulator relaying or
// re-signing such messages must not drop them. The "wider" schema below stands in
// for a newer EVE API: same field numbers as ours plus extra ones.
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { codec } from '../src/protocol/codec.js';
import { Msg } from '../src/protocol/messages.js';
import { collectUnknownFields } from '../src/protocol/unknown-fields.js';

const WIDER = `
syntax = "proto3";
package wider;
message AuthBody {
  bytes payload = 1;
  string future_note = 50;
}
message AuthContainer {
  AuthBody protectedPayload = 1;
  int32 algo = 2;
  bytes senderCertHash = 3;
  bytes signatureHash = 4;
  uint64 future_counter = 98;
  string future_label = 99;
  fixed32 future_fixed32 = 97;
  fixed64 future_fixed64 = 96;
  repeated string future_list = 95;
}
message ZCert {
  int32 hashAlgo = 1;
  bytes cert = 4;
  bool future_flag = 60;
}
message ZControllerCert {
  repeated ZCert certs = 1;
}
message ZInfoConfigItem {
  string value = 1;
  sint64 future_delta = 7;
}
message ZInfoConfigItemStatus {
  map<string, ZInfoConfigItem> configItems = 1;
}
`;

const wider = protobuf.parse(WIDER, { keepCase: true }).root;
const wideType = (name: string) => wider.lookupType(`wider.${name}`);

function widen(name: string, obj: Record<string, unknown>): Uint8Array {
  return wideType(name).encode(obj).finish();
}

function wideDecode(name: string, bytes: Uint8Array): Record<string, unknown> {
  return wideType(name).toObject(wideType(name).decode(bytes), { longs: Number, bytes: Array }) as Record<string, unknown>;
}

describe('unknown fields', () => {
  it('top-level and nested unknown fields survive decode -> encode', () => {
    const original = {
      protectedPayload: { payload: new Uint8Array([1, 2, 3]), future_note: 'from a newer API' },
      algo: 2,
      senderCertHash: new Uint8Array(32).fill(7),
      signatureHash: new Uint8Array(64).fill(9),
      future_counter: 123456789012,
      future_label: 'extra',
      future_fixed32: 0xdeadbeef,
      future_fixed64: 2 ** 40 + 5,
      future_list: ['a', 'b'],
    };
    const bytes = widen('AuthContainer', original);

    const ours = Msg.AuthContainer.decode(bytes);
    expect(ours.algo).toBe(2);
    expect(Array.from(ours.protectedPayload!.payload!)).toEqual([1, 2, 3]);
    // Unknown data stays out of the visible fields and JSON.
    expect(Object.keys(ours)).not.toContain('future_label');
    expect(Object.keys(Msg.AuthContainer.toJSON(ours))).toEqual(['protectedPayload', 'algo', 'senderCertHash', 'signatureHash']);

    const reencoded = Msg.AuthContainer.encode(ours);
    expect(wideDecode('AuthContainer', reencoded)).toEqual(wideDecode('AuthContainer', bytes));
    // Extra field numbers are above the known ones, so even the byte order is kept.
    expect(Buffer.from(reencoded).equals(Buffer.from(bytes))).toBe(true);
  });

  it('reports where the unknown fields are', () => {
    const bytes = widen('AuthContainer', { protectedPayload: { future_note: 'x' }, future_label: 'y', future_counter: 5 });
    const found = collectUnknownFields(Msg.AuthContainer.type, Msg.AuthContainer.decode(bytes));
    expect(found.map((f) => [f.path, f.fieldNumber, f.wireType])).toEqual([
      ['', 98, 0],
      ['', 99, 2],
      ['protectedPayload', 50, 2],
    ]);
  });

  it('unknown fields inside repeated messages survive', () => {
    const original = { certs: [{ hashAlgo: 1, cert: new Uint8Array([65]), future_flag: true }, { hashAlgo: 2 }] };
    const bytes = widen('ZControllerCert', original);
    const ours = Msg.ZControllerCert.decode(bytes);
    expect(ours.certs).toHaveLength(2);
    expect(wideDecode('ZControllerCert', Msg.ZControllerCert.encode(ours))).toEqual(wideDecode('ZControllerCert', bytes));
  });

  it('unknown fields inside map values survive', () => {
    const original = { configItems: { 'timer.config.interval': { value: '60', future_delta: -42 } } };
    const bytes = widen('ZInfoConfigItemStatus', original);
    const c = codec<object>('org.lfedge.eve.info.ZInfoConfigItemStatus');
    const ours = c.decode(bytes);
    expect(c.toJSON(ours)).toEqual({ configItems: { 'timer.config.interval': { value: '60' } } });
    expect(wideDecode('ZInfoConfigItemStatus', c.encode(ours))).toEqual(wideDecode('ZInfoConfigItemStatus', bytes));
  });

  it('a message edited after decode keeps its unknown fields', () => {
    const bytes = widen('AuthContainer', { algo: 1, future_label: 'keep me' });
    const ours = Msg.AuthContainer.decode(bytes);
    ours.algo = 2;
    const back = wideDecode('AuthContainer', Msg.AuthContainer.encode(ours));
    expect(back).toMatchObject({ algo: 2, future_label: 'keep me' });
  });
});
