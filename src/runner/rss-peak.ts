// The generator process's peak resident set size over the run and the drain, sampled each second
// on the main thread (process.memoryUsage.rss() reads the whole process: main thread, workers and
// native memory). A sample rather than getrusage's lifetime peak, so creating identities before the
// run (a first run of a large fleet) does not count as the run's memory.

const SAMPLE_EVERY_MS = 1000;

export class RssPeak {
  private peak = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly read: () => number = () => process.memoryUsage.rss()) {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_EVERY_MS);
    this.timer.unref();
  }

  sample(): void {
    this.peak = Math.max(this.peak, this.read());
  }

  /** Takes a last sample, stops sampling and gives the peak, bytes. */
  stop(): number {
    clearInterval(this.timer);
    this.sample();
    return this.peak;
  }
}
