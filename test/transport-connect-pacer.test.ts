import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectPacer } from '../src/transport/connect-pacer.js';

describe('ConnectPacer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('starts a lone connect at once', () => {
    const p = new ConnectPacer({ maxConcurrent: 2, jitterMs: 100 });
    let started = false;
    p.run((done) => {
      started = true;
      done();
    });
    expect(started).toBe(true);
    expect(p.stats()).toEqual({ inFlight: 0, waiting: 0, paced: 0 });
  });

  it('spreads a burst over the jitter window and caps handshakes in flight', () => {
    const randoms = [0.1, 0.5, 0.9, 0.3, 0.7];
    const p = new ConnectPacer({ maxConcurrent: 2, jitterMs: 100, random: () => randoms.shift()! });
    const started: number[] = [];
    const dones: Array<() => void> = [];
    for (let i = 0; i < 6; i++) {
      p.run((done) => {
        started.push(i);
        dones.push(done);
      });
    }
    // First one immediately; the other five wait for 10, 50, 90, 30, 70 ms.
    expect(started).toEqual([0]);
    expect(p.stats()).toEqual({ inFlight: 1, waiting: 5, paced: 5 });

    vi.advanceTimersByTime(10); // #1 due, one slot free
    expect(started).toEqual([0, 1]);
    vi.advanceTimersByTime(20); // #4 due at 30 ms, but both slots are busy
    expect(started).toEqual([0, 1]);
    expect(p.stats().inFlight).toBe(2);

    dones[0]!(); // a handshake finishes: the waiting #4 takes the slot
    expect(started).toEqual([0, 1, 4]);
    dones[0]!(); // calling done twice changes nothing
    expect(p.stats().inFlight).toBe(2);

    vi.advanceTimersByTime(100); // #2, #5, #3 all due; no slot free
    expect(started).toEqual([0, 1, 4]);
    dones[1]!();
    dones[2]!();
    expect(started).toEqual([0, 1, 4, 2, 5]);
    dones[3]!();
    dones[4]!();
    expect(started).toEqual([0, 1, 4, 2, 5, 3]);
    dones[5]!();
    expect(p.stats()).toEqual({ inFlight: 0, waiting: 0, paced: 5 });
  });

  it('frees the slot when the start function throws', () => {
    const p = new ConnectPacer({ maxConcurrent: 1, jitterMs: 0 });
    expect(() =>
      p.run(() => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(p.stats().inFlight).toBe(0);
  });

  it('rejects nonsense settings', () => {
    expect(() => new ConnectPacer({ maxConcurrent: 0, jitterMs: 1 })).toThrow(/maxConcurrent/);
    expect(() => new ConnectPacer({ maxConcurrent: 1, jitterMs: -1 })).toThrow(/jitterMs/);
  });
});
