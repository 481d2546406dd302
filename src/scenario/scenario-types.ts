// The validated, normalised form of a scenario file (YAML in scenarios/). Durations are
// milliseconds, rates per second. The loader (src/scenario/load-scenario.ts) turns YAML into this
// and names file, line and field for every error. Plain data: it crosses thread boundaries.

export interface Scenario {
  /** Where it came from, for messages. */
  file: string;
  name: string;
  description?: string;
  /** Seeds identities, schedules and faults: the same seed rebuilds the same fleet and timing. */
  seed: number;
  /** Total run time, ms, after which devices stop and the report is printed. */
  durationMs: number;
  target: TargetSpec;
  groups: GroupSpec[];
  /** Devices come online according to the arrival model (an onboarding storm is a high rate). */
  arrival: ArrivalSpec;
  /** Sorted by atMs (file order among equal times). */
  timeline: TimelineAction[];
  thresholds: ThresholdSpec[];
  /** Things worth telling the user that do not stop the run (unknown config item, TLS verification
   *  off, timeline action dropped by --duration), formatted `file:line:col: path: message`. */
  warnings?: string[];
}

export type TargetSpec =
  | { kind: 'embedded' }
  | {
      kind: 'external';
      /** e.g. https://127.0.0.1:8443 */
      url: string;
      rootCaFile: string;
      onboardCertFile: string;
      onboardKeyFile: string;
      /** Turning TLS verification off is explicit and prints a warning. */
      insecureSkipVerify: boolean;
    };

export interface GroupSpec {
  name: string;
  count: number;
  api: 'v2';
  eveVersion: string;
  /** Skip /register: the embedded controller pre-registers these device certificates. */
  preRegistered: boolean;
  logFormat: 'newlogs' | 'legacy';
  /** Device log lines per second. */
  logLinesPerSec: number;
  flowlogIntervalMs: number;
  apps: AppTemplate[];
  /** ConfigItems the controller serves to this group (EVE keys, decimal strings). */
  configItems: Record<string, string>;
  /** global_profile served in the config. */
  globalProfile: string;
  hardware: { ncpu: number; memoryMB: number; storageMB: number; model: string; manufacturer: string };
  /** Milliseconds per ZSwState step on an app's way to RUNNING. */
  appStepMs: number;
}

export interface AppTemplate {
  name: string;
  activate: boolean;
  /** profile_list of the AppInstanceConfig. */
  profiles: string[];
  logLinesPerSec: number;
  flowsPerMessage: number;
}

export interface ArrivalSpec {
  /** 'all-at-once': every device due at t=0 (a true storm); 'uniform': evenly spaced at `ratePerSec`;
   *  'poisson': exponential gaps with mean 1/ratePerSec (seeded). */
  model: 'all-at-once' | 'uniform' | 'poisson';
  /** Devices per second; 0 for 'all-at-once'. When the file gives `over: 10s` it is total devices / 10. */
  ratePerSec: number;
}

export type TimelineAction =
  | { atMs: number; action: 'maintenance'; enabled: boolean }
  | { atMs: number; action: 'config-item'; group?: string; key: string; value: string }
  | { atMs: number; action: 'app-activate'; group?: string; app: string; activate: boolean }
  | { atMs: number; action: 'reboot'; group?: string }
  | { atMs: number; action: 'controller-epoch'; group?: string };

/** k6-style threshold, e.g. `config.p99 < 200ms`, `errors.rate < 0.1%`, `onboarded.ratio == 1`. */
export interface ThresholdSpec {
  /** The text as written, for the report. */
  source: string;
  /** endpoint key, or 'all' for every endpoint, or 'devices' / 'onboarded' / 'errors' / 'undelivered' / 'findings' */
  subject: string;
  /** p50 | p90 | p99 | max | count | rate | ratio | total */
  stat: string;
  op: '<' | '<=' | '>' | '>=' | '==';
  /** Normalised value: ms for latencies, a fraction for rates/ratios (0.1% → 0.001), a number otherwise. */
  value: number;
}
