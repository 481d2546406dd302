// What runScenario is given and gives back, and the embedded controller it may be handed. Apart
// from run-scenario.ts (which re-exports them) so that the phases and the run context, which the
// capabilities see, can name them without importing the phases back.

import type { ControllerAdminApi } from './controller-admin-api.js';
import type { StartEmbeddedLps } from './lps/lps-sites.js';
import type { FleetShard } from '../fleet/fleet-shard.js';
import type { FleetAggregate } from './aggregate.js';
import type { ShardSummary } from './shard-summary.js';
import type { RunSummary } from './summary-json.js';

export interface RunScenarioOptions {
  scenarioFile: string;
  /** Scale the fleet to this many devices. */
  devices?: number;
  durationMs?: number;
  /** `--arrival-over`: devices come online spread evenly over this window, ms. */
  arrivalOverMs?: number;
  /** --graceful-stop: how long devices may deliver their queues after the duration, ms. */
  gracefulStopMs?: number;
  seed?: number;
  /** `--fault` flags, parsed (src/faults/fault-flags.ts): appended to the scenario's timeline. */
  faults?: import('../faults/fault-spec.js').FaultAction[];
  /** Worker threads; default one per core (never more than devices). */
  workers?: number;
  /** Serve Prometheus metrics on HOST:PORT/metrics during the run. */
  metricsPort?: number;
  /** --metrics-host: the address the metrics server listens on; default 127.0.0.1 (0.0.0.0 in a pod). */
  metricsHost?: string;
  /** --metrics-linger: how long /metrics stays up after the summary, ms; default 0 here (the CLI's
   *  default is DEFAULT_METRICS_LINGER_MS). Ctrl-C ends it early. */
  metricsLingerMs?: number;
  /** Ends the metrics linger early (tests: once Prometheus has scraped the final figures). */
  endMetricsLinger?: AbortSignal;
  summaryJson?: string;
  /** --out FORMAT=TARGET (series/out-spec.ts): where the time series is streamed while the run goes. */
  outputs?: import('./series/out-spec.js').OutSpec[];
  /** --junit: the thresholds as JUnit XML (runner/junit.ts) to FILE, for CI. */
  junit?: string;
  /** --record: every exchange goes to DIR/worker-<n>/. */
  recordDir?: string;
  /** --max-in-flight: most controller requests one worker has handed on at once; default
   *  MAX_IN_FLIGHT_DEFAULT (transport/in-flight-gate.ts). */
  maxInFlight?: number;
  /** --tick: device wake-ups are due on a grid of this step, ms (fleet/heap-scheduler.ts); absent
   *  or 0: at their exact times. */
  tickMs?: number;
  /** --log-memory: compressed log bytes each device holds in memory before its waiting files go to
   *  the worker's spill file under the state directory (absent: 32 KiB). */
  logMemoryBytes?: number;
  /** Fleet state (identities, controller PKI); default .evesim-state in the current directory. */
  stateDir?: string;
  /** A real controller instead of the scenario's target. */
  controller?: { url: string; /** API v1 base URL, when not `url`. */ v1Url?: string; rootCaFile?: string; onboardCertFile: string; onboardKeyFile: string; insecure: boolean };
  /** --target embedded: the embedded controller whatever the scenario's target (its files unchecked). */
  targetEmbedded?: true;
  /** --shard i/n: run only the fleet indices ≡ i (mod n) of the fleet (after `devices`); default 0/1. */
  shard?: FleetShard;
  /** --start-at: the common start instant of the run, epoch ms (every shard given the same one
   *  starts together); default: once the workers are ready. More than START_AT_TOLERANCE_MS in the
   *  past when the run is prepared is bad input. */
  startAtMs?: number;
  /** --fleet-id: enters the serials (identity/fleet-id.ts); default: the state directory's own,
   *  made once and kept in <stateDir>/fleet-id. */
  fleetId?: string;
  /** --dry-run: check the inputs, print this shard's fleet plan and stop (no identities, servers or network). */
  dryRun?: boolean;
  /** Wall clock, epoch ms (tests); default Date.now. */
  now?: () => number;
  /** --controller-admin: the admin API of the --controller when it is an `evesim controller`,
   *  shared by every shard of the fleet: each shard adds its devices to the controller's fleet
   *  (PATCH /admin/fleet) and shard 0 alone applies the controller-side timeline actions. The
   *  caller opens and closes it. */
  controllerAdmin?: ControllerAdminApi;
  /** No live progress line. */
  quiet?: boolean;
  /** Starts the embedded controller (the CLI passes startControllerInThread); see defaultEmbeddedController. */
  startEmbeddedController?: StartEmbeddedController;
  /** Starts a site's embedded LPS (the CLI passes startLpsInThread); default: a lazy import of it. */
  startLps?: StartEmbeddedLps;
  /** Where the report and messages go (tests); default process.stdout / process.stderr. */
  out?: (text: string) => void;
  err?: (text: string) => void;
  /** The compiled worker file (tests); default: found next to the compiled runner (worker-file.ts). */
  workerFile?: string;
  /** Ends the run phase early (tests: once what they wait for has happened, with the scenario's
   *  duration as an upper bound), as if the duration were over: every worker's devices drain
   *  (gracefulStop) and the summary follows, its durationMs the run phase as it really lasted. A
   *  signal that fired before the run started ends the run phase right at the start. */
  endRunPhase?: AbortSignal;
  /** Called on the main thread after each worker delta (about one a second per worker while
   *  running and draining) is merged into the fleet aggregate, with that aggregate (read it, do
   *  not change it): e.g. a test fires endRunPhase once every device onboarded
   *  (aggregate.onboardedEver()) and each endpoint it needs was used (aggregate.endpoints). An
   *  exception it throws is reported on `err` and otherwise ignored. */
  onProgress?: (aggregate: FleetAggregate) => void;
  /** Called once with the result as soon as the summary exists, before /metrics lingers
   *  (--metrics-linger): outputs made from the summary (the HTML report) are written then, not
   *  after the linger. A result whose exitCode it raises is what runScenario returns. */
  onSummary?: (result: RunScenarioResult) => void;
}

export interface RunScenarioResult {
  exitCode: number;
  /** Absent when the run never started (bad input, --dry-run). */
  summary?: RunSummary & ShardSummary;
}

/** What the runner needs of a started embedded controller (startControllerInThread's result fits). */
export interface EmbeddedController {
  url: string;
  adminUrl: string;
  /** Controller API v1 (mutual TLS) base URL, when the controller serves it. */
  v1Url?: string;
  rootCaPem: string;
  admin: ControllerAdminApi;
  /** Requests answered and busy time (ms) so far, read each second for the run's time series. */
  load?(): { requests: number; activeMs: number };
  stop(): Promise<void>;
}

/** The subset of the controller's options the runner sets. */
export interface EmbeddedControllerOptions {
  stateDir: string;
  onboardingCaPems: string[];
}

export type StartEmbeddedController = (opts: EmbeddedControllerOptions) => Promise<EmbeddedController>;
