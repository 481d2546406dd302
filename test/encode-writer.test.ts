// The kept protobuf writer (src/protocol/encode-writer.ts) must write exactly what protobufjs's own
// writer writes: 64-bit varints at every width, after larger and smaller messages, and after an
// encode that failed half way.

import { describe, expect, test } from 'vitest';
import { Msg } from '../src/protocol/messages.js';
import type { metrics } from '../src/gen/eve-types.js';

const own = (m: metrics.ZMetricMsg): Buffer => Buffer.from(Msg.ZMetricMsg.type.encode(m).finish());
const kept = (m: metrics.ZMetricMsg): Buffer => Buffer.from(Msg.ZMetricMsg.encode(m));

function metricsWith(n: number, ports: number): metrics.ZMetricMsg {
  const network = Array.from({ length: ports }, (_, i) => ({ iName: `eth${i}`, txBytes: n, rxBytes: n + i, txPkts: Math.floor(n / 7) }));
  return { devID: 'f5b7a8c9-0000-4000-8000-000000000001', atTimeStamp: { seconds: n, nanos: 5 }, dm: { network } };
}

describe('encode writer', () => {
  test('64-bit varints of every width are the bytes protobufjs writes', () => {
    const values = [0, 1, 127, 128, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 40 + 3, Number.MAX_SAFE_INTEGER, 1.75, 2 ** 32 - 0.5];
    for (const v of values) expect(kept(metricsWith(v, 2)).toString('hex'), `value ${v}`).toBe(own(metricsWith(v, 2)).toString('hex'));
  });

  test('a negative int64 (a Timestamp before 1970) takes ten bytes, as in protobufjs', () => {
    const m: metrics.ZMetricMsg = { devID: 'x', atTimeStamp: { seconds: -1, nanos: 0 } };
    expect(kept(m).toString('hex')).toBe(own(m).toString('hex'));
    expect(kept(m).length).toBeGreaterThan(10);
  });

  test('a small message after a large one, and a message after a failed encode, come out whole', () => {
    const large = metricsWith(2 ** 33, 400);
    const small = metricsWith(3, 1);
    expect(kept(large).equals(own(large))).toBe(true);
    expect(kept(small).equals(own(small))).toBe(true);
    // Fails inside the second port, after the first was written and a length prefix was forked.
    const bad = { devID: 'y', dm: { network: [{ iName: 'eth0', txBytes: 5 }, { iName: { length: 3 } }] } } as unknown as metrics.ZMetricMsg;
    expect(() => Msg.ZMetricMsg.encode(bad)).toThrow(/ZMetricMsg/);
    expect(kept(small).equals(own(small))).toBe(true);
    // Results are copies: a later encode does not change an earlier result.
    const first = Msg.ZMetricMsg.encode(small);
    const copy = Buffer.from(first);
    Msg.ZMetricMsg.encode(large);
    expect(Buffer.from(first).equals(copy)).toBe(true);
  });
});
