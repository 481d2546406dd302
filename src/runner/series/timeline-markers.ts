// Markers on the series for the scenario's timeline actions, at the instant each is due (when the
// controller, the workers or an LPS apply it): one 'action' event each, labelled with the action and
// its fields as the scenario wrote them ('config-item group=edge key=timer.config.interval value=60').

import type { TimelineAction } from '../../scenario/scenario-types.js';
import type { SeriesRecorder } from './series-recorder.js';

export function timelineLabel(action: TimelineAction): string {
  const parts: string[] = [action.action];
  for (const [k, v] of Object.entries(action)) {
    if (k === 'action' || k === 'atMs' || v === undefined) continue;
    parts.push(`${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  return parts.join(' ');
}

/** One timer per action; the caller clears them when the run phase ends before they are due. */
export function scheduleTimelineMarkers(timeline: readonly TimelineAction[], startAtMs: number, recorder: SeriesRecorder, now: () => number = Date.now): NodeJS.Timeout[] {
  return timeline.map((action) =>
    setTimeout(() => recorder.event(startAtMs + action.atMs, 'action', timelineLabel(action)), Math.max(0, startAtMs + action.atMs - now())),
  );
}
