// The size of V8's platform thread pool, read from the process's flags, for the run summary. Node
// starts four threads by default, shared by every isolate of the process (the main thread and each
// fleet worker); they do the concurrent parts of GC (marking, sweeping) and compilation. On two
// cores, a major GC's marking on all four takes the cores from both fleet workers at once (the
// stalls fleet-capacity's thread figures show), but one thread (`node --v8-pool-size=1`) did not
// hold a larger fleet in the pairs measured (bench/README.md, "V8's thread pool"), so evesim keeps
// Node's default and records what a run had: a user's `--v8-pool-size` in Node's flags or
// NODE_OPTIONS passes on to the run.

/** Node's default when no --v8-pool-size is given. */
export const NODE_DEFAULT_V8_POOL_SIZE = 4;

/** The --v8-pool-size in Node flags (`--v8-pool-size=N` or `--v8-pool-size N`), the last one winning; undefined when none. */
export function poolSizeInFlags(flags: readonly string[]): number | undefined {
  const tokens = flags.flatMap((f) => f.trim().split(/\s+/)).filter((t) => t !== '');
  let size: number | undefined;
  tokens.forEach((t, i) => {
    if (t.startsWith('--v8-pool-size=')) size = Number(t.slice('--v8-pool-size='.length));
    else if (t === '--v8-pool-size' && i + 1 < tokens.length) size = Number(tokens[i + 1]);
  });
  return size;
}

/** This process's V8 pool size, from its flags (the command line over NODE_OPTIONS; Node's default when none). 0: Node chose from the core count. */
export function processV8PoolSize(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS): number {
  return poolSizeInFlags([nodeOptions ?? '', ...execArgv]) ?? NODE_DEFAULT_V8_POOL_SIZE;
}
