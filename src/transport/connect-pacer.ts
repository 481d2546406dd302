// Spreads bursts of new connections. Thousands of devices share a handful of pooled sockets; when
// the controller restarts or a load balancer drops them all, every socket reconnects at once and
// the controller sees a synchronised TLS handshake storm (and so does our CPU: ~1.5 ms each).
// A lone connect starts at once; a connect that arrives while others are in flight or waiting
// starts after a random delay in [0, jitterMs), and never more than maxConcurrent handshakes run
// together.

export interface ConnectPacerOptions {
  /** Most handshakes in flight at once. */
  maxConcurrent: number;
  /** Upper bound of the random delay given to a connect that is part of a burst. 0 = no delay. */
  jitterMs: number;
  /** Uniform [0, 1); injectable for tests. */
  random?: () => number;
}

export interface ConnectPacerStats {
  /** Connects currently running (between start and done). */
  inFlight: number;
  /** Connects waiting for their jitter delay or a free slot. */
  waiting: number;
  /** Connects that were delayed because they were part of a burst. */
  paced: number;
}

/** Call `done` exactly once when the connect attempt has finished (success or failure). */
export type PacedStart = (done: () => void) => void;

export class ConnectPacer {
  private inFlight = 0;
  private delayed = 0;
  private paced = 0;
  private readonly ready: PacedStart[] = [];
  private readonly random: () => number;

  constructor(private readonly opts: ConnectPacerOptions) {
    if (!(opts.maxConcurrent >= 1)) throw new Error(`ConnectPacer: maxConcurrent must be >= 1, got ${opts.maxConcurrent}`);
    if (!(opts.jitterMs >= 0)) throw new Error(`ConnectPacer: jitterMs must be >= 0, got ${opts.jitterMs}`);
    this.random = opts.random ?? Math.random;
  }

  /** Runs `start` now, or later if a burst is under way. */
  run(start: PacedStart): void {
    const burst = this.inFlight > 0 || this.delayed > 0 || this.ready.length > 0;
    if (!burst) {
      this.launch(start);
      return;
    }
    this.paced++;
    const delay = this.opts.jitterMs > 0 ? Math.floor(this.random() * this.opts.jitterMs) : 0;
    if (delay === 0) {
      this.enqueue(start);
      return;
    }
    this.delayed++;
    setTimeout(() => {
      this.delayed--;
      this.enqueue(start);
    }, delay);
  }

  stats(): ConnectPacerStats {
    return { inFlight: this.inFlight, waiting: this.delayed + this.ready.length, paced: this.paced };
  }

  private enqueue(start: PacedStart): void {
    if (this.inFlight < this.opts.maxConcurrent) this.launch(start);
    else this.ready.push(start);
  }

  private launch(start: PacedStart): void {
    this.inFlight++;
    let finished = false;
    const done = (): void => {
      if (finished) return;
      finished = true;
      this.inFlight--;
      const next = this.ready.shift();
      if (next) this.launch(next);
    };
    try {
      start(done);
    } catch (err) {
      done();
      throw err;
    }
  }
}
