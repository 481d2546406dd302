// Reads a scenario YAML file into the normalised Scenario, or throws a ScenarioError listing every
// problem with file:line:column and field path. Steps: YAML syntax → JSON schema (ajv) → rules the
// schema cannot express → defaults and units → command-line overrides.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { buildScenario, type ScenarioDocument } from './build-scenario.js';
import { checkScenario } from './check-scenario.js';
import { checkLimits } from './check-limits.js';
import { MAX_FLEET_DEVICES, MAX_TIMER_MS } from './scenario-limits.js';
import { SCENARIO_SCHEMA } from './scenario-schema.js';
import { IssueCollector } from './issue-collector.js';
import { formatDuration } from './parse-duration.js';
import { scaleGroupCounts } from './scale-groups.js';
import { appendFaults } from '../faults/fault-flags.js';
import { resolveThresholdBases } from './threshold-basis.js';
import { ScenarioError, type ScenarioIssue } from './scenario-error.js';
import type { Scenario, TargetSpec } from './scenario-types.js';
import { validateSchema } from './validate-schema.js';
import { YamlLocator } from './yaml-locator.js';

/** Command-line overrides (`--devices`, `--duration`, `--seed`, `--target`). */
export interface ScenarioOverrides {
  /** Total devices; group counts are scaled in proportion, each group keeping ≥ 1. */
  devices?: number;
  /** Run length in ms. Timeline times stay absolute; actions at or after the new end are dropped
   *  with a warning. */
  durationMs?: number;
  /** `--arrival-over`: devices come online evenly spread over this window, ms (replaces the file's
   *  arrival; a 'poisson' arrival keeps its model at the new mean rate). */
  arrivalOverMs?: number;
  /** `--graceful-stop`: replaces the file's gracefulStop, ms (0: no drain). */
  gracefulStopMs?: number;
  seed?: number;
  /** `--fault` flags (src/faults/fault-flags.ts), appended to the timeline. */
  faults?: readonly import('../faults/fault-spec.js').FaultAction[];
  /** Replaces the file's target (its certificate files are then not checked). */
  target?: TargetSpec;
}

export function loadScenario(file: string, overrides: ScenarioOverrides = {}): Scenario {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const reason = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new ScenarioError([{ file, line: 0, column: 0, path: '', message: `cannot read the file (${reason})` }]);
  }
  return parseScenario(text, file, overrides, { baseDir: dirname(resolve(file)) });
}

export interface ParseOptions {
  /** Directory for relative target file paths; default: the current directory. */
  baseDir?: string;
}

/** Like loadScenario, from text already in memory (`file` is used in messages). */
export function parseScenario(
  text: string,
  file: string,
  overrides: ScenarioOverrides = {},
  opts: ParseOptions = {},
): Scenario {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, merge: true, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ScenarioError(
      doc.errors.map((e): ScenarioIssue => {
        const pos = e.linePos?.[0] ?? { line: 0, col: 0 };
        const opener = unclosedOpener(text, e.pos[0], e.message);
        if (opener) {
          const at = lineCounter.linePos(opener.offset);
          return {
            file,
            line: at.line,
            column: at.col,
            path: '',
            message: `YAML syntax: this ${opener.char} is never closed (noticed at line ${pos.line}, column ${pos.col})`,
          };
        }
        return { file, line: pos.line, column: pos.col, path: '', message: `YAML syntax: ${firstLine(e.message)}` };
      }),
    );
  }
  const issues = new IssueCollector(file, new YamlLocator(doc, lineCounter));
  if (doc.contents === null) {
    issues.error([], 'the file is empty; a scenario needs at least duration and groups');
    throw new ScenarioError(issues.errors);
  }
  let plain: unknown;
  try {
    plain = doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    issues.error([], `YAML: ${(e as Error).message}`);
    throw new ScenarioError(issues.errors);
  }
  for (const w of doc.warnings) {
    const pos = w.linePos?.[0];
    issues.warnings.push({ file, line: pos?.line ?? 0, column: pos?.col ?? 0, path: '', message: firstLine(w.message) });
  }

  const baseDir = opts.baseDir ?? process.cwd();
  validateSchema(plain, issues);
  checkScenario(plain, issues, { baseDir, checkTargetFiles: overrides.target === undefined });
  checkLimits(plain, SCENARIO_SCHEMA, issues);
  if (issues.errors.length > 0) throw new ScenarioError(issues.sorted(issues.errors));

  const { scenario, arrivalOverMs } = buildScenario(plain as ScenarioDocument, file, baseDir);
  applyOverrides(scenario, overrides, issues);
  if (issues.errors.length > 0) throw new ScenarioError(issues.errors);
  // Per-device thresholds count the devices of the groups as scaled by --devices.
  resolveThresholdBases(scenario);

  const overMs = overrides.arrivalOverMs ?? arrivalOverMs;
  if (overMs !== undefined) {
    scenario.arrival.ratePerSec = totalDevices(scenario) / (overMs / 1000);
  }
  // Stable sort: actions at the same time keep file order.
  scenario.timeline.sort((a, b) => a.atMs - b.atMs);
  const warnings = issues.formattedWarnings();
  if (warnings.length > 0) scenario.warnings = warnings;
  return scenario;
}

export function totalDevices(scenario: Pick<Scenario, 'groups'>): number {
  return scenario.groups.reduce((n, g) => n + g.count, 0);
}

function applyOverrides(scenario: Scenario, o: ScenarioOverrides, issues: IssueCollector): void {
  if (o.devices !== undefined) {
    if (!Number.isInteger(o.devices) || o.devices < 1) {
      issues.errorOutsideFile('--devices', `must be an integer ≥ 1 (got ${o.devices})`);
    } else if (o.devices > MAX_FLEET_DEVICES) {
      issues.errorOutsideFile('--devices', `must be from 1 to ${MAX_FLEET_DEVICES}, the most devices of one fleet (got ${o.devices})`);
    } else if (o.devices < scenario.groups.length) {
      issues.errorOutsideFile(
        '--devices',
        `must be at least ${scenario.groups.length}, the number of groups, so each group keeps a device (got ${o.devices})`,
      );
    } else {
      const counts = scaleGroupCounts(
        scenario.groups.map((g) => g.count),
        o.devices,
      );
      scenario.groups.forEach((g, i) => (g.count = counts[i]));
    }
  }
  for (const [flag, ms] of [['--arrival-over', o.arrivalOverMs], ['--duration', o.durationMs], ['--graceful-stop', o.gracefulStopMs]] as const) {
    if (ms !== undefined && ms > MAX_TIMER_MS) {
      issues.errorOutsideFile(flag, `must be at most ${formatDuration(MAX_TIMER_MS)}, the longest timer Node.js can set (got ${formatDuration(ms)})`);
      return;
    }
  }
  if (o.arrivalOverMs !== undefined) {
    if (!Number.isFinite(o.arrivalOverMs) || o.arrivalOverMs <= 0) {
      issues.errorOutsideFile('--arrival-over', `must be longer than 0 (got ${o.arrivalOverMs} ms)`);
    } else if (scenario.arrival.model === 'all-at-once') scenario.arrival.model = 'uniform';
  }
  if (o.durationMs !== undefined) {
    if (!Number.isFinite(o.durationMs) || o.durationMs <= 0) {
      issues.errorOutsideFile('--duration', `must be longer than 0 (got ${o.durationMs} ms)`);
    } else {
      scenario.durationMs = o.durationMs;
      const kept = scenario.timeline.filter((t, i) => {
        if (t.atMs < o.durationMs!) return true;
        issues.warn(
          ['timeline', i, 'at'],
          `dropped: --duration ${formatDuration(o.durationMs!)} ends the run before this ${t.action} action`,
        );
        return false;
      });
      scenario.timeline = kept;
    }
  }
  if (o.gracefulStopMs !== undefined) {
    if (!Number.isFinite(o.gracefulStopMs) || o.gracefulStopMs < 0) {
      issues.errorOutsideFile('--graceful-stop', `must be 0 or longer (got ${o.gracefulStopMs} ms)`);
    } else {
      scenario.gracefulStopMs = o.gracefulStopMs;
    }
  }
  if (o.seed !== undefined) {
    if (!Number.isInteger(o.seed) || o.seed < 0 || o.seed > 4294967295) {
      issues.errorOutsideFile('--seed', `must be an integer from 0 to 4294967295 (got ${o.seed})`);
    } else {
      scenario.seed = o.seed;
    }
  }
  if (o.target !== undefined) scenario.target = o.target;
  if (o.faults !== undefined) for (const p of appendFaults(scenario, o.faults)) issues.errorOutsideFile('--fault', p);
}

/** For "flow sequence/map must end with ]/}": the unmatched bracket, so the error names the line
 *  the user has to fix rather than the line where the parser gave up. Quotes are not tracked: a
 *  heuristic for the message only. */
function unclosedOpener(text: string, offset: number, message: string): { offset: number; char: string } | undefined {
  const m = /^Flow (sequence|map) .*end with a ([\]}])/.exec(message);
  if (!m) return undefined;
  const close = m[2];
  const open = close === ']' ? '[' : '{';
  let depth = 0;
  for (let i = Math.min(offset, text.length) - 1; i >= 0; i--) {
    if (text[i] === close) depth++;
    else if (text[i] === open) {
      if (depth === 0) return { offset: i, char: open };
      depth--;
    }
  }
  return undefined;
}

function firstLine(message: string): string {
  // yaml's pretty messages append " at line L, column C:" and a source excerpt; we print our own position.
  return message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}
