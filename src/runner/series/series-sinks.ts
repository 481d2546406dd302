// Where `--out FORMAT=TARGET` sends the series: one sink per format (out-spec.ts names them). A
// sink gets the start header, every closed interval and the end, and must never hold the run up.

import type { RunInterval } from '../run-series.js';
import { JsonlSeriesWriter, type SeriesEndLine, type SeriesStartLine } from './jsonl-series-writer.js';
import type { OutSpec } from './out-spec.js';

export interface SeriesSink {
  interval(i: RunInterval): void;
  end(e: Omit<SeriesEndLine, 'type' | 'intervals'>): void;
  /** Releases the target without an end (the run failed). */
  close(): void;
}

export function openSeriesSink(spec: OutSpec, start: Omit<SeriesStartLine, 'type'>): SeriesSink {
  switch (spec.format) {
    case 'jsonl':
      return new JsonlSeriesWriter(spec.target, start);
  }
}
