// When the run phase ends: at the scenario's planned end, or earlier when the caller ends it
// (RunScenarioOptions.endRunPhase, e.g. a test once what it waits for has happened). The drain
// phase waits for it; the measured window ends with it.

export class RunPhaseEnd {
  /** Epoch ms the run phase ended early at; undefined until (and unless) end() is called first. */
  endedEarlyAtMs: number | undefined;
  /** Settles with the epoch ms the run phase ended at (planned or early). */
  readonly ended: Promise<number>;
  private resolve: (atMs: number) => void = () => {};
  private readonly timer: NodeJS.Timeout;
  private done = false;

  constructor(
    private readonly startAtMs: number,
    readonly plannedEndMs: number,
  ) {
    this.ended = new Promise<number>((r) => (this.resolve = r));
    this.timer = setTimeout(() => this.finish(plannedEndMs), Math.max(0, plannedEndMs - Date.now()));
  }

  /** Ends the run phase now (not before the start: a run ended before it starts lasts no time). */
  end(nowMs = Date.now()): void {
    if (this.done) return;
    this.endedEarlyAtMs = Math.min(this.plannedEndMs, Math.max(this.startAtMs, nowMs));
    this.finish(this.endedEarlyAtMs);
  }

  /** The end of the measured window, epoch ms: the planned end, the early end, or `nowMs` when before both (Ctrl-C). */
  windowEndMs(nowMs = Date.now()): number {
    return Math.min(nowMs, this.plannedEndMs, this.endedEarlyAtMs ?? Infinity);
  }

  /** Drops the timer (cleanup): a long planned duration must not keep the process alive. */
  dispose(): void {
    clearTimeout(this.timer);
  }

  private finish(atMs: number): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.resolve(atMs);
  }
}
