// Command-line options of the benchmarks: `--name value` or `--name=value`, with a default when
// absent. (A `--name=value` once went unread here while the option counted as absent, so a
// before/after pair ran both sides alike.)

/** The value of --name in either form, undefined when the option is absent; --name last, with no value, is an error. */
export function optionalStringArg(name: string, argv: readonly string[] = process.argv): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
    if (a === `--${name}`) {
      if (i + 1 >= argv.length) throw new Error(`--${name} needs a value`);
      return argv[i + 1]!;
    }
  }
  return undefined;
}

/** Whether --name is given, as a flag or with a value in either form. */
export function hasArg(name: string, argv: readonly string[] = process.argv): boolean {
  return argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
}

export function stringArg(name: string, fallback: string, argv: readonly string[] = process.argv): string {
  return optionalStringArg(name, argv) ?? fallback;
}

/** A positive integer option; anything else given is an error naming the option. */
export function positiveIntArg(name: string, fallback: number, argv: readonly string[] = process.argv): number {
  const raw = optionalStringArg(name, argv);
  if (raw === undefined) return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} needs a positive integer, got ${raw}`);
  return v;
}

/**
 * Environment assignments given as `NAME=value[,NAME=value…]` (a before/after pair of this checkout
 * with another environment, say); an empty object when the option is absent.
 */
export function envAssignmentsArg(name: string, argv: readonly string[] = process.argv): Record<string, string> {
  const raw = optionalStringArg(name, argv);
  const out: Record<string, string> = {};
  if (raw === undefined) return out;
  for (const part of raw.split(',')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(part);
    if (!m) throw new Error(`--${name}: "${part}" is not NAME=value`);
    out[m[1]!] = m[2]!;
  }
  return out;
}
