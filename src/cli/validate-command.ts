// `evesim validate FILE`: load a scenario, print what it describes, or every error with its place.
import { loadScenario, totalDevices } from '../scenario/load-scenario.js';
import { ScenarioError } from '../scenario/scenario-error.js';
import { formatDuration } from '../scenario/parse-duration.js';

export function runValidate(file: string): number {
  try {
    const s = loadScenario(file);
    for (const w of s.warnings ?? []) console.error(`warning: ${w}`);
    const target = s.target.kind === 'embedded' ? 'embedded controller' : s.target.url;
    console.log(
      `${file}: ok — "${s.name}", seed ${s.seed}, ${totalDevices(s)} devices in ${s.groups.length} group(s), ` +
        `${formatDuration(s.durationMs)}, target ${target}, ${s.timeline.length} timeline action(s), ` +
        `${s.thresholds.length} threshold(s)`,
    );
    return 0;
  } catch (err) {
    if (err instanceof ScenarioError) {
      console.error(err.message);
      return 2;
    }
    throw err;
  }
}
