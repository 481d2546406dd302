// `evesim report SUMMARY.json [--html FILE.html]`: the report of a saved run summary (a run's
// --summary-json, or the merged one of `evesim merge`), printed as a run prints it, and with
// --html written as the self-contained HTML report. Also the writer `evesim run --report` uses.
// Exit codes: 0 written, 2 bad input (one line naming the file and the field).
import { accessSync, constants as fsConstants, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { renderReport } from '../runner/report-table.js';
import type { RunSummary } from '../runner/summary-json.js';
import { renderHtmlReport } from '../runner/html-report/report-page.js';
import { loadChartLibrary } from '../runner/html-report/uplot-assets.js';
import { reportableSummaryProblem } from '../runner/html-report/summary-shape.js';

export interface ReportArgs {
  summary: string;
  html?: string;
}

export interface ReportIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

const STD_IO: ReportIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

export function runReport(a: ReportArgs, io: ReportIo = STD_IO): number {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(a.summary, 'utf8')) as unknown;
  } catch (e) {
    const why = e instanceof SyntaxError ? `not JSON: ${e.message}` : `cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
    io.err(`evesim report: ${a.summary}: ${why}\n`);
    return 2;
  }
  const problem = reportableSummaryProblem(data);
  if (problem) {
    io.err(`evesim report: ${a.summary}: not an evesim run summary: ${problem}\n`);
    return 2;
  }
  const summary = data as RunSummary;
  if (a.html === undefined) {
    io.out(renderReport(summary));
    return 0;
  }
  const fileProblem = htmlReportFileProblem(a.html);
  if (fileProblem) {
    io.err(`evesim report: --html ${fileProblem}\n`);
    return 2;
  }
  try {
    writeHtmlReport(a.html, summary);
  } catch (e) {
    io.err(`evesim report: --html ${a.html}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
    return 2;
  }
  io.out(`evesim report: wrote ${a.html} (${summary.series ? `${summary.series.intervals.length} intervals charted` : 'no time series in the summary'})\n`);
  return 0;
}

/** Renders the HTML report of `summary` and writes it to `file`; throws what the write throws. */
export function writeHtmlReport(file: string, summary: RunSummary): void {
  writeFileSync(file, renderHtmlReport(summary, loadChartLibrary()));
}

/** Why the report cannot be written to `file` (its directory is missing or read-only), checked before a run starts. */
export function htmlReportFileProblem(file: string): string | undefined {
  const dir = dirname(resolve(file));
  try {
    accessSync(dir, fsConstants.W_OK);
    return undefined;
  } catch {
    return `${file}: directory ${dir} does not exist or is not writable`;
  }
}
