// `evesim run --help` (compiled CLI): the flags in their groups, the outputs a CI job wants
// together, every flag of a group a real option with a description, and the CI example. Needs
// `npm run build` first.

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RUN_OPTION_GROUPS } from '../src/cli/run-option-groups.js';

const cli = fileURLToPath(new URL('../bin/evesim.js', import.meta.url));

/** Section title → the flags listed under it, in order. */
function sections(help: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of help.split('\n')) {
    if (line === 'Examples:') current = undefined; // wrapped example lines may start with a flag
    else if (/^\S.*:$/.test(line)) out.set(line, (current = []));
    else if (line === '') current = undefined;
    else {
      const m = /^ {2}(--[a-z0-9-]+)\s{2,}\S/.exec(line);
      if (m && current) current.push(m[1]!);
    }
  }
  return out;
}

describe('evesim run --help', () => {
  const help = execFileSync(process.execPath, [cli, 'run', '--help'], { encoding: 'utf8' });
  const shown = sections(help);

  it('lists every output flag under Outputs, with a description', () => {
    expect(shown.get('Outputs:')).toEqual(['--summary-json', '--junit', '--report', '--out', '--record', '--metrics-port', '--metrics-host', '--metrics-linger']);
  });

  it('shows each group with exactly its flags, each described', () => {
    for (const g of RUN_OPTION_GROUPS) expect(shown.get(g.title), g.title).toEqual(g.flags.map((f) => `--${f}`));
    const all = [...shown.values()].flat();
    expect(new Set(all).size).toBe(all.length);
  });

  it('gives the CI example with the exit codes', () => {
    const examples = help.slice(help.indexOf('\nExamples:\n'));
    expect(examples).toContain('--summary-json out/summary.json --junit');
    expect(examples).toContain('out/junit.xml');
    expect(examples).toContain('1 a threshold failed');
  });
});
