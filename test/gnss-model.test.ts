import { describe, expect, it } from 'vitest';
import { info } from '../src/gen/eve-types.js';
import { Msg } from '../src/protocol/messages.js';
import { distanceM, GnssReceiver } from '../src/device/radio/gnss-model.js';

const R = info.LocReliability;
const MUNICH = { kind: 'fixed' as const, latitude: 48.137, longitude: 11.575, altitude: 520 };
const ROUTE = {
  kind: 'route' as const,
  waypoints: [
    { latitude: 48.137, longitude: 11.575, altitude: 520 },
    { latitude: 48.15, longitude: 11.6, altitude: 510 },
    { latitude: 48.18, longitude: 11.61, altitude: 500 },
  ],
  speedMps: 15,
};

describe('GNSS receiver model', () => {
  it('is deterministic per seed and device, and differs between them', () => {
    const a = new GnssReceiver({ seed: 5, deviceIndex: 1, motion: MUNICH });
    const b = new GnssReceiver({ seed: 5, deviceIndex: 1, motion: MUNICH });
    const c = new GnssReceiver({ seed: 6, deviceIndex: 1, motion: MUNICH });
    const d = new GnssReceiver({ seed: 5, deviceIndex: 2, motion: MUNICH });
    const times = [0, 1000, 60_000, 3_600_000];
    expect(times.map((t) => a.locationAt(t))).toEqual(times.map((t) => b.locationAt(t)));
    expect(times.map((t) => a.locationAt(t))).not.toEqual(times.map((t) => c.locationAt(t)));
    expect(times.map((t) => a.locationAt(t))).not.toEqual(times.map((t) => d.locationAt(t)));
    // Asking twice for the same instant, in any order, agrees (no hidden state).
    expect(a.locationAt(60_000)).toEqual(b.locationAt(60_000));
  });

  it('jitters a fixed site within its reported uncertainty', () => {
    const g = new GnssReceiver({ seed: 1, deviceIndex: 0, motion: MUNICH });
    let far = 0;
    const seen = new Set<string>();
    for (let t = 0; t < 3_600_000; t += 10_000) {
      const loc = g.locationAt(t)!;
      const err = distanceM(MUNICH, { latitude: loc.latitude!, longitude: loc.longitude! });
      if (err > 3 * loc.horizontal_uncertainty!) far++;
      seen.add(`${loc.latitude},${loc.longitude}`);
      expect(Math.abs(loc.altitude! - 520)).toBeLessThan(4 * loc.vertical_uncertainty!);
      expect(loc.logicallabel).toBe('wwan0');
      expect(loc.utc_timestamp).toEqual({ seconds: Math.floor(t / 1000), nanos: 0 });
    }
    expect(far).toBe(0);
    expect(seen.size).toBeGreaterThan(300); // it does move around
  });

  it('drives a route at its speed, back and forth', () => {
    const g = new GnssReceiver({ seed: 2, deviceIndex: 0, motion: ROUTE, routeStartMs: 1000 });
    const p0 = g.truePositionAt(1000);
    expect(p0).toEqual({ latitude: 48.137, longitude: 11.575, altitude: 520 });
    const p1 = g.truePositionAt(1000 + 100_000);
    expect(distanceM(p0, p1)).toBeGreaterThan(1450); // 1500 m along a straight leg
    expect(distanceM(p0, p1)).toBeLessThan(1501);
    const total = distanceM(ROUTE.waypoints[0]!, ROUTE.waypoints[1]!) + distanceM(ROUTE.waypoints[1]!, ROUTE.waypoints[2]!);
    const end = g.truePositionAt(1000 + (total / 15) * 1000);
    expect(distanceM(end, ROUTE.waypoints[2]!)).toBeLessThan(1);
    const back = g.truePositionAt(1000 + ((2 * total) / 15) * 1000);
    expect(distanceM(back, ROUTE.waypoints[0]!)).toBeLessThan(1);
    const closed = new GnssReceiver({ seed: 2, deviceIndex: 0, motion: { ...ROUTE, loop: 'closed' } });
    const legs = total + distanceM(ROUTE.waypoints[2]!, ROUTE.waypoints[0]!);
    expect(distanceM(closed.truePositionAt((legs / 15) * 1000), ROUTE.waypoints[0]!)).toBeLessThan(1);
  });

  it('loses the fix in outages, and reliability and uncertainty follow the fix quality', () => {
    const g = new GnssReceiver({ seed: 3, deviceIndex: 7, motion: ROUTE, outages: { meanIntervalS: 600, meanDurationS: 60 } });
    let lost = 0;
    const byRel = new Map<number, number[]>();
    for (let t = 0; t < 6 * 3_600_000; t += 5000) {
      const loc = g.locationAt(t);
      const fix = g.fixAt(t);
      if (loc === undefined) {
        expect(fix.quality).toBe('no-fix');
        lost++;
        continue;
      }
      expect(loc.horizontal_uncertainty).toBeCloseTo(fix.hdop * 3, 1);
      expect(loc.vertical_uncertainty!).toBeGreaterThan(loc.horizontal_uncertainty!);
      expect(loc.vertical_reliability!).toBeLessThanOrEqual(loc.horizontal_reliability!);
      const list = byRel.get(loc.horizontal_reliability!) ?? [];
      list.push(loc.horizontal_uncertainty!);
      byRel.set(loc.horizontal_reliability!, list);
    }
    const samples = (6 * 3_600_000) / 5000;
    expect(lost / samples).toBeGreaterThan(0.05);
    expect(lost / samples).toBeLessThan(0.3);
    // Worse reliability comes with larger uncertainty.
    const mean = (r: number) => {
      const l = byRel.get(r)!;
      return l.reduce((a, b) => a + b, 0) / l.length;
    };
    expect(byRel.has(R.LOC_RELIABILITY_HIGH)).toBe(true);
    expect(byRel.has(R.LOC_RELIABILITY_VERY_LOW) || byRel.has(R.LOC_RELIABILITY_LOW)).toBe(true);
    const worse = byRel.has(R.LOC_RELIABILITY_VERY_LOW) ? R.LOC_RELIABILITY_VERY_LOW : R.LOC_RELIABILITY_LOW;
    expect(mean(worse)).toBeGreaterThan(mean(R.LOC_RELIABILITY_HIGH));
    // Without outages the fix never drops.
    const steady = new GnssReceiver({ seed: 3, deviceIndex: 7, motion: MUNICH });
    for (let t = 0; t < 3_600_000; t += 10_000) expect(steady.locationAt(t)).toBeDefined();
  });

  it('produces a ZInfoLocation that encodes and decodes', () => {
    const loc = new GnssReceiver({ seed: 9, deviceIndex: 0, motion: MUNICH, logicalLabel: 'modem-gnss' }).locationAt(1_700_000_000_123)!;
    const back = Msg.ZInfoLocation.decode(Msg.ZInfoLocation.encode(loc));
    expect(back.latitude).toBe(loc.latitude);
    expect(back.longitude).toBe(loc.longitude);
    expect(back.utc_timestamp).toEqual({ seconds: 1_700_000_000, nanos: 123_000_000 });
    expect(back.logicallabel).toBe('modem-gnss');
    expect(back.horizontal_uncertainty).toBeCloseTo(loc.horizontal_uncertainty!, 4); // float32 on the wire
  });

  it('rejects bad configuration with a message naming the field', () => {
    expect(() => new GnssReceiver({ seed: 1, deviceIndex: 4, motion: { kind: 'fixed', latitude: 91, longitude: 0 } })).toThrow(/motion\.latitude must be in \[-90, 90\], got 91/);
    expect(() => new GnssReceiver({ seed: 1, deviceIndex: 4, motion: { kind: 'route', waypoints: [MUNICH], speedMps: 1 } })).toThrow(/device 4: a route needs at least 2 waypoints/);
    expect(() => new GnssReceiver({ seed: 1, deviceIndex: 4, motion: MUNICH, outages: { meanIntervalS: 10, meanDurationS: 20 } })).toThrow(/outages need meanIntervalS > meanDurationS/);
  });
});
