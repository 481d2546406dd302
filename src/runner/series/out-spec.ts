// `--out FORMAT=TARGET` (repeatable, as k6's --out): where the run's time series is streamed while
// the run goes. One format today, `jsonl=FILE`; a new format adds its name here and its sink in
// series-sinks.ts. Checked before anything starts, so a typo or an unwritable directory is bad
// input (exit 2), not a failure after the load was made.

import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export const OUT_FORMATS = ['jsonl'] as const;
export type OutFormat = (typeof OUT_FORMATS)[number];

export interface OutSpec {
  format: OutFormat;
  /** For jsonl: the file, as given. */
  target: string;
}

const EXAMPLE = '--out jsonl=series.jsonl';

/** Parses one --out value; throws an Error saying what is wrong and what would be right. */
export function parseOutSpec(text: string): OutSpec {
  const eq = text.indexOf('=');
  const format = (eq < 0 ? text : text.slice(0, eq)).trim();
  if (!(OUT_FORMATS as readonly string[]).includes(format)) {
    throw new Error(`--out ${text}: unknown format "${format}"; known: ${OUT_FORMATS.join(', ')} (e.g. ${EXAMPLE})`);
  }
  const target = eq < 0 ? '' : text.slice(eq + 1).trim();
  if (target === '') throw new Error(`--out ${text}: ${format} needs a file: ${format}=FILE (e.g. ${EXAMPLE})`);
  return { format: format as OutFormat, target };
}

/** Why the target cannot be written, or undefined when it can (the file itself is created or replaced). */
export function outTargetProblem(spec: OutSpec): string | undefined {
  const file = resolve(spec.target);
  const dir = dirname(file);
  try {
    if (!statSync(dir).isDirectory()) return `--out ${spec.format}=${spec.target}: ${dir} is not a directory`;
  } catch {
    return `--out ${spec.format}=${spec.target}: directory ${dir} does not exist`;
  }
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    return `--out ${spec.format}=${spec.target}: directory ${dir} is not writable`;
  }
  try {
    if (statSync(file).isDirectory()) return `--out ${spec.format}=${spec.target}: ${file} is a directory; name a file`;
    accessSync(file, constants.W_OK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return `--out ${spec.format}=${spec.target}: ${file} is not writable`;
  }
  return undefined;
}

/** Parses and checks every --out value; throws the first problem. */
export function checkOutSpecs(values: readonly string[]): OutSpec[] {
  return values.map((v) => {
    const spec = parseOutSpec(v);
    const problem = outTargetProblem(spec);
    if (problem) throw new Error(problem);
    return spec;
  });
}
