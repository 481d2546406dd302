// A threshold's window: `config.p99 < 200ms after 2m` judges only the intervals of the run phase
// that start at or after 2 m; `… during 1m..3m` those that start from 1 m up to (not including)
// 3 m. The run's series (src/runner/series/) measures them from its per-interval figures, merging
// histograms rather than averaging percentiles. Only what the series records interval by interval
// can have a window: requests (endpoints and all), errors, findings and the workers' loop lag.

import { ENDPOINT_KEYS } from '../protocol/endpoints.js';
import { parseDuration } from './parse-duration.js';
import type { ThresholdWindow } from './scenario-types.js';

const AFTER = /\s+after\s+(\S+)\s*$/;
const DURING = /\s+during\s+(\S+?)\s*\.\.\s*(\S+)\s*$/;

/** The expression without its window, and the window; throws when the window is malformed. */
export function splitWindow(source: string): { text: string; window?: ThresholdWindow } {
  const during = DURING.exec(source);
  if (during) {
    const fromMs = windowDuration(during[1]!, source);
    const toMs = windowDuration(during[2]!, source);
    if (toMs <= fromMs) throw new Error(`"${source.trim()}": the window "during ${during[1]}..${during[2]}" must end after it starts`);
    return { text: source.slice(0, during.index), window: { fromMs, toMs } };
  }
  if (/\s+during\s/.test(source)) {
    throw new Error(`"${source.trim()}": a window is written "during FROM..TO", e.g. "during 1m..3m"`);
  }
  const after = AFTER.exec(source);
  if (after) return { text: source.slice(0, after.index), window: { fromMs: windowDuration(after[1]!, source) } };
  if (/\s+after(\s|$)/.test(source)) throw new Error(`"${source.trim()}": a window is written "after DURATION", e.g. "after 2m"`);
  return { text: source };
}

function windowDuration(text: string, source: string): number {
  try {
    return parseDuration(text);
  } catch (e) {
    throw new Error(`"${source.trim()}": window: ${(e as Error).message}`);
  }
}

/** Subjects the series measures interval by interval (endpoint keys, lps.* endpoints, all, errors, findings, the workers' loop lag). */
export function isSeriesSubject(subject: string): boolean {
  return subject === 'all' || subject === 'loop_lag' || subject === 'errors' || subject === 'findings' || subject.startsWith('lps.') || (ENDPOINT_KEYS as readonly string[]).includes(subject);
}

export function describeWindow(w: ThresholdWindow): string {
  return w.toMs === undefined ? `after ${formatMs(w.fromMs)}` : `during ${formatMs(w.fromMs)}..${formatMs(w.toMs)}`;
}

function formatMs(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
