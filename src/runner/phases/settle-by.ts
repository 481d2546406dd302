// Waits for promises until a deadline: those settled by then keep their outcome, the others count
// as failed with the reason given (a worker stuck past the end of the run is given up on).

/** Settles every task, or marks those still running at `deadline` (epoch ms) as failed. */
export async function settleBy<T>(tasks: Promise<T>[], deadline: number, lateReason: string): Promise<PromiseSettledResult<T>[]> {
  const states: (PromiseSettledResult<T> | undefined)[] = tasks.map(() => undefined);
  tasks.forEach((t, i) =>
    t.then(
      (value) => (states[i] = { status: 'fulfilled', value }),
      (reason: unknown) => (states[i] = { status: 'rejected', reason }),
    ),
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(tasks),
    new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, deadline - Date.now())))),
  ]);
  clearTimeout(timer);
  return states.map((s) => s ?? { status: 'rejected', reason: new Error(lateReason) });
}
