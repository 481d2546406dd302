// Errors in a scenario file, each naming file, line, column and field path, all collected so the
// user fixes them in one pass instead of one run per typo.

/** One problem in a scenario. line/column are 1-based (0 when it has no place in the file, e.g. a
 *  command-line override or an unreadable file); path like `groups[0].configItems["timer.config.interval"]`. */
export interface ScenarioIssue {
  file: string;
  line: number;
  column: number;
  /** Empty for problems of the document as a whole (e.g. YAML syntax). */
  path: string;
  message: string;
}

export class ScenarioError extends Error {
  readonly errors: ScenarioIssue[];

  constructor(errors: ScenarioIssue[]) {
    super(errors.map(formatIssue).join('\n'));
    this.name = 'ScenarioError';
    this.errors = errors;
  }
}

/** `scenarios/x.yaml:12:7: groups[0].count: must be an integer ≥ 1 (got "ten")` */
export function formatIssue(issue: ScenarioIssue): string {
  const where = issue.line > 0 ? `${issue.file}:${issue.line}:${issue.column}` : issue.file;
  return issue.path ? `${where}: ${issue.path}: ${issue.message}` : `${where}: ${issue.message}`;
}

export type PathSegment = string | number;

/** Field path as users read it: `groups[0].apps[1].name`, `configItems["timer.config.interval"]`. */
export function formatPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** A value shown inside a message, short enough for one line. */
export function showValue(v: unknown): string {
  let s: string;
  try {
    s = v === undefined ? 'nothing' : JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
