// Command-line options of the benchmarks: `--name value`, with a default when absent.

function rawArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

export function stringArg(name: string, fallback: string): string {
  return rawArg(name) ?? fallback;
}

/** A positive integer option; anything else given is an error naming the option. */
export function positiveIntArg(name: string, fallback: number): number {
  const raw = rawArg(name);
  if (raw === undefined) return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} needs a positive integer, got ${raw}`);
  return v;
}
