// Codec behaviour beyond the wire vectors: error reporting, plain-object encoding,
// 64-bit integers as numbers, enum aliases, and the proto3 JSON details.
import { describe, expect, it } from 'vitest';
import { codec, ProtoDecodeError, ProtoJsonError } from '../src/protocol/codec.js';
import { Msg } from '../src/protocol/messages.js';
import { timestampToJson } from '../src/protocol/proto-json.js';
import { profile, info } from '../src/gen/eve-types.js';

describe('decode errors', () => {
  it('truncated length prefix -> ProtoDecodeError naming the message', () => {
    const bad = new Uint8Array([0x0a, 0xff, 0x01, 0x00]); // field 1 claims 255 bytes
    expect(() => Msg.AuthContainer.decode(bad)).toThrow(ProtoDecodeError);
    expect(() => Msg.AuthContainer.decode(bad)).toThrow(/org\.lfedge\.eve\.auth\.AuthContainer/);
  });

  it('invalid wire type -> ProtoDecodeError with the byte count', () => {
    try {
      Msg.ZInfoMsg.decode(new Uint8Array([0x0f, 0x01])); // field 1, wire type 7
      expect.unreachable('decode should have thrown');
    } catch (err) {
      expect(err).toBeInstanceOf(ProtoDecodeError);
      expect((err as ProtoDecodeError).messageName).toBe('org.lfedge.eve.info.ZInfoMsg');
      expect((err as ProtoDecodeError).byteLength).toBe(2);
    }
  });

  it('unknown message name is a clear error', () => {
    expect(() => codec('org.lfedge.eve.config.NoSuchThing')).toThrow(/unknown EVE message type 'org\.lfedge\.eve\.config\.NoSuchThing'/);
  });
});

describe('encoding plain objects', () => {
  it('writes exactly the expected bytes', () => {
    const bytes = Msg.ConfigRequest.encode({ configHash: 'abc', integrity_token: new Uint8Array([1, 2]) });
    expect(Array.from(bytes)).toEqual([0x0a, 3, 0x61, 0x62, 0x63, 0x12, 2, 1, 2]);
  });

  it('empty message is zero bytes; a present empty sub-message is 0a 00', () => {
    expect(Msg.UuidRequest.encode({}).length).toBe(0);
    expect(Array.from(Msg.AuthContainer.encode({ protectedPayload: {} }))).toEqual([0x0a, 0x00]);
    expect(Msg.AuthContainer.toJSON(Msg.AuthContainer.decode(new Uint8Array([0x0a, 0x00])))).toEqual({ protectedPayload: {} });
  });

  it('64-bit integers decode as JS numbers, exact up to 2^53', () => {
    const big = Number.MAX_SAFE_INTEGER;
    const m = Msg.ZInfoDevice.decode(Msg.ZInfoDevice.encode({ memory: big, powerCycleCounter: -1, storage: 2 ** 40 }));
    expect(m.memory).toBe(big);
    expect(typeof m.memory).toBe('number');
    expect(m.powerCycleCounter).toBe(-1);
    expect(Msg.ZInfoDevice.toJSON(m)).toEqual({ memory: String(big), storage: String(2 ** 40), powerCycleCounter: '-1' });
  });

  it('oneof members and nested messages encode from plain objects', () => {
    const msg = {
      ztype: info.ZInfoTypes.ZiApp,
      devId: 'dev',
      ainfo: { AppID: 'app', state: info.ZSwState.RUNNING },
      atTimeStamp: { seconds: 1779268800, nanos: 500_000_000 },
    };
    const back = Msg.ZInfoMsg.decode(Msg.ZInfoMsg.encode(msg));
    expect(back.InfoContent).toBe('ainfo');
    expect(Msg.ZInfoMsg.toJSON(back)).toEqual({
      ztype: 'ZiApp',
      devId: 'dev',
      ainfo: { AppID: 'app', state: 'RUNNING' },
      atTimeStamp: '2026-05-20T09:20:00.500Z',
    });
  });
});

describe('enums', () => {
  it('allow_alias: the deprecated name parses to 2 and prints as the first name', () => {
    expect(profile.LocalDevCmd.Command.COMMAND_SHUTDOWN_POWEROFF).toBe(2);
    const cmd = Msg.LocalDevCmd.fromJSON({ command: 'COMMAND_SHUTDOWN_POWEROFF', timestamp: '7' });
    expect(cmd.command).toBe(2);
    const bytes = Msg.LocalDevCmd.encode(cmd);
    expect(Msg.LocalDevCmd.toJSON(Msg.LocalDevCmd.decode(bytes))).toEqual({ timestamp: '7', command: 'COMMAND_GRACEFUL_POWEROFF' });
  });

  it('an enum number unknown to our protos is kept and printed as a number', () => {
    const m = Msg.ZInfoDevice.decode(new Uint8Array([0x98, 0x03, 99])); // api_capability (51) = 99
    expect(m.api_capability).toBe(99);
    expect(Msg.ZInfoDevice.toJSON(m)).toEqual({ api_capability: 99 });
  });
});

describe('proto3 JSON', () => {
  it('timestamps use 0, 3, 6 or 9 fraction digits', () => {
    expect(timestampToJson(0, 0)).toBe('1970-01-01T00:00:00Z');
    expect(timestampToJson(1779267581, 250_000_000)).toBe('2026-05-20T08:59:41.250Z');
    expect(timestampToJson(1779267581, 250_000)).toBe('2026-05-20T08:59:41.000250Z');
    expect(timestampToJson(1779267581, 123_456_789)).toBe('2026-05-20T08:59:41.123456789Z');
  });

  it('fromJSON accepts lowerCamelCase names (the LPS signal stream uses them)', () => {
    const sig = Msg.Signal.fromJSON({ pendingChanges: ['CONFIG_ENDPOINT_RADIO', 'CONFIG_ENDPOINT_DEV_INFO'] });
    expect(sig.pending_changes).toEqual([profile.ConfigEndpoint.CONFIG_ENDPOINT_RADIO, profile.ConfigEndpoint.CONFIG_ENDPOINT_DEV_INFO]);
  });

  it('fromJSON parses timestamps with offsets, int64 strings and base64', () => {
    const m = Msg.ConfigRequest.fromJSON({ configHash: 'h', integrity_token: 'AQID' });
    expect(Array.from(m.integrity_token!)).toEqual([1, 2, 3]);
    const cfg = Msg.EdgeDevConfig.fromJSON({ controller_epoch: '12', config_timestamp: '2026-05-20T10:59:41.5+02:00' });
    expect(cfg.controller_epoch).toBe(12);
    expect(cfg.config_timestamp).toEqual({ seconds: 1779267581, nanos: 500_000_000 });
  });

  it('fromJSON errors name the message and the field path', () => {
    expect(() => Msg.EdgeDevConfig.fromJSON({ apps: [{ displayname: 'a' }, { no_such_field: 1 }] })).toThrow(ProtoJsonError);
    expect(() => Msg.EdgeDevConfig.fromJSON({ apps: [{ displayname: 'a' }, { no_such_field: 1 }] })).toThrow(
      'org.lfedge.eve.config.EdgeDevConfig: apps[1].no_such_field: no such field in org.lfedge.eve.config.AppInstanceConfig',
    );
    expect(() => Msg.LocalDevCmd.fromJSON({ command: 'COMMAND_EXPLODE' })).toThrow(/command: unknown Command value "COMMAND_EXPLODE"/);
    expect(() => Msg.ZInfoMsg.fromJSON({ atTimeStamp: 'yesterday' })).toThrow(/atTimeStamp: invalid RFC 3339 timestamp/);
    expect(() => Msg.ZInfoDevice.fromJSON({ ncpu: 1.5 })).toThrow(/ncpu: expected an integer/);
  });

  it('defaults are omitted, but a oneof member set to its default is printed', () => {
    const c = codec<object>('org.lfedge.eve.metrics.MetricItem');
    const m = c.decode(c.encode({ key: '', type: 0, uint32Value: 0 } as object));
    expect(c.toJSON(m)).toEqual({ uint32Value: 0 });
  });
});

describe('lowerCamelCase output', () => {
  it('prints protojson default names on request (LPS signal stream form)', () => {
    const sig = Msg.Signal.decode(Msg.Signal.encode({ pending_changes: [profile.ConfigEndpoint.CONFIG_ENDPOINT_RADIO] }));
    expect(Msg.Signal.toJSON(sig, { lowerCamelCase: true })).toEqual({ pendingChanges: ['CONFIG_ENDPOINT_RADIO'] });
    expect(Msg.Signal.toJSON(sig)).toEqual({ pending_changes: ['CONFIG_ENDPOINT_RADIO'] });
  });
});

describe('float fields', () => {
  it('print the shortest decimal of the float32 value', () => {
    const m = Msg.ServerMetrics.decode(Msg.ServerMetrics.encode({ cpu_percentage: 0.1, log_process_delay_msec: 3 }));
    expect(m.cpu_percentage).not.toBe(0.1); // float32 widened to double
    expect(Msg.ServerMetrics.toJSON(m)).toEqual({ cpu_percentage: 0.1, log_process_delay_msec: 3 });
  });
});

describe('unset bytes fields', () => {
  it('decode as an empty Uint8Array, not a plain array', async () => {
    const { Msg } = await import('../src/protocol/messages.js');
    const c = Msg.AuthContainer.decode(Msg.AuthContainer.encode({ algo: 2 }));
    expect(c.senderCertHash).toBeInstanceOf(Uint8Array);
    expect(c.senderCertHash!.length).toBe(0);
  });
});
