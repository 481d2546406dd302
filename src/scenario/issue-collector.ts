// Collects errors and warnings against field paths and resolves each to a file position once.

import { formatIssue, formatPath, type PathSegment, type ScenarioIssue } from './scenario-error.js';
import type { YamlLocator } from './yaml-locator.js';

export class IssueCollector {
  readonly errors: ScenarioIssue[] = [];
  readonly warnings: ScenarioIssue[] = [];
  private readonly seen = new Set<string>();

  constructor(
    readonly file: string,
    private readonly locator?: YamlLocator,
  ) {}

  /** `at: 'key'` points at the field name rather than its value; `shownPath` overrides the printed path. */
  error(path: readonly PathSegment[], message: string, opts: IssueOptions = {}): void {
    this.add(this.errors, path, message, opts);
  }

  warn(path: readonly PathSegment[], message: string, opts: IssueOptions = {}): void {
    this.add(this.warnings, path, message, opts);
  }

  /** An issue with no place in the file (command-line overrides). */
  errorOutsideFile(what: string, message: string): void {
    this.errors.push({ file: this.file, line: 0, column: 0, path: what, message });
  }

  warnOutsideFile(what: string, message: string): void {
    this.warnings.push({ file: this.file, line: 0, column: 0, path: what, message });
  }

  /** Issues in file order. */
  sorted(list: ScenarioIssue[]): ScenarioIssue[] {
    return [...list].sort((a, b) => a.line - b.line || a.column - b.column);
  }

  formattedWarnings(): string[] {
    return this.sorted(this.warnings).map(formatIssue);
  }

  private add(list: ScenarioIssue[], path: readonly PathSegment[], message: string, opts: IssueOptions): void {
    const shown = opts.shownPath ?? formatPath(path);
    // One problem per field is enough: ajv can report a wrong-typed value under several keywords.
    const key = `${list === this.errors ? 'E' : 'W'}|${shown}|${opts.dedupe === false ? message : ''}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const pos = this.locator ? this.locator.locate(path, opts.at) : { line: 0, column: 0 };
    list.push({ file: this.file, line: pos.line, column: pos.column, path: shown, message });
  }
}

export interface IssueOptions {
  at?: 'value' | 'key';
  shownPath?: string;
  /** false: keep this message even if the same field already has another one (several missing fields). */
  dedupe?: boolean;
}
