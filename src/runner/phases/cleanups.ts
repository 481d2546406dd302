// What a run has to undo (threads, servers, timers, signal handlers), added by the phase that
// started it and run in reverse order once the run ends, however it ends.

export type Cleanup = () => Promise<void> | void;

export class Cleanups {
  private readonly list: Cleanup[] = [];

  add(c: Cleanup): void {
    this.list.push(c);
  }

  /** Runs every cleanup, newest first; a failing one is reported and the rest still run. */
  async runAll(err: (text: string) => void): Promise<void> {
    for (const c of this.list.reverse()) {
      try {
        await c();
      } catch (e) {
        err(`evesim: while shutting down: ${(e as Error).message}\n`);
      }
    }
    this.list.length = 0;
  }
}
