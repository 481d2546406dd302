import { describe, expect, it } from 'vitest';
import { HeapScheduler, onGrid, tickPhaseOf } from '../src/fleet/heap-scheduler.js';
import { DeviceTimer, armed, disarmed } from '../src/device/core/device-timer.js';

function fakeClock(start = 0) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe('HeapScheduler', () => {
  it('fires in due order, equal due times in scheduling order, with dueAt passed', () => {
    const clock = fakeClock();
    const s = new HeapScheduler(clock);
    const fired: string[] = [];
    s.at(30, (d) => fired.push(`c@${d}`));
    s.at(10, (d) => fired.push(`a@${d}`));
    s.at(20, (d) => fired.push(`b1@${d}`));
    s.at(20, (d) => fired.push(`b2@${d}`));
    s.at(20, (d) => fired.push(`b3@${d}`));
    expect(s.runDue(19)).toBe(1);
    expect(fired).toEqual(['a@10']);
    expect(s.runDue(100)).toBe(4);
    expect(fired).toEqual(['a@10', 'b1@20', 'b2@20', 'b3@20', 'c@30']);
    expect(s.pending).toBe(0);
  });

  it('wakes objects through their wake() method, in order with functions; DeviceTimer re-arms itself', () => {
    const clock = fakeClock();
    const s = new HeapScheduler(clock);
    const fired: string[] = [];
    const target = { wake: (d: number) => fired.push(`obj@${d}`) };
    s.at(20, target);
    s.at(10, (d) => fired.push(`fn@${d}`));
    const owner = { name: 'timer' };
    const timer = new DeviceTimer(s, owner, (o, d) => {
      fired.push(`${o.name}@${d}`);
      if (d < 40) timer.at(d + 10);
    });
    timer.at(15);
    timer.at(25); // re-arming replaces the earlier wake-up
    expect(timer.dueAt).toBe(25);
    s.runDue(100);
    expect(fired).toEqual(['fn@10', 'obj@20', 'timer@25', 'timer@35', 'timer@45']);
    expect(timer.armed).toBe(false);
    expect(Number.isNaN(timer.dueAt)).toBe(true);
    expect(s.pending).toBe(0);
  });

  it('a timer held only while armed: armed() makes or re-arms one, the owner drops it when it fires, disarmed() cancels', () => {
    const s = new HeapScheduler(fakeClock());
    const owner = { timer: undefined as DeviceTimer | undefined, fired: [] as number[] };
    const onFire = (o: typeof owner, d: number): void => {
      o.timer = undefined;
      o.fired.push(d);
    };
    owner.timer = armed(owner.timer, 10, s, owner, onFire);
    const first = owner.timer;
    owner.timer = armed(owner.timer, 20, s, owner, onFire); // re-armed: the same timer, one wake-up
    expect(owner.timer).toBe(first);
    expect(s.pending).toBe(1);
    s.runDue(100);
    expect(owner.fired).toEqual([20]);
    expect(owner.timer).toBeUndefined();
    owner.timer = armed(owner.timer, 150, s, owner, onFire);
    expect(owner.timer).not.toBe(first);
    owner.timer = disarmed(owner.timer);
    expect(owner.timer).toBeUndefined();
    expect(s.pending).toBe(0);
    s.runDue(1000);
    expect(owner.fired).toEqual([20]);
    expect(disarmed(undefined)).toBeUndefined();
  });

  it('cancel removes exactly one wake-up; stale handles cancel nothing', () => {
    const s = new HeapScheduler(fakeClock());
    const fired: number[] = [];
    const h1 = s.at(5, () => fired.push(1));
    s.at(6, () => fired.push(2));
    const h3 = s.at(7, () => fired.push(3));
    s.cancel(h1);
    s.cancel(h1); // twice: no effect
    expect(s.pending).toBe(2);
    s.runDue(6);
    expect(fired).toEqual([2]);
    // h1's slot is reused by a new wake-up: the old handle must not cancel it.
    const h4 = s.at(8, () => fired.push(4));
    expect(h4).not.toBe(h1);
    s.cancel(h1);
    s.cancel(h3);
    s.runDue(100);
    expect(fired).toEqual([2, 4]);
  });

  it('keeps order and cancels correctly with 100k pending wake-ups', () => {
    const s = new HeapScheduler(fakeClock());
    const n = 100_000;
    // A fixed pseudo-random permutation of due times.
    let x = 12345;
    const due: number[] = [];
    const handles: number[] = [];
    let last = -Infinity;
    let outOfOrder = 0;
    let count = 0;
    const cb = (d: number) => {
      if (d < last) outOfOrder++;
      last = d;
      count++;
    };
    for (let i = 0; i < n; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      const t = x % 1_000_000;
      due.push(t);
      handles.push(s.at(t, cb));
    }
    expect(s.pending).toBe(n);
    // Cancel every third.
    let cancelled = 0;
    for (let i = 0; i < n; i += 3) {
      s.cancel(handles[i]!);
      cancelled++;
    }
    expect(s.pending).toBe(n - cancelled);
    s.runDue(500_000);
    const expectedFirstHalf = due.filter((t, i) => i % 3 !== 0 && t <= 500_000).length;
    expect(count).toBe(expectedFirstHalf);
    s.runDue(Infinity);
    expect(count).toBe(n - cancelled);
    expect(outOfOrder).toBe(0);
    expect(s.pending).toBe(0);
  });

  it('survives a throwing callback and reports it', () => {
    const errors: unknown[] = [];
    const s = new HeapScheduler(fakeClock(), { onError: (e) => errors.push(e) });
    const fired: number[] = [];
    s.at(1, () => {
      throw new Error('boom');
    });
    s.at(2, () => fired.push(2));
    s.runDue(10);
    expect(fired).toEqual([2]);
    expect(errors).toHaveLength(1);
  });

  it('a callback may schedule and cancel during the drain', () => {
    const s = new HeapScheduler(fakeClock());
    const fired: number[] = [];
    let h = 0;
    s.at(1, () => {
      fired.push(1);
      s.at(1, () => fired.push(11)); // due now: runs in the same drain
      s.cancel(h);
    });
    h = s.at(2, () => fired.push(2));
    s.at(3, () => fired.push(3));
    s.runDue(5);
    expect(fired).toEqual([1, 11, 3]);
  });

  it('drives itself from one real timer', async () => {
    const clock = { now: () => performance.timeOrigin + performance.now() };
    const s = new HeapScheduler(clock);
    const t0 = clock.now();
    const lateness: number[] = [];
    const order: number[] = [];
    for (const [i, d] of [40, 10, 25, 60, 5].entries()) {
      s.at(t0 + d, (due) => {
        lateness.push(clock.now() - due);
        order.push(i);
      });
    }
    s.start();
    // One added later, earlier than the armed timer: the timer must be re-armed for it.
    s.at(t0 + 1, () => order.push(99));
    // All six are due within 60 ms; wait for them with a generous bound, not a fixed 120 ms.
    const end = Date.now() + 30_000;
    while (order.length < 6 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    s.stop();
    expect(order).toEqual([99, 4, 1, 2, 0, 3]);
    expect(Math.min(...lateness)).toBeGreaterThanOrEqual(0);
  });

  it('with a tick, due times move up to the grid (phase included) and the moved time is the dueAt the target sees', () => {
    const clock = fakeClock(1000);
    const s = new HeapScheduler(clock, { tickMs: 50, tickPhaseMs: 7 });
    const fired: string[] = [];
    s.at(1007, (d) => fired.push(`on-grid@${d}`)); // already on the grid: stays
    s.at(1008, (d) => fired.push(`a@${d}`)); // → 1057
    s.at(1056, (d) => fired.push(`b@${d}`)); // → 1057, after a (scheduled later)
    s.at(1000, (d) => fired.push(`now@${d}`)); // due now → 1007, after on-grid
    s.at(1058, (d) => fired.push(`c@${d}`)); // → 1107
    expect(s.nextDueAt()).toBe(1007);
    expect(s.runDue(1056)).toBe(2);
    expect(fired).toEqual(['on-grid@1007', 'now@1007']);
    s.runDue(2000);
    expect(fired).toEqual(['on-grid@1007', 'now@1007', 'a@1057', 'b@1057', 'c@1107']);
  });

  it('a tick of 0 keeps exact times; a bad tick is refused', () => {
    const s = new HeapScheduler(fakeClock(), { tickMs: 0, tickPhaseMs: 3 });
    const fired: number[] = [];
    s.at(13, (d) => fired.push(d));
    s.runDue(100);
    expect(fired).toEqual([13]);
    expect(() => new HeapScheduler(fakeClock(), { tickMs: -5 })).toThrow(/tickMs/);
    expect(() => new HeapScheduler(fakeClock(), { tickMs: Number.NaN })).toThrow(/tickMs/);
  });

  it('grid points and worker phases', () => {
    expect(onGrid(100, 50, 0)).toBe(100);
    expect(onGrid(101, 50, 0)).toBe(150);
    expect(onGrid(101, 50, 20)).toBe(120);
    expect(onGrid(121, 50, 20)).toBe(170);
    // Workers of one process (first fleet indices 0..3) and of other shards get distinct phases in [0, step).
    const phases = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => tickPhaseOf(i, 50));
    for (const p of phases) expect(p >= 0 && p < 50).toBe(true);
    expect(new Set(phases.map((p) => Math.round(p * 1000))).size).toBe(phases.length);
    // No two of eight workers closer than 2 ms on a 50 ms grid: their batches do not coincide.
    const sorted = [...phases].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]! - sorted[i - 1]!).toBeGreaterThan(2);
  });
});
