// Command-line options of the benchmarks: `--name value` or `--name=value`, with a default when
// absent. (A `--name=value` once went unread here while the option counted as absent, so a
// before/after pair ran both sides alike.) Every bench first calls checkBenchArgs with the options
// it reads, so `--help` prints its usage and an unknown or misspelt option stops it with exit 2
// instead of starting a run on the defaults.

import { basename } from 'node:path';
import { closest } from '../src/scenario/suggest.js';

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

/**
 * What a bench accepts, one entry each: `name` a flag (`--name`, no value), `name=` an option with a
 * value (`--name V` or `--name=V`; in the first form the next argument is the value whatever it is,
 * as optionalStringArg reads it), `<WHAT>` a positional argument, required, before any option (a
 * bench reads it as process.argv[2], …).
 */
export type BenchArgSpec = readonly string[];

export type BenchArgsVerdict = { kind: 'ok' } | { kind: 'help' } | { kind: 'error'; message: string };

const HELP = new Set(['--help', '-h']);

/**
 * The pure check behind checkBenchArgs: `help` when --help or -h is given (outside an option's
 * value), else the first thing wrong with the command line (an unknown option, a value missing or
 * given to a flag, an option given twice, a positional argument missing or not expected), else `ok`.
 */
export function validateBenchArgs(spec: BenchArgSpec, argv: readonly string[]): BenchArgsVerdict {
  const flags = new Set<string>();
  const values = new Set<string>();
  const positionals: string[] = [];
  for (const entry of spec) {
    if (/^<[^<>]+>$/.test(entry)) positionals.push(entry.slice(1, -1));
    else if (/^[a-z0-9][a-z0-9-]*=$/.test(entry)) values.add(entry.slice(0, -1));
    else if (/^[a-z0-9][a-z0-9-]*$/.test(entry)) flags.add(entry);
    else throw new Error(`bench option spec: "${entry}" is neither name, name= nor <WHAT>`);
  }
  const names = [...flags, ...values];
  const args = argv.slice(2);
  let error: string | undefined;
  const fail = (message: string): void => void (error ??= message);
  const seen = new Set<string>();
  let positional = 0;
  /** The flag just before this argument, if it was one: a stray value is most likely meant for it. */
  let lastFlag: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const afterFlag = lastFlag;
    lastFlag = undefined;
    if (HELP.has(a)) return { kind: 'help' };
    if (!a.startsWith('-')) {
      if (positional < positionals.length && i === positional) positional++;
      else fail(`unexpected argument "${a}"${afterFlag !== undefined ? ` (--${afterFlag} takes no value)` : ''}`);
      continue;
    }
    const m = /^--([^=]+)(=(.*))?$/s.exec(a);
    if (!m) {
      fail(`unknown option ${a}`);
      continue;
    }
    const name = m[1]!;
    const hasValue = m[2] !== undefined;
    if (!flags.has(name) && !values.has(name)) {
      const near = closest(name, names);
      fail(`unknown option --${name}${near !== undefined ? ` (did you mean --${near}?)` : ''}`);
      continue;
    }
    if (i < positionals.length && positional === i) fail(`${positionals[i]} must come first, before any option (got ${a})`);
    if (seen.has(name)) fail(`--${name} given twice`);
    seen.add(name);
    if (flags.has(name)) {
      if (hasValue) fail(`--${name} takes no value (got ${a})`);
      lastFlag = name;
    } else if (!hasValue) {
      if (i + 1 >= args.length) fail(`--${name} needs a value`);
      i++;
    }
  }
  if (positional < positionals.length && error === undefined) fail(`missing ${positionals.slice(positional).join(' ')}`);
  return error === undefined ? { kind: 'ok' } : { kind: 'error', message: error };
}

/** The options a spec names, as a help text or an error lists them: `--sizes V, --find-max, …`. */
export function describeBenchOptions(spec: BenchArgSpec): string {
  const opts = spec.filter((e) => !e.startsWith('<')).map((e) => (e.endsWith('=') ? `--${e.slice(0, -1)} V` : `--${e}`));
  return opts.length ? opts.join(', ') : '(none)';
}

/**
 * A bench's first call, before it does anything: with --help or -h prints `usage` (and the options
 * it takes) and exits 0; with an option it does not know, or anything else wrong with the command
 * line (validateBenchArgs), prints what was wrong and the options it knows to stderr and exits 2.
 */
export function checkBenchArgs(usage: string, spec: BenchArgSpec, argv: readonly string[] = process.argv): void {
  const verdict = validateBenchArgs(spec, argv);
  if (verdict.kind === 'ok') return;
  if (verdict.kind === 'help') {
    console.log(`${usage.trimEnd()}\n\noptions: ${describeBenchOptions(spec)}`);
    process.exit(0);
  }
  const bench = basename(argv[1] ?? 'bench').replace(/\.[cm]?[jt]s$/, '');
  console.error(`${bench}: ${verdict.message}\nknown options: ${describeBenchOptions(spec)}\n(--help for usage)`);
  process.exit(2);
}
