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
  /** Total run time, ms, after which devices drain and stop and the report is printed. */
  durationMs: number;
  /**
   * Graceful stop after durationMs (k6's gracefulStop): how long devices may take to deliver what
   * they still have queued before they are stopped and the rest counted undelivered. 0 = none.
   * The loader always sets it (default 15 s); absent in hand-built scenarios means the default.
   */
  gracefulStopMs?: number;
  target: TargetSpec;
  groups: GroupSpec[];
  /** Devices come online according to the arrival model (an onboarding storm is a high rate). */
  arrival: ArrivalSpec;
  /** Sorted by atMs (file order among equal times). */
  timeline: TimelineAction[];
  thresholds: ThresholdSpec[];
  /** What the embedded controller holds TPM quotes to (absent: no PCR templates). */
  attestation?: AttestationSpec;
  /** Local profile servers, one embedded LPS per site (lps-scenario-types.ts). */
  sites?: import('./lps/lps-scenario-types.js').SiteSpec[];
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
      /** Absent only with insecureSkipVerify (`--insecure-skip-verify` without `--root-ca`). */
      rootCaFile?: string;
      onboardCertFile: string;
      onboardKeyFile: string;
      /** Controller API v1 (mutual TLS) base URL when it is not `url` (Adam serves both on one port). */
      v1Url?: string;
      /** Turning TLS verification off is explicit and prints a warning. */
      insecureSkipVerify: boolean;
    };

export interface GroupSpec {
  name: string;
  count: number;
  /** Controller API of the group's devices: v2, or the older mutual-TLS v1 (api-scenario.ts). */
  api: 'v1' | 'v2';
  /** One keep-alive connection per device, or one pool shared by the worker's devices (v2 only). Absent: shared for v2, per-device for v1. */
  connection?: 'per-device' | 'shared';
  /** API v1: POST /config (default) or the deprecated GET /config. */
  v1ConfigMethod?: 'POST' | 'GET';
  eveVersion: string;
  /** Skip /register: the embedded controller pre-registers these device certificates. */
  preRegistered: boolean;
  logFormat: 'newlogs' | 'legacy';
  /** Device log lines per second. */
  logLinesPerSec: number;
  /** EVE's quota for the log files a device keeps until upload, MB of 1,000,000 bytes (absent: EVE's default, 2048). */
  logQuotaMB?: number;
  flowlogIntervalMs: number;
  apps: AppTemplate[];
  /** ConfigItems the controller serves to this group (EVE keys, decimal strings). */
  configItems: Record<string, string>;
  /** global_profile served in the config. */
  globalProfile: string;
  hardware: { ncpu: number; memoryMB: number; storageMB: number; model: string; manufacturer: string };
  /** Milliseconds per ZSwState step on an app's way to RUNNING. */
  appStepMs: number;
  /** BIOS vendor-version-date (ATTEST_VERSION_TYPE_FIRMWARE), measured into PCR 0 by a TPM device. */
  firmwareVersion?: string;
  /** Share of the group's devices with a TPM 2.0, 0..1 (absent: none). See src/scenario/attestation/tpm-plan.ts. */
  tpmShare?: number;
  /** Devices with a tampered boot (another kernel measured into PCR 9), among those with a TPM. */
  tampered?: { count: number } | { share: number };
  /** GNSS receiver model of the group's devices (absent: none). */
  gnss?: import('./lps/lps-scenario-types.js').GnssSpec;
  /** Cellular modems of the group's devices (absent: one LTE modem, seeded). */
  cellular?: import('./lps/lps-scenario-types.js').CellularSpec;
  /** Set by the runner for groups a site serves: where the controller points them. */
  lps?: import('./lps/lps-scenario-types.js').GroupLpsSpec;
}

/** PCR templates a quote must match (by the EVE and firmware versions it reports). */
export interface AttestationSpec {
  templates: PcrTemplateSpec[];
}

export interface PcrTemplateSpec {
  /** EVE version the template is for, or '*' for any. */
  eveVersion: string;
  /** Firmware version the template is for, or '*' for any. */
  firmwareVersion: string;
  /** Expected SHA-256 PCR values (index → 64 hex digits), or 'reference': PCR 0–15 of an untampered
   *  boot of exactly this build as evesim's software TPM measures it. */
  pcrs: Record<string, string> | 'reference';
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
  | { atMs: number; action: 'controller-epoch'; group?: string }
  | { atMs: number; action: 'power-on'; group?: string }
  | import('./lps/lps-scenario-types.js').LpsTimelineAction
  | import('../faults/fault-spec.js').FaultAction;

/** k6-style threshold, e.g. `config.p99 < 200ms`, `errors.rate < 0.1%`, `onboarded.ratio == 1`. */
export interface ThresholdSpec {
  /** The text as written, for the report. */
  source: string;
  /** endpoint key, or 'all' for every endpoint, or 'devices' / 'onboarded' / 'errors' / 'undelivered' / 'findings' */
  subject: string;
  /** p50 | p90 | p99 | max | count | rate | ratio | total */
  stat: string;
  op: '<' | '<=' | '>' | '>=' | '==';
  /** Normalised value: ms for latencies, a fraction for rates/ratios (0.1% → 0.001), a number otherwise;
   *  with `perDevice`, the number per device of the basis (`90% of devices` → 0.9). */
  value: number;
  /** `{api:v1}` tag: judged on that controller API's figures only (api-thresholds.ts). */
  api?: 'v1' | 'v2';
  /** `… per device`, `…% of devices` (threshold-basis.ts): `value` is then per device of the basis
   *  and the bound is value × the basis's devices. Counts only. */
  perDevice?: PerDeviceBasis;
  /** Written as `{ threshold: …, required: true }`: a threshold that cannot be checked against this
   *  target (a real controller has no attestation or LPS figures) fails instead of being "not checked". */
  required?: boolean;
  /** `… after 2m`, `… during 1m..3m` (threshold-window.ts): judged over those intervals of the run phase only. */
  window?: ThresholdWindow;
  /** Written as `{ threshold: …, abortOnFail: true }`: judged at each closed interval while the run
   *  goes, and a failure ends the run phase early (the drain and the report follow). */
  abortOnFail?: boolean;
  /** `delayAbortEval: 30s`: no abort judgement before this much of the run phase has passed, ms. */
  delayAbortEvalMs?: number;
}

/** The part of the run phase a threshold is judged over: intervals starting in [fromMs, toMs), ms since the start. */
export interface ThresholdWindow {
  fromMs: number;
  /** Absent: to the end of the run phase. */
  toMs?: number;
}

/** What follows "per" in a per-device threshold: every device, or a TPM category (threshold-basis.ts). */
export type DeviceBasisKind =
  | 'device'
  | 'TPM device'
  | 'device without TPM'
  | 'tampered device'
  | 'untampered device'
  | 'untampered TPM device';

/** Which devices a per-device threshold counts (after `--devices`, in the API of its tag if any). */
export interface PerDeviceBasis {
  kind: DeviceBasisKind;
  /** `… of <group>`: only that group's devices. */
  group?: string;
  /** How many devices the basis holds in this run; set by the loader once groups are scaled. */
  devices?: number;
}
