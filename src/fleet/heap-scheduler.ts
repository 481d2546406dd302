// The worker's Scheduler port: every pending wake-up of every device lives in one binary min-heap,
// and one Node timer is armed for the earliest of them. 100k pending wake-ups cost 100k heap slots
// (typed arrays plus one callback reference each), not 100k Node timers.
//
// Storage is struct-of-arrays over recycled slots; a handle is slot + generation so a stale handle
// (already fired or cancelled, slot reused) cancels nothing. Entries due at the same time fire in
// the order they were scheduled, so a seeded run replays the same way.
//
// With a tick (--tick), every due time is moved up to the next point of a grid of that step, so the
// wake-ups of many devices fire in one turn of the event loop and their requests leave together.
// The moved time is the due time (the device sees it, and latency counts from it), so the figures
// stay honest; what changes is that one turn serves a batch, which the worker pays for once per
// turn instead of once per request (bench/README.md, "tick").

import { wake, type Clock, type Millis, type Scheduler, type TimerHandle, type WakeTarget } from '../device/ports.js';


/** 2^22 slots: more than four million pending wake-ups per worker. */
const SLOT_BITS = 22;
const SLOT_LIMIT = 1 << SLOT_BITS;
const SLOT_MASK = SLOT_LIMIT - 1;
/** Generations wrap here so slot + generation * 2^22 stays a safe integer. */
const GEN_LIMIT = 2 ** 30;

export interface HeapSchedulerOptions {
  /** Called when a wake-up callback throws; the scheduler carries on with the next one. */
  onError?: (err: unknown) => void;
  /** Longest a single drain may run before yielding to I/O (ms). Keeps event-loop lag bounded. */
  sliceMs?: number;
  /** Grid step for due times, ms; 0 or absent: exact due times. */
  tickMs?: number;
  /** Where this scheduler's grid starts within a step, ms in [0, tickMs): workers of one fleet use
   *  different phases so their batches do not reach the controller at the same instant. */
  tickPhaseMs?: number;
}

export class HeapScheduler implements Scheduler {
  // Per-slot data.
  private dueTimes: Float64Array;
  private seqs: Float64Array;
  private gen: Uint32Array;
  private pos: Int32Array; // index in heap, -1 when free
  private fns: (WakeTarget | undefined)[] = [];
  private freeSlots: number[] = [];
  private slotCount = 0;

  // The heap holds slot numbers.
  private heap: Int32Array;
  private size = 0;
  private nextSeq = 0;

  // Real-time driving (start()/stop()).
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private running = false;
  private draining = false;
  private immediate: NodeJS.Immediate | undefined;
  private readonly sliceMs: number;
  private readonly onError: (err: unknown) => void;
  private fired = 0;
  private readonly tickMs: number;
  private readonly tickPhaseMs: number;

  constructor(private readonly clock: Clock, opts: HeapSchedulerOptions = {}) {
    const cap = 1024;
    this.dueTimes = new Float64Array(cap);
    this.seqs = new Float64Array(cap);
    this.gen = new Uint32Array(cap);
    this.pos = new Int32Array(cap).fill(-1);
    this.heap = new Int32Array(cap);
    this.sliceMs = opts.sliceMs ?? 20;
    this.tickMs = opts.tickMs ?? 0;
    if (!(Number.isFinite(this.tickMs) && this.tickMs >= 0)) throw new Error(`HeapScheduler: tickMs must be a finite number >= 0, got ${this.tickMs}`);
    this.tickPhaseMs = this.tickMs > 0 ? ((opts.tickPhaseMs ?? 0) % this.tickMs + this.tickMs) % this.tickMs : 0;
    this.onError =
      opts.onError ??
      ((err) => {
        throw err;
      });
  }

  /** Number of pending wake-ups. */
  get pending(): number {
    return this.size;
  }

  /** Wake-ups fired since creation. */
  get firedCount(): number {
    return this.fired;
  }

  /** Due time of the earliest pending wake-up, or Infinity. */
  nextDueAt(): Millis {
    return this.size === 0 ? Infinity : this.dueTimes[this.heap[0]!]!;
  }

  at(at: Millis, fn: WakeTarget): TimerHandle {
    if (!Number.isFinite(at)) throw new Error(`Scheduler.at: due time must be finite, got ${at}`);
    if (this.tickMs > 0) at = onGrid(at, this.tickMs, this.tickPhaseMs);
    const slot = this.allocSlot();
    this.dueTimes[slot] = at;
    this.seqs[slot] = this.nextSeq++;
    this.fns[slot] = fn;
    this.heapPush(slot);
    if (this.running && at < this.timerAt) this.arm();
    return slot + this.gen[slot]! * SLOT_LIMIT;
  }

  cancel(handle: TimerHandle): void {
    const slot = handle & SLOT_MASK;
    if (slot >= this.slotCount) return;
    if (Math.floor(handle / SLOT_LIMIT) !== this.gen[slot]) return;
    const p = this.pos[slot]!;
    if (p < 0) return;
    this.heapRemoveAt(p);
    this.freeSlot(slot);
  }

  /**
   * Fires every wake-up due at or before `now`, in due order. Returns how many fired. Tests call
   * this with a fake clock; start() calls it from the real timer. `budgetMs` (real time) stops the
   * drain early so I/O can run; the caller comes back for the rest.
   */
  runDue(now: Millis, budgetMs = Infinity): number {
    let n = 0;
    const deadline = budgetMs === Infinity ? Infinity : performance.now() + budgetMs;
    while (this.size > 0) {
      const slot = this.heap[0]!;
      const dueAt = this.dueTimes[slot]!;
      if (dueAt > now) break;
      const fn = this.fns[slot]!;
      this.heapRemoveAt(0);
      this.freeSlot(slot);
      n++;
      this.fired++;
      try {
        wake(fn, dueAt);
      } catch (err) {
        this.onError(err);
      }
      // Check the real-time budget every 8 callbacks (performance.now() costs ~0.1 us).
      if ((n & 7) === 0 && performance.now() >= deadline) break;
    }
    return n;
  }

  /** Drives the heap from one real Node timer until stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.arm();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    this.timerAt = Infinity;
  }

  /** Drops every pending wake-up (at the end of a run). */
  clear(): void {
    for (let i = 0; i < this.size; i++) this.freeSlot(this.heap[i]!);
    this.size = 0;
  }

  // ---- real-time driving ----

  private arm(): void {
    if (!this.running || this.draining) return;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.size === 0) {
      this.timerAt = Infinity;
      return;
    }
    const due = this.nextDueAt();
    this.timerAt = due;
    const delay = Math.max(0, due - this.clock.now());
    // Node clamps delays above 2^31-1 ms; re-arming on wake handles the remainder.
    this.timer = setTimeout(this.onTimer, Math.min(delay, 2 ** 31 - 1));
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    this.drain();
  };

  private drain(): void {
    if (!this.running) return;
    this.draining = true;
    try {
      this.runDue(this.clock.now(), this.sliceMs);
    } finally {
      this.draining = false;
    }
    if (!this.running) return;
    if (this.size > 0 && this.nextDueAt() <= this.clock.now()) {
      // Out of budget with work still due: let I/O callbacks run, then continue.
      this.timerAt = -Infinity; // a new earlier wake-up must not arm a timer meanwhile
      this.immediate = setImmediate(() => {
        this.immediate = undefined;
        this.timerAt = Infinity;
        this.drain();
      });
      return;
    }
    this.arm();
  }

  // ---- slots ----

  private allocSlot(): number {
    const free = this.freeSlots.pop();
    if (free !== undefined) return free;
    const slot = this.slotCount++;
    if (slot >= SLOT_LIMIT) throw new Error(`Scheduler: more than ${SLOT_LIMIT} pending wake-ups`);
    if (slot >= this.dueTimes.length) this.growSlots();
    return slot;
  }

  private freeSlot(slot: number): void {
    this.fns[slot] = undefined;
    this.pos[slot] = -1;
    this.gen[slot] = (this.gen[slot]! + 1) % GEN_LIMIT;
    this.freeSlots.push(slot);
  }

  private growSlots(): void {
    const cap = this.dueTimes.length * 2;
    this.dueTimes = grow(this.dueTimes, cap);
    this.seqs = grow(this.seqs, cap);
    this.gen = grow(this.gen, cap);
    const pos = new Int32Array(cap).fill(-1);
    pos.set(this.pos);
    this.pos = pos;
  }

  // ---- heap ----

  private less(a: number, b: number): boolean {
    const ta = this.dueTimes[a]!;
    const tb = this.dueTimes[b]!;
    return ta < tb || (ta === tb && this.seqs[a]! < this.seqs[b]!);
  }

  private heapPush(slot: number): void {
    if (this.size === this.heap.length) this.heap = grow(this.heap, this.heap.length * 2);
    this.heap[this.size] = slot;
    this.pos[slot] = this.size;
    this.size++;
    this.siftUp(this.size - 1);
  }

  private heapRemoveAt(i: number): void {
    const last = --this.size;
    const removed = this.heap[i]!;
    this.pos[removed] = -1;
    if (i === last) return;
    const moved = this.heap[last]!;
    this.heap[i] = moved;
    this.pos[moved] = i;
    if (i > 0 && this.less(moved, this.heap[(i - 1) >> 1]!)) this.siftUp(i);
    else this.siftDown(i);
  }

  private siftUp(i: number): void {
    const h = this.heap;
    const slot = h[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const ps = h[parent]!;
      if (!this.less(slot, ps)) break;
      h[i] = ps;
      this.pos[ps] = i;
      i = parent;
    }
    h[i] = slot;
    this.pos[slot] = i;
  }

  private siftDown(i: number): void {
    const h = this.heap;
    const n = this.size;
    const slot = h[i]!;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      const right = child + 1;
      if (right < n && this.less(h[right]!, h[child]!)) child = right;
      const cs = h[child]!;
      if (!this.less(cs, slot)) break;
      h[i] = cs;
      this.pos[cs] = i;
      i = child;
    }
    h[i] = slot;
    this.pos[slot] = i;
  }
}

function grow<T extends Float64Array | Uint32Array | Int32Array>(arr: T, cap: number): T {
  const next = new (arr.constructor as new (n: number) => T)(cap);
  next.set(arr);
  return next;
}

/** The first point of the grid (phase + k·step) at or after `at`. */
export function onGrid(at: Millis, stepMs: number, phaseMs: number): Millis {
  return phaseMs + Math.ceil((at - phaseMs) / stepMs) * stepMs;
}

/** A worker's grid phase: spread over the step by the golden ratio of its first fleet index, so
 *  any number of workers and shards land on different instants without knowing of each other. */
export function tickPhaseOf(firstFleetIndex: number, stepMs: number): number {
  const golden = 0.6180339887498949;
  return ((firstFleetIndex * golden) % 1) * stepMs;
}
