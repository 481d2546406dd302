// How `evesim run --help` groups its flags, so the outputs a CI job wants (summary JSON, JUnit,
// recordings, metrics) are found together, and the examples it prints. yargs prints the groups in
// the order they are declared; flags in no group land under "Options:".

import type { Argv } from 'yargs';

export const RUN_OPTION_GROUPS: readonly { title: string; flags: readonly string[] }[] = [
  { title: 'Target (default: the scenario\'s own):', flags: ['target', 'controller', 'controller-admin', 'root-ca', 'onboard-cert', 'onboard-key', 'insecure-skip-verify'] },
  { title: 'Fleet and timing overrides:', flags: ['devices', 'duration', 'arrival-over', 'graceful-stop', 'seed', 'workers', 'max-in-flight', 'tick', 'log-memory', 'shard', 'start-at', 'fleet-id', 'state-dir'] },
  { title: 'Outputs:', flags: ['summary-json', 'junit', 'report', 'out', 'record', 'metrics-port', 'metrics-host', 'metrics-linger'] },
];

export const RUN_EXAMPLES: [string, string][] = [
  ['$0 run scenarios/smoke.yaml', 'the scenario against its target (the embedded controller unless it names one)'],
  [
    '$0 run scenarios/smoke.yaml --quiet --summary-json out/summary.json --junit out/junit.xml',
    'in CI: the summary as JSON and one JUnit test case per threshold; exit 0 passed, 1 a threshold failed, 2 bad input',
  ],
  ['$0 run scenarios/smoke.yaml --metrics-port 9464 --record out/exchanges', 'Prometheus metrics on 127.0.0.1:9464/metrics, every exchange recorded'],
  ['$0 run scenarios/smoke.yaml --report out/report.html --out jsonl=out/series.jsonl', 'an HTML report to open or send, and the time series streamed while the run goes'],
  ['$0 run scenarios/smoke.yaml --dry-run', 'check the scenario and flags, print the fleet plan, start nothing'],
];

/** The run command's flags in their help groups (yargs remembers a group declared before its flags). */
export function groupRunOptions<T>(y: Argv<T>): Argv<T> {
  return RUN_OPTION_GROUPS.reduce((acc, g) => acc.group([...g.flags], g.title), y);
}
