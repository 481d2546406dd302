// The benchmarks' options (bench/bench-args.ts): both `--name value` and `--name=value` are read, so
// an option written either way is never taken for absent. The check every bench makes first
// (validateBenchArgs, checkBenchArgs): --help answered, an unknown or misspelt option, a value
// missing or given to a flag, a stray argument refused with exit 2; and, over the bench sources,
// that every option a bench reads is in the list it checks against, as a flag or as an option with
// a value the way it is read, so an option added later cannot be left out.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  checkBenchArgs,
  describeBenchOptions,
  envAssignmentsArg,
  hasArg,
  optionalStringArg,
  positiveIntArg,
  stringArg,
  validateBenchArgs,
} from '../bench/bench-args.js';

const argv = ['node', 'bench.js', '--sizes', '2000,5000', '--baseline-node-options=--max-semi-space-size=64', '--trace-gc', '--workers=3'];

describe('bench options', () => {
  it('reads a value given after the option or after an equals sign', () => {
    expect(optionalStringArg('sizes', argv)).toBe('2000,5000');
    // Only the first "=" separates: the value may hold its own.
    expect(optionalStringArg('baseline-node-options', argv)).toBe('--max-semi-space-size=64');
    expect(positiveIntArg('workers', 1, argv)).toBe(3);
    expect(stringArg('sizes', 'x', argv)).toBe('2000,5000');
  });

  it('tells a present option from an absent one, without mistaking a longer name', () => {
    expect(hasArg('trace-gc', argv)).toBe(true);
    expect(hasArg('baseline-node-options', argv)).toBe(true);
    expect(hasArg('workers', argv)).toBe(true);
    expect(hasArg('baseline', argv)).toBe(false);
    expect(hasArg('trace', argv)).toBe(false);
    expect(optionalStringArg('tick', argv)).toBeUndefined();
    expect(stringArg('tick', '50ms', argv)).toBe('50ms');
    expect(positiveIntArg('devices', 7, argv)).toBe(7);
  });

  it('names the option whose value is missing or wrong', () => {
    expect(() => optionalStringArg('tick', ['node', 'b.js', '--tick'])).toThrow('--tick needs a value');
    expect(() => positiveIntArg('workers', 1, ['node', 'b.js', '--workers=0'])).toThrow('--workers needs a positive integer, got 0');
  });

  it('reads environment assignments, a value keeping its own "=", and names a part that is not one', () => {
    expect(envAssignmentsArg('baseline-env', ['node', 'b.js', '--baseline-env=EVESIM_HEAP_GROWING_PERCENT=0'])).toEqual({ EVESIM_HEAP_GROWING_PERCENT: '0' });
    expect(envAssignmentsArg('baseline-env', ['node', 'b.js', '--baseline-env', 'A=1,B_2=x=y,C='])).toEqual({ A: '1', B_2: 'x=y', C: '' });
    expect(envAssignmentsArg('baseline-env', ['node', 'b.js'])).toEqual({});
    expect(() => envAssignmentsArg('baseline-env', ['node', 'b.js', '--baseline-env', 'A=1,2B=3'])).toThrow('--baseline-env: "2B=3" is not NAME=value');
  });
});

describe('the check of a bench command line', () => {
  const spec = ['find-max', 'trace-gc', 'sizes=', 'baseline-node-options=', 'workers='];
  const check = (...args: string[]) => validateBenchArgs(spec, ['node', 'dist/bench/fleet-capacity.js', ...args]);
  const error = (...args: string[]) => {
    const v = check(...args);
    return v.kind === 'error' ? v.message : `not an error: ${v.kind}`;
  };

  it('passes known flags, and known options in both forms', () => {
    expect(check()).toEqual({ kind: 'ok' });
    expect(check('--find-max', '--sizes', '5000', '--workers=3', '--trace-gc')).toEqual({ kind: 'ok' });
    expect(check('--sizes=2000,5000', '--baseline-node-options=--max-semi-space-size=64')).toEqual({ kind: 'ok' });
    // The next argument is the value whatever it is, as optionalStringArg reads it.
    expect(check('--baseline-node-options', '--max-semi-space-size=64', '--find-max')).toEqual({ kind: 'ok' });
    expect(check('--sizes=')).toEqual({ kind: 'ok' });
  });

  it('refuses an unknown option, naming it, in either form', () => {
    expect(error('--sizes', '5000', '--nope')).toBe('unknown option --nope');
    expect(error('--nope=1')).toBe('unknown option --nope');
    expect(error('-x')).toBe('unknown option -x');
    expect(error('--')).toBe('unknown option --');
  });

  it('suggests the known option a misspelt one is nearest to', () => {
    expect(error('--size', '5000')).toBe('unknown option --size (did you mean --sizes?)');
    expect(error('--find-mx')).toBe('unknown option --find-mx (did you mean --find-max?)');
    expect(error('--trace')).toBe('unknown option --trace');
  });

  it('refuses an option that takes a value given last without one', () => {
    expect(error('--sizes')).toBe('--sizes needs a value');
    expect(error('--find-max', '--workers')).toBe('--workers needs a value');
  });

  it('refuses a value given to a flag, a stray argument and an option given twice', () => {
    expect(error('--find-max=yes')).toBe('--find-max takes no value (got --find-max=yes)');
    expect(error('--find-max', '5000')).toBe('unexpected argument "5000" (--find-max takes no value)');
    expect(error('5000')).toBe('unexpected argument "5000"');
    expect(error('--sizes', '2000', '5000')).toBe('unexpected argument "5000"');
    expect(error('--sizes', '2000', '--sizes=5000')).toBe('--sizes given twice');
  });

  it('recognises --help and -h anywhere but in an option\'s value', () => {
    expect(check('--help')).toEqual({ kind: 'help' });
    expect(check('-h')).toEqual({ kind: 'help' });
    expect(check('--size', '5000', '--help')).toEqual({ kind: 'help' });
    expect(check('--baseline-node-options', '--help')).toEqual({ kind: 'ok' });
  });

  it('takes a positional argument first, and only where the spec has one', () => {
    const withFile = (...args: string[]) => validateBenchArgs(['<FILE.cpuprofile>', 'top=', 'by-owner'], ['node', 'long-turns.js', ...args]);
    expect(withFile('p.cpuprofile', '--top', '5', '--by-owner')).toEqual({ kind: 'ok' });
    expect(withFile('--help')).toEqual({ kind: 'help' });
    expect(withFile()).toEqual({ kind: 'error', message: 'missing FILE.cpuprofile' });
    expect(withFile('--top', '5', 'p.cpuprofile')).toEqual({ kind: 'error', message: 'FILE.cpuprofile must come first, before any option (got --top)' });
    expect(withFile('a.cpuprofile', 'b.cpuprofile')).toEqual({ kind: 'error', message: 'unexpected argument "b.cpuprofile"' });
    expect(withFile('--tops', '5', 'p.cpuprofile')).toEqual({ kind: 'error', message: 'unknown option --tops (did you mean --top?)' });
  });

  it('refuses a spec entry that is neither a flag, an option with a value nor a positional', () => {
    expect(() => validateBenchArgs(['--sizes'], ['node', 'b.js'])).toThrow('"--sizes" is neither');
  });

  it('lists the options, those with a value marked', () => {
    expect(describeBenchOptions(spec)).toBe('--find-max, --trace-gc, --sizes V, --baseline-node-options V, --workers V');
    expect(describeBenchOptions([])).toBe('(none)');
  });
});

describe('checkBenchArgs: what a bench prints and how it exits', () => {
  afterEach(() => vi.restoreAllMocks());
  /** Runs the check with process.exit made to throw; the exit code (undefined when it returned) and the output. */
  const run = (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((s: string) => void out.push(s));
    vi.spyOn(console, 'error').mockImplementation((s: string) => void err.push(s));
    vi.spyOn(process, 'exit').mockImplementation((code) => {
      throw new Error(`exit ${code}`);
    });
    let exit: string | undefined;
    try {
      checkBenchArgs('fleet-capacity: what it measures.\n  node dist/bench/fleet-capacity.js [--sizes N]', ['find-max', 'sizes='], ['node', '/x/dist/bench/fleet-capacity.js', ...args]);
    } catch (e) {
      exit = (e as Error).message;
    }
    return { exit, out: out.join('\n'), err: err.join('\n') };
  };

  it('returns on a good command line', () => {
    expect(run('--sizes', '5000')).toEqual({ exit: undefined, out: '', err: '' });
  });

  it('prints the usage and the options to stdout on --help, and exits 0', () => {
    const r = run('--help');
    expect(r.exit).toBe('exit 0');
    expect(r.out).toContain('node dist/bench/fleet-capacity.js [--sizes N]');
    expect(r.out).toContain('options: --find-max, --sizes V');
    expect(r.err).toBe('');
  });

  it('names the bench, the unknown option, the nearest and every known one on stderr, and exits 2', () => {
    const r = run('--size', '5000');
    expect(r.exit).toBe('exit 2');
    expect(r.out).toBe('');
    expect(r.err).toContain('fleet-capacity: unknown option --size (did you mean --sizes?)');
    expect(r.err).toContain('known options: --find-max, --sizes V');
  });
});

// ------------------------------------------------------------------------------------------------
// Every bench script checks its command line, against every option it reads.

const benchDir = fileURLToPath(new URL('../bench/', import.meta.url));
/** bench/*.ts that are not benchmarks of their own: modules the benches import, or (throughput-servers) the child controller-throughput forks, which takes no options. */
const HELPERS = new Set([
  'bench-args.ts',
  'cpu-profile-summary.ts',
  'fleet-capacity-figures.ts',
  'gc-trace.ts',
  'heap-snapshot-tally.ts',
  'machine.ts',
  'median.ts',
  'precreated-identities.ts',
  'signed-request-floor.ts',
  'sink-process.ts',
  'sim-time.ts',
  'storm-controller.ts',
  'thread-schedule.ts',
  'throughput-servers.ts',
]);
const sources = readdirSync(benchDir)
  .filter((f) => f.endsWith('.ts'))
  .sort()
  .map((f) => ({ file: f, src: readFileSync(join(benchDir, f), 'utf8') }));
const scripts = sources.filter((s) => !HELPERS.has(s.file));

/** A name a bench reads, at its offset in the source; `value` unless only ever tested for presence. */
interface Read {
  name: string;
  kind: 'flag' | 'value';
  at: number;
}

/**
 * The options a bench source reads: the bench-args helpers (`hasArg('x'` a flag, any other `…Arg('x'`
 * an option with a value), `process.argv.includes('--x')` (a flag), the defaults object of a
 * parseArgs over process.argv (`const a: Args = { x: 1, … }`, options with a value) and
 * `process.argv[N]` (positional arguments, N ≥ 2). Any other use of process.argv is reported as
 * unknown, so a new way of reading options makes this test fail until it is taught it.
 */
function optionsRead(src: string): { reads: Read[]; positionals: number; unknownArgv: string[] } {
  const reads: Read[] = [];
  for (const m of src.matchAll(/\b([a-z]\w*Arg)\(\s*['"`]([^'"`]+)['"`]/g)) reads.push({ name: m[2]!, kind: m[1] === 'hasArg' ? 'flag' : 'value', at: m.index! });
  for (const m of src.matchAll(/\bprocess\.argv\.includes\(\s*['"`]--([^'"`]+)['"`]\s*\)/g)) reads.push({ name: m[1]!, kind: 'flag', at: m.index! });
  const parsed = /\bparseArgs\(\s*process\.argv\.slice\(2\)\s*\)/.test(src) ? /:\s*Args\s*=\s*\{([^}]*)\}/.exec(src) : null;
  if (parsed) for (const m of parsed[1]!.matchAll(/([a-z][\w-]*)\s*:/g)) reads.push({ name: m[1]!, kind: 'value', at: parsed.index });
  let positionals = 0;
  const unknownArgv: string[] = [];
  for (const m of src.matchAll(/\bprocess\.argv\b(.{0,24})/g)) {
    const rest = m[1]!;
    const index = /^\[(\d+)\]/.exec(rest);
    if (index) {
      const n = Number(index[1]);
      if (n >= 2) {
        positionals = Math.max(positionals, n - 1);
        reads.push({ name: `argv[${n}]`, kind: 'value', at: m.index! });
      }
    } else if (!/^\.includes\(\s*['"`]--/.test(rest) && !(parsed && /^\.slice\(2\)/.test(rest))) {
      unknownArgv.push(`process.argv${rest.split('\n')[0]}`);
    }
  }
  return { reads, positionals, unknownArgv };
}

describe('every bench checks its command line against the options it reads', () => {
  it('finds the bench scripts', () => {
    expect(scripts.map((s) => s.file)).toEqual(expect.arrayContaining(['fleet-capacity.ts', 'onboarding-storm.ts', 'controller-throughput.ts', 'heap-breakdown.ts']));
    expect(scripts.length).toBeGreaterThanOrEqual(20);
  });

  it('leaves the helper modules without options of their own', () => {
    const found = sources
      .filter((s) => HELPERS.has(s.file) && s.file !== 'bench-args.ts')
      .flatMap((s) => {
        const r = optionsRead(s.src);
        return [...r.reads.map((x) => `${s.file} reads ${x.name}`), ...r.unknownArgv.map((x) => `${s.file}: ${x}`), ...(/checkBenchArgs\(/.test(s.src) ? [`${s.file} checks options: not a helper?`] : [])];
      });
    expect(found).toEqual([]);
  });

  for (const { file, src } of scripts) {
    it(file, () => {
      const calls = [...src.matchAll(/\bcheckBenchArgs\(\s*USAGE\s*,\s*\[([^\]]*)\]\s*\)/g)];
      expect(calls.length, `${file}: one checkBenchArgs(USAGE, [...]) call`).toBe(1);
      expect(src.match(/\bcheckBenchArgs\(/g)?.length, `${file}: checkBenchArgs called once`).toBe(1);
      const call = calls[0]!;
      const spec = [...call[1]!.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
      expect(() => validateBenchArgs(spec, ['node', file])).not.toThrow(/neither/);

      const { reads, positionals, unknownArgv } = optionsRead(src);
      expect(unknownArgv, `${file}: process.argv read in a way this test does not know`).toEqual([]);
      const kinds = new Map<string, 'flag' | 'value'>();
      for (const r of reads) if (!r.name.startsWith('argv[')) kinds.set(r.name, kinds.get(r.name) === 'value' ? 'value' : r.kind);
      // Every option read is in the list, as the kind it is read as.
      const missing = [...kinds].filter(([name, kind]) => !spec.includes(kind === 'value' ? `${name}=` : name)).map(([name, kind]) => `--${name} (${kind})`);
      expect(missing, `${file}: options read but not in its checkBenchArgs list (or listed as the other kind)`).toEqual([]);
      // And nothing in the list that the bench does not read.
      const stale = spec.filter((e) => !e.startsWith('<') && !kinds.has(e.replace(/=$/, '')));
      expect(stale, `${file}: listed but never read`).toEqual([]);
      expect(spec.filter((e) => e.startsWith('<')).length, `${file}: positional arguments read as process.argv[2…]`).toBe(positionals);
      // The check comes before the first option is read.
      const first = Math.min(...reads.map((r) => r.at));
      expect(call.index!, `${file}: checkBenchArgs before the first option read`).toBeLessThan(first);
    });
  }
});
