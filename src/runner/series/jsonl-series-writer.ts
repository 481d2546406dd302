// `--out jsonl=FILE`: the run's time series as one JSON object per line, written while the run goes
// (each line one write to the file descriptor, so `tail -f` sees whole lines as they come):
//   {"type":"start","scenario":…,"seed":…,"version":…,"startedAt":…,"intervalMs":1000}
//   {"type":"interval",…RunInterval}            one per closed 1 s interval, the drain's included
//   {"type":"end","exitCode":…,"durationMs":…,"intervals":…,"aborted"?:…}
// Intervals are always of the base length here: merging neighbours is for the summary's memory,
// the file keeps every interval.

import { closeSync, openSync, writeSync } from 'node:fs';
import type { RunInterval } from '../run-series.js';

export interface SeriesStartLine {
  type: 'start';
  scenario: string;
  seed: number;
  version: string;
  /** ISO 8601 start instant: interval tMs counts from here. */
  startedAt: string;
  intervalMs: number;
  /** `--shard i/n` runs: which shard wrote the file. */
  shard?: { index: number; count: number };
}

export interface SeriesEndLine {
  type: 'end';
  exitCode: number;
  /** The run phase as it lasted, ms (the drain follows it). */
  durationMs: number;
  /** Interval lines written. */
  intervals: number;
  /** The threshold that ended the run early (abortOnFail), and when. */
  aborted?: { threshold: string; tMs: number };
}

export class JsonlSeriesWriter {
  private fd: number | undefined;
  private written = 0;

  constructor(readonly file: string, start: Omit<SeriesStartLine, 'type'>) {
    this.fd = openSync(file, 'w');
    this.line({ type: 'start', ...start });
  }

  interval(i: RunInterval): void {
    this.written++;
    this.line({ type: 'interval', ...i });
  }

  end(e: Omit<SeriesEndLine, 'type' | 'intervals'>): void {
    this.line({ type: 'end', ...e, intervals: this.written });
    this.close();
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  private line(o: object): void {
    if (this.fd === undefined) return;
    writeSync(this.fd, `${JSON.stringify(o)}\n`);
  }
}
