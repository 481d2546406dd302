// Markers on the series for the scenario's timeline actions, at the instant each is due (when the
// controller, the workers or an LPS apply it): one 'action' event each, labelled with the action and
// its fields as the scenario wrote them ('config-item group=edge key=timer.config.interval value=60').

import type { TimelineAction } from '../../scenario/scenario-types.js';
import { isFaultAction } from '../../faults/fault-spec.js';
import type { RunEvent } from '../run-series.js';
import type { SeriesRecorder } from './series-recorder.js';

export function timelineLabel(action: TimelineAction): string {
  const parts: string[] = [action.action];
  for (const [k, v] of Object.entries(action)) {
    if (k === 'action' || k === 'atMs' || v === undefined) continue;
    parts.push(`${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  return parts.join(' ');
}

/**
 * One timer per action, and per fault window edge (`faultEvents`: fault-start and fault-end, from
 * the fault plan, which also knows the devices each hits) in place of the fault actions themselves;
 * the caller clears them when the run phase ends before they are due.
 */
export function scheduleTimelineMarkers(
  timeline: readonly TimelineAction[],
  startAtMs: number,
  recorder: SeriesRecorder,
  faultEvents: readonly RunEvent[] = [],
  now: () => number = Date.now,
): NodeJS.Timeout[] {
  const events: RunEvent[] = [
    ...timeline.filter((a) => !isFaultAction(a)).map((a): RunEvent => ({ tMs: a.atMs, kind: 'action', label: timelineLabel(a) })),
    ...faultEvents,
  ];
  return events.map((e) => setTimeout(() => recorder.event(startAtMs + e.tMs, e.kind, e.label), Math.max(0, startAtMs + e.tMs - now())));
}
