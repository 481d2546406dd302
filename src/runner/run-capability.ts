// What a capability (local profile servers, attestation, controller API v1, ...) adds to a run, so
// the core (run phases, thresholds, report) iterates a registry (capabilities.ts) instead of naming
// each one. Every part is optional. Its scenario side is src/scenario/scenario-capability.ts.

import type { Registry } from 'prom-client';
import type { ReadyMessage } from '../fleet/worker-protocol.js';
import type { AttestationSpec, GroupSpec } from '../scenario/scenario-types.js';
import type { ControllerAdminApi } from './controller-admin-api.js';
import type { RunContext } from './phases/run-context.js';
import type { MeasuredRun, RunSummary } from './summary-json.js';
import type { ThresholdMeasure } from './threshold-measure.js';
export type { ThresholdMeasure };

/** What the embedded controller is told about the fleet besides its devices. */
export interface ControllerFleet {
  groups: readonly GroupSpec[];
  attestation?: AttestationSpec;
}

/** A threshold's measured value, or why it cannot be measured (which fails it). */

export interface RunCapability {
  readonly name: string;
  /** Endpoint keys of the requests it adds (lps.radio, ...): judged like controller endpoints. */
  readonly endpointKeys?: readonly string[];
  /** Timeline actions it applies itself; the embedded controller's admin API gets none of them. */
  readonly timelineActions?: readonly string[];
  /** The value of a threshold on one of its subjects; undefined when the subject is not its own. */
  measureThreshold?(subject: string, stat: string, run: MeasuredRun): ThresholdMeasure | undefined;
  /** Lines on what the workers prepared for it (e.g. TPM keys), printed once every worker is ready. */
  preparedLines?(ready: readonly ReadyMessage[]): string[];
  /** Report lines right after the endpoint table (a blank line comes before them). */
  reportAfterEndpoints?(summary: RunSummary): string[];
  /** Report lines right after devices, undelivered messages and findings. */
  reportAfterFacts?(summary: RunSummary): string[];
  /**
   * Starts what it needs for this run (servers in threads, monitors), once the controller is up;
   * adds its own cleanups to ctx.cleanups. Undefined when the run has no use for it.
   */
  start?(ctx: RunContext, admin: ControllerAdminApi | undefined): Promise<RunningCapability | undefined>;
}

/** A capability while the run lasts; each hook is called by the phase named. */
export interface RunningCapability {
  /** start-workers: the fleet as the controller is told it (groups with their LPS address, PCR templates). */
  fleet?(fleet: ControllerFleet): ControllerFleet;
  /** start-servers: its Prometheus metrics, next to the request metrics. */
  registerMetrics?(registry: Registry): void;
  /** start-workers: the controller knows the fleet; the workers wait for 'go'. */
  fleetPushed?(): void;
  /** run-timeline: schedules its timeline actions from the common start (cleared at the end). */
  scheduleTimeline?(startAtMs: number): NodeJS.Timeout[];
  /** summarise: adds its section to the measured run, before thresholds are judged. */
  summarise?(measured: MeasuredRun): Promise<void>;
}
